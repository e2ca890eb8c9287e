//! Step 5 — Config (facts §2.7): the rendered configuration in the immutable ConfigMap
//! `{name}-config-{hash}`, whose name the later steps mount.
//!
//! First it records ExtraConfigHealthy (informational): False `OwnedKeysOverridden` with a
//! Warning event `ExtraConfigOwnedKeyOverride` when `spec.extraConfig` overrides an
//! operator-owned key (honoured all the same), else True `NoOwnedKeysOverridden`. A
//! failure to load the policy ConfigMap, render, or create the ConfigMap sets SecretsReady
//! False `ConfigError` with the error and ends the pass.

use k8s_openapi::api::core::v1::ConfigMap;
use wasm_operator_sdk::blocks::apply::is_controlled_by;
use wasm_operator_sdk::blocks::config::create_immutable_config_map;
use wasm_operator_sdk::blocks::policy::load_policy_from_config_map;
use wasm_operator_sdk::{ClusterExt, EventType};

use crate::admission::owned_keys_overridden;
use crate::conditions::{EXTRA_CONFIG_HEALTHY, SECRETS_READY};
use crate::config::{ConfigInputs, render};
use crate::error::Error;
use crate::federation::Federation;
use crate::pass::{Pass, StepResult};

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    record_extra_config_health(pass);
    match config_map(pass) {
        Ok(name) => {
            pass.config_map_name = Some(name);
            Ok(None)
        }
        Err(error) => {
            pass.condition(SECRETS_READY, false, "ConfigError", &error.to_string());
            Err(error)
        }
    }
}

fn record_extra_config_health(pass: &mut Pass<'_>) {
    let overridden = owned_keys_overridden(&pass.keystone.spec.extra_config);
    if overridden.is_empty() {
        pass.condition(
            EXTRA_CONFIG_HEALTHY,
            true,
            "NoOwnedKeysOverridden",
            "spec.extraConfig overrides no operator-owned key",
        );
        return;
    }
    let message = format!(
        "spec.extraConfig overrides operator-owned keys: {}",
        overridden.join(", ")
    );
    pass.condition(EXTRA_CONFIG_HEALTHY, false, "OwnedKeysOverridden", &message);
    pass.event(EventType::Warning, "ExtraConfigOwnedKeyOverride", &message);
}

/// Renders the configuration and makes sure its ConfigMap exists, controlled by this
/// Keystone; its name.
fn config_map(pass: &Pass<'_>) -> Result<String, Error> {
    let namespace = pass.namespace().to_owned();
    let policy_config_map = pass
        .keystone
        .spec
        .policy_overrides
        .as_ref()
        .and_then(|p| p.config_map_ref.as_ref())
        .map(|r| r.name.clone());
    let config_map_policy = match policy_config_map {
        Some(name) => Some(
            load_policy_from_config_map(pass.cluster, &namespace, &name)
                .map_err(|source| Error::Policy { source })?,
        ),
        None => None,
    };
    let inputs = ConfigInputs {
        config_map_policy,
        domains_projected: !pass.domains_secret_name.is_empty(),
        federation: pass.federation.as_ref().map(Federation::config_projection),
    };
    let rendered = render(&pass.keystone, &inputs).map_err(|source| Error::Render { source })?;
    let name = create_immutable_config_map(
        pass.cluster,
        &pass.owner,
        &rendered.base_name,
        &namespace,
        &rendered.data,
    )
    .map_err(|source| Error::ConfigMap {
        what: format!("creating the config ConfigMap {}", rendered.config_map_name),
        source,
    })?;
    let existing = pass
        .cluster
        .get_typed::<ConfigMap>(Some(&namespace), &name)
        .map_err(Error::cluster(format!(
            "reading ConfigMap {namespace}/{name}"
        )))?;
    if let Some(existing) = existing
        && !is_controlled_by(&existing.metadata, &pass.owner.uid)
    {
        return Err(Error::Spec(format!(
            "ConfigMap {namespace}/{name} exists and is not controlled by this Keystone"
        )));
    }
    Ok(name)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
