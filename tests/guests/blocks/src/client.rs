//! Scenarios of contract 1.1's client calls: a delete under preconditions, and a
//! ServiceAccount token (a create on the `token` subresource).

use std::time::Duration;

use serde_json::{Map, Value, json};
use wasm_operator_sdk::k8s_openapi::api::core::v1::{ConfigMap, Secret};
use wasm_operator_sdk::token::request_token;
use wasm_operator_sdk::{
    Cluster, ClusterExt, DeleteOptions, ObjectRef, Preconditions, Propagation, ReadFrom,
};

use crate::error::ScenarioError;
use crate::scenario::Scenario;
use crate::workloads::outcome;

/// Deletes ConfigMap `params.name` (read past the cache) under the preconditions
/// `params.uid` and `params.resourceVersion`, each the one read when not given:
/// `{"deleted": true}`, or the host's error.
pub fn delete_unchanged(
    cluster: &dyn Cluster,
    s: &Scenario,
) -> Result<Map<String, Value>, ScenarioError> {
    let name = s.text("name", &s.name)?;
    let target = ObjectRef::of::<ConfigMap>(s.ns(), &name);
    let current: Option<ConfigMap> = cluster.get_typed_from(s.ns(), &name, ReadFrom::Server)?;
    let meta = current.map(|c| c.metadata).unwrap_or_default();
    let options = DeleteOptions {
        propagation: Propagation::Background,
        preconditions: Preconditions {
            uid: s.opt_text("uid")?.or(meta.uid),
            resource_version: s.opt_text("resourceVersion")?.or(meta.resource_version),
        },
    };
    cluster
        .delete_with(&target, &options)
        .map_err(wasm_operator_sdk::Error::from)?;
    Ok(outcome([("deleted", json!(true))]))
}

/// Requests a token of ServiceAccount `params.serviceAccount` in `params.namespace` (the
/// scenario's by default) for `params.audience`, valid `params.expirySeconds` (600 by
/// default), and keeps it in the Secret `<name>-token` (key `token`), owned by the scenario:
/// `{"expires": <RFC 3339>}`. The token itself never goes into the status.
pub fn token(cluster: &dyn Cluster, s: &Scenario) -> Result<Map<String, Value>, ScenarioError> {
    let namespace = s.text("namespace", &s.namespace)?;
    let account = s.text("serviceAccount", "default")?;
    let audience = s.text("audience", "openbao")?;
    let seconds = s.int("expirySeconds")?.unwrap_or(600);
    let expiry = Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
    let token = request_token(cluster, &namespace, &account, &audience, expiry)?;
    cluster.apply_typed::<Secret>(
        s.ns(),
        &format!("{}-token", s.name),
        json!({"stringData": {"token": token.token}}),
        Some(&s.owner),
    )?;
    Ok(outcome([("expires", json!(token.expires.0.to_string()))]))
}
