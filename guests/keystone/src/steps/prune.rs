//! Step 10 — prune (facts §2.17): bounds the history of the content-hashed children the
//! earlier steps create, once the Deployment has taken the current ones. No condition of
//! its own.
//!
//! | History | Base name | Kept besides the current one | Current |
//! |---|---|---|---|
//! | config ConfigMaps | `{name}-config` | the 3 newest | `pass.config_map_name` |
//! | domains Secrets | `{name}-domains` | the 3 newest; none when nothing is projected | `pass.domains_secret_name` |
//! | federation Secrets | `{name}-federation` | the 3 newest; none when no federation is projected | `pass.federation`'s `secret_name` |
//!
//! Only objects labelled `cobaltcore.c5c3.io/config-base=<base>`, named `<base>-*` and
//! controlled by this Keystone are candidates; "newest" is by creationTimestamp. The
//! selection and the deletes are the SDK's `prune_immutable_config_maps` and
//! `prune_immutable_secrets`.
//!
//! | Case | SecretsReady | Pass |
//! |---|---|---|
//! | pruned, or nothing to prune | untouched | goes on |
//! | a list or delete fails | False `ConfigError`, the error | error |
//!
use wasm_operator_sdk::blocks::config::{
    PruneError, prune_immutable_config_maps, prune_immutable_secrets,
};

use crate::conditions::SECRETS_READY;
use crate::error::Error;
use crate::federation;
use crate::pass::{Pass, StepResult};

/// How many superseded objects of each history are kept.
const RETAIN: usize = 3;

/// `{name}-config`, the base of the config ConfigMaps.
fn config_base(keystone: &str) -> String {
    format!("{keystone}-config")
}

/// `{name}-domains`, the base of the projected LDAP domains Secrets.
pub(crate) fn domains_base(keystone: &str) -> String {
    format!("{keystone}-domains")
}

/// Prunes the three histories, in table order; the first failure ends it.
fn prune(pass: &Pass<'_>, config_map: &str) -> Result<(), PruneError> {
    let (name, namespace) = (pass.name(), pass.namespace());
    prune_immutable_config_maps(
        pass.cluster,
        &pass.owner,
        &config_base(name),
        namespace,
        config_map,
        RETAIN,
    )?;
    let domains = &pass.domains_secret_name;
    let retain_domains = if domains.is_empty() { 0 } else { RETAIN };
    prune_immutable_secrets(
        pass.cluster,
        &pass.owner,
        &domains_base(name),
        namespace,
        domains,
        retain_domains,
    )?;
    let federation = pass
        .federation
        .as_ref()
        .map_or("", |f| f.secret_name.as_str());
    let retain_federation = if federation.is_empty() { 0 } else { RETAIN };
    prune_immutable_secrets(
        pass.cluster,
        &pass.owner,
        &federation::secret_base(name),
        namespace,
        federation,
        retain_federation,
    )
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let config_map = pass.config_map("prune")?;
    match prune(pass, &config_map) {
        Ok(()) => Ok(None),
        Err(source) => {
            let error = Error::Prune {
                what: "pruning superseded configuration".into(),
                source: Box::new(source),
            };
            pass.condition(SECRETS_READY, false, "ConfigError", &error.to_string());
            Err(error)
        }
    }
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;
