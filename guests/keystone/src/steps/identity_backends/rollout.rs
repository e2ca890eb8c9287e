//! Whether the Keystone Deployment runs this pass's identity-backend projection (facts
//! §2.6 steps 2 and 8): the `domains` and `federation-proxy-config` volumes name exactly
//! the pass's Secrets (or are absent when nothing of that type is projected), and every
//! replica runs the current template.

use k8s_openapi::api::apps::v1::Deployment;
use wasm_operator_sdk::{ClusterExt, ReadFrom};

use crate::conditions::IDENTITY_BACKENDS_READY;
use crate::error::Error;
use crate::pass::Pass;
use crate::steps::deployment::rolled_out;

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

/// Sets the condition: False `WaitingForRollout` while the Deployment does not carry the
/// pass's projections or is rolling out, else True `reason`.
pub(super) fn rollout_condition(
    pass: &mut Pass<'_>,
    reason: &str,
    message: &str,
) -> Result<(), Error> {
    let name = pass.name().to_owned();
    let domains = Some(pass.domains_secret_name.as_str()).filter(|n| !n.is_empty());
    let federation = pass.federation.as_ref().map(|f| f.secret_name.as_str());
    let read = |from: ReadFrom| {
        pass.cluster
            .get_typed_from::<Deployment>(Some(pass.namespace()), &name, from)
            .map_err(Error::cluster(format!(
                "reading Deployment {}",
                pass.key(&name)
            )))
    };
    let mut pending = rollout_pending(read(ReadFrom::Cache)?.as_ref(), domains, federation);
    if pending.is_some() {
        // The cache may lag the rollout the Deployment step is about to find done: judge
        // a wait on the server's copy, so the pass that sees the rollout end reports it.
        pending = rollout_pending(read(ReadFrom::Server)?.as_ref(), domains, federation);
    }
    match pending {
        Some(why) => {
            let message = format!("Waiting for the identity-backend projection to roll out: {why}");
            pass.condition(
                IDENTITY_BACKENDS_READY,
                false,
                "WaitingForRollout",
                &message,
            );
        }
        None => pass.condition(IDENTITY_BACKENDS_READY, true, reason, message),
    }
    Ok(())
}
