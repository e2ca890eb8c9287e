//! Step 4 — IdentityBackends (facts §2.6): the LDAP domains and federation projected from
//! the KeystoneIdentityBackends that name this Keystone.
//!
//! The step never requeues and never fails for a waiting state (the Deployment and the
//! backends' own changes start the next pass); only reads fail it. A wait for the rollout
//! is judged on the server's copy of the Deployment, not the cache's.
//!
//! | Case | IdentityBackendsReady |
//! |---|---|
//! | no backend, the Deployment mounts none and has rolled out | True `IdentityBackendsNotRequired` |
//! | no backend, the Deployment still mounts a projection or is rolling out | False `WaitingForRollout` |
//! | backends | False `WaitingForBackends`, each named with why |
//!
//! The backends' rendering (LDAP domain configs, OIDC and SAML) comes with the
//! KeystoneIdentityBackend kind itself: until then a referencing backend is reported as
//! waiting, and nothing is projected (`domains_secret_name` stays empty).

use k8s_openapi::api::apps::v1::Deployment;
use serde_json::Value;
use wasm_operator_sdk::{ClusterExt, KindRef, ListOptions, ReadFrom};

use crate::conditions::IDENTITY_BACKENDS_READY;
use crate::error::Error;
use crate::pass::{Pass, StepResult};
use crate::steps::deployment::rolled_out;
use crate::types::API_VERSION;

/// The KeystoneIdentityBackend kind.
pub(crate) fn identity_backend_kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: "KeystoneIdentityBackend".into(),
        plural: "keystoneidentitybackends".into(),
        namespaced: true,
    }
}

/// Why the Deployment does not yet carry the projection `domains` / `federation` (the
/// Secret names the pods should mount; `None` for none), or `None` when it does and has
/// rolled out.
pub(crate) fn rollout_pending(
    deployment: Option<&Deployment>,
    domains: Option<&str>,
    federation: Option<&str>,
) -> Option<&'static str> {
    let Some(deployment) = deployment else {
        return Some("the Keystone Deployment does not exist yet");
    };
    let mounted = |volume: &str| -> Option<String> {
        deployment
            .spec
            .template
            .spec
            .as_ref()?
            .volumes
            .as_ref()?
            .iter()
            .find(|v| v.name == volume)
            .and_then(|v| v.secret.as_ref())
            .and_then(|s| s.secret_name.clone())
    };
    if mounted("domains").as_deref() != domains {
        return Some("the domains projection has not reached the Deployment yet");
    }
    if mounted("federation-proxy-config").as_deref() != federation {
        return Some("the federation projection has not reached the Deployment yet");
    }
    if !rolled_out(deployment) {
        return Some("the Keystone Deployment is still rolling out");
    }
    None
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let kind = identity_backend_kind();
    let served = pass.cluster.served(&kind).map_err(|source| Error::Probe {
        kind: "KeystoneIdentityBackend",
        source,
    })?;
    let mut backends: Vec<String> = Vec::new();
    if served {
        let listed = pass
            .cluster
            .list(&kind, Some(pass.namespace()), &ListOptions::default())
            .map_err(|e| {
                Error::cluster(format!(
                    "listing KeystoneIdentityBackends in {}",
                    pass.namespace()
                ))(e.into())
            })?;
        backends = listed
            .iter()
            .filter(|b| {
                b.pointer("/spec/keystoneRef/name").and_then(Value::as_str) == Some(pass.name())
            })
            .filter(|b| b.pointer("/metadata/deletionTimestamp").is_none())
            .filter_map(|b| {
                b.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect();
        backends.sort();
    }
    pass.domains_secret_name.clear();
    if !backends.is_empty() {
        let entries: Vec<String> = backends
            .iter()
            .map(|b| format!("{b} (this version projects no identity backends yet)"))
            .collect();
        let message = format!("Waiting for identity backends: {}", entries.join("; "));
        pass.condition(
            IDENTITY_BACKENDS_READY,
            false,
            "WaitingForBackends",
            &message,
        );
        return Ok(None);
    }
    let name = pass.name().to_owned();
    let read = |from: ReadFrom| {
        pass.cluster
            .get_typed_from::<Deployment>(Some(pass.namespace()), &name, from)
            .map_err(Error::cluster(format!(
                "reading Deployment {}",
                pass.key(&name)
            )))
    };
    let mut pending = rollout_pending(read(ReadFrom::Cache)?.as_ref(), None, None);
    if pending.is_some() {
        // The cache may lag the rollout the Deployment step is about to find done: judge
        // a wait on the server's copy, so the pass that sees the rollout end reports it.
        pending = rollout_pending(read(ReadFrom::Server)?.as_ref(), None, None);
    }
    match pending {
        Some(reason) => {
            let message =
                format!("Waiting for the identity-backend projection to roll out: {reason}");
            pass.condition(
                IDENTITY_BACKENDS_READY,
                false,
                "WaitingForRollout",
                &message,
            );
        }
        None => pass.condition(
            IDENTITY_BACKENDS_READY,
            true,
            "IdentityBackendsNotRequired",
            "No KeystoneIdentityBackend references this Keystone",
        ),
    }
    Ok(None)
}

#[cfg(test)]
#[path = "identity_backends_tests.rs"]
mod tests;
