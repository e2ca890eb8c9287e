//! Step 7 — ConfigProjected (facts §3.2 step 7): whether the Keystone's Deployment
//! `{keystone}` (management cluster) runs the backend's rendered config.
//!
//! Where the config is, by type — the Keystone side's names
//! (`guests/keystone/src/steps/identity_backends/{ldap,federation_data,saml}.rs`):
//!
//! | Type | Pod volume | Data key of the Secret it mounts |
//! |---|---|---|
//! | LDAP | `domains` | `keystone.<domain>.conf` |
//! | OIDC | `federation-metadata` | `<backend>.client` (the item's key; its path is the issuer's basename) |
//! | SAML | `federation-mellon` | `<backend>.idp-metadata.xml` |
//!
//! | Case | ConfigProjected | Pass |
//! |---|---|---|
//! | no Deployment, no such volume, a volume not backed by a Secret, no Secret, or no data key | False `WaitingForProjection` "waiting for the Keystone Deployment to mount this backend's domain config" | ends, 15 s |
//! | mounted, the Deployment not fully rolled out | False `WaitingForRollout` "the Keystone Deployment has not finished rolling out this backend's config" | ends, 15 s |
//! | mounted and rolled out | True `ConfigProjected` "domain config is mounted in the Keystone Deployment"; SAML: status.samlSPMetadataSecretName = `{keystone}-saml-sp-metadata` | done |
//! | reading the Deployment or Secret fails (not NotFound) | — | fails |
//!
//! "Fully rolled out" is the Keystone side's `rolled_out`: status.observedGeneration ≥
//! metadata.generation, and updated = ready = current replicas = spec.replicas (1 when
//! unset).

use std::ops::ControlFlow;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use wasm_operator_sdk::blocks::satellite::secret_name_for_volume;
use wasm_operator_sdk::{ApiError, Cluster, ClusterExt};

use crate::conditions::{
    CONFIG_PROJECTED, CONFIG_PROJECTED_REASON, WAITING_FOR_PROJECTION, WAITING_FOR_ROLLOUT,
};
use crate::error::Error;
use crate::keystone_ref::Keystone;
use crate::pass::{Flow, Pass, SECRET_POLLING};
use crate::types::{BackendType, KeystoneIdentityBackend};

/// Whether the Keystone workload runs the backend's config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Projection {
    /// The pod template does not mount it.
    NotProjected,
    /// The template mounts it; replicas of an older template still serve.
    RolloutPending,
    /// Every replica runs the template that mounts it.
    Running,
}

/// The pod volume and data key carrying `backend`'s rendered config.
pub(crate) fn location(backend: &KeystoneIdentityBackend) -> (&'static str, String) {
    match backend.spec.type_ {
        BackendType::Ldap => (
            "domains",
            format!("keystone.{}.conf", backend.spec.domain.name),
        ),
        BackendType::Oidc => ("federation-metadata", format!("{}.client", backend.name())),
        BackendType::Saml => (
            "federation-mellon",
            format!("{}.idp-metadata.xml", backend.name()),
        ),
    }
}

/// The stable Secret exporting the SAML SP metadata the Keystone side writes.
pub(crate) fn saml_sp_metadata_secret_name(keystone: &Keystone) -> String {
    format!("{}-saml-sp-metadata", keystone.name())
}

/// Whether every replica runs the Deployment's current template.
pub(crate) fn rolled_out(deployment: &Deployment) -> bool {
    let desired = deployment.spec.replicas.unwrap_or(1);
    let Some(status) = &deployment.status else {
        return false;
    };
    status.observed_generation.unwrap_or(0) >= deployment.metadata.generation.unwrap_or(0)
        && status.updated_replicas.unwrap_or(0) == desired
        && status.ready_replicas.unwrap_or(0) == desired
        && status.replicas.unwrap_or(0) == desired
}

/// Reads a `K`; NotFound is `None`.
fn read<K>(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
    what: &str,
) -> Result<Option<K>, Error>
where
    K: k8s_openapi::Resource + serde::de::DeserializeOwned,
{
    match cluster.get_typed::<K>(Some(namespace), name) {
        Err(wasm_operator_sdk::Error::Api(ApiError::NotFound(_))) => Ok(None),
        other => other.map_err(Error::cluster(format!(
            "fetching {what} {namespace}/{name}"
        ))),
    }
}

/// Where `backend`'s config stands in `keystone`'s Deployment.
pub(crate) fn inspect(
    cluster: &dyn Cluster,
    keystone: &Keystone,
    backend: &KeystoneIdentityBackend,
) -> Result<Projection, Error> {
    let namespace = keystone.namespace();
    let Some(deployment) = read::<Deployment>(cluster, namespace, keystone.name(), "Deployment")?
    else {
        return Ok(Projection::NotProjected);
    };
    let (volume, data_key) = location(backend);
    let pod = deployment.spec.template.spec.as_ref();
    let Some(secret_name) = secret_name_for_volume(pod, volume) else {
        return Ok(Projection::NotProjected);
    };
    let secret = read::<Secret>(cluster, namespace, secret_name, "projection Secret")?;
    let mounted = secret
        .and_then(|s| s.data)
        .is_some_and(|d| d.contains_key(&data_key));
    Ok(match (mounted, rolled_out(&deployment)) {
        (false, _) => Projection::NotProjected,
        (true, false) => Projection::RolloutPending,
        (true, true) => Projection::Running,
    })
}

/// Runs step 7.
pub(crate) fn run(pass: &mut Pass<'_>, keystone: &Keystone, children: &dyn Cluster) -> Flow {
    let (reason, message) = match inspect(children, keystone, &pass.backend)? {
        Projection::NotProjected => (
            WAITING_FOR_PROJECTION,
            "waiting for the Keystone Deployment to mount this backend's domain config",
        ),
        Projection::RolloutPending => (
            WAITING_FOR_ROLLOUT,
            "the Keystone Deployment has not finished rolling out this backend's config",
        ),
        Projection::Running => {
            let message = "domain config is mounted in the Keystone Deployment";
            pass.condition(CONFIG_PROJECTED, true, CONFIG_PROJECTED_REASON, message);
            if pass.backend.spec.type_ == BackendType::Saml {
                pass.status_mut().saml_sp_metadata_secret_name =
                    saml_sp_metadata_secret_name(keystone);
            }
            return Ok(ControlFlow::Continue(()));
        }
    };
    pass.condition(CONFIG_PROJECTED, false, reason, message);
    Ok(ControlFlow::Break(Some(SECRET_POLLING)))
}

#[cfg(test)]
#[path = "projection_tests.rs"]
mod tests;
