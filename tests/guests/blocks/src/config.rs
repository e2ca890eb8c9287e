//! Scenarios of the config and generic blocks: EnsureObject, CreateImmutableConfigMap with
//! PruneImmutableConfigMaps, and loading a policy from a ConfigMap.

use serde_json::{Map, Value, json};
use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::{apply, config, policy};
use wasm_operator_sdk::k8s_openapi::api::core::v1::ConfigMap;
use wasm_operator_sdk::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::error::ScenarioError;
use crate::scenario::Scenario;
use crate::workloads::outcome;

/// EnsureObject of ConfigMap `<name>-object` holding `params.data`. Outcome: `applied`.
pub fn object(cluster: &dyn Cluster, s: &Scenario) -> Result<Map<String, Value>, ScenarioError> {
    let desired = ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{}-object", s.name)),
            namespace: Some(s.namespace.clone()),
            ..Default::default()
        },
        data: Some(s.map("data")?),
        ..Default::default()
    };
    let stored = apply::ensure_object(cluster, &s.owner, &desired)?;
    Ok(outcome([("applied", json!(stored.metadata.name))]))
}

/// CreateImmutableConfigMap of base `<name>-config` holding `params.data`, then
/// PruneImmutableConfigMaps of that base keeping `params.retain` (default 3). Outcome:
/// `current`, the name of the ConfigMap of this pass.
pub fn immutable(cluster: &dyn Cluster, s: &Scenario) -> Result<Map<String, Value>, ScenarioError> {
    let base = format!("{}-config", s.name);
    let retain = s.int("retain")?.unwrap_or(3);
    let retain = usize::try_from(retain).map_err(|_| ScenarioError::Param {
        name: "retain",
        problem: "negative",
    })?;
    let data = s.map("data")?;
    let current =
        config::create_immutable_config_map(cluster, &s.owner, &base, &s.namespace, &data)?;
    config::prune_immutable_config_maps(cluster, &s.owner, &base, &s.namespace, &current, retain)?;
    Ok(outcome([("current", json!(current))]))
}

/// The policy of ConfigMap `params.configMap` merged with `params.rules`, validated and
/// rendered. Outcome: `policy` (the YAML) and `invalid` (the rule errors), or `notFound`.
pub fn policy(cluster: &dyn Cluster, s: &Scenario) -> Result<Map<String, Value>, ScenarioError> {
    let name = s.text("configMap", "policy")?;
    let external = match policy::load_policy_from_config_map(cluster, &s.namespace, &name) {
        Ok(rules) => rules,
        Err(e) if e.is_not_found() => return Ok(outcome([("notFound", json!(true))])),
        Err(e) => return Err(e.into()),
    };
    let merged = policy::merge_policies(&external, &s.map("rules")?);
    let invalid: Vec<String> = policy::validate_policy_rules(&merged, "spec.params.rules")
        .iter()
        .map(ToString::to_string)
        .collect();
    let rendered =
        policy::render_policy_yaml(&merged).map_err(|e| ScenarioError::Render(e.to_string()))?;
    Ok(outcome([
        ("policy", json!(rendered)),
        ("invalid", json!(invalid)),
    ]))
}
