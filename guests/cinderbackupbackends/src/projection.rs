//! Step 3 — ConfigProjected (facts §3.5 "Evidence"), on the cluster the Cinder's children
//! live on: the Deployment `{cinder}-backup`, the Secret its pod volume `backup` names
//! (through the SDK's [`secret_name_for_volume`]), and that name without its last
//! `-<hash>` segment. The Secret's content is not read: a Cinder renders one backup target
//! at a time, under a base name of the target's own.
//!
//! | Case | ConfigProjected | Pass |
//! |---|---|---|
//! | the volume names `{cinder}-backup-{name}-<hash>` | True `ConfigProjected` "the driver section is rendered into the cinder-backup Deployment" | done |
//! | no Deployment, no `backup` volume, not a Secret volume, a name without `-`, another base (a sibling whose base starts with this one's included) | False `WaitingForProjection` "waiting for the cinder-backup Deployment to mount this backup target's rendered driver section" | ends, 15 s |
//! | reading the Deployment fails (other than NotFound) | unchanged (a True one stays) | error "fetching backup Deployment ns/c-backup: …" |
//!
//! The base is compared whole, not as a prefix: `cinder-backup-daily` is a prefix of
//! `cinder-backup-daily-archive-<hash>`.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use wasm_operator_sdk::blocks::satellite::secret_name_for_volume;
use wasm_operator_sdk::{ApiError, Cluster, ClusterExt};

use crate::cinder_ref::Cinder;
use crate::conditions::{self, CONFIG_PROJECTED, CONFIG_PROJECTED_REASON, WAITING_FOR_PROJECTION};
use crate::error::Error;
use crate::indexes::backup_deployment_name;
use crate::reconcile::SECRET_POLLING;
use crate::types::CinderBackupBackend;

/// The pod volume of the backup Deployment that mounts the rendered Secret.
pub(crate) const BACKUP_VOLUME: &str = "backup";

const PROJECTED: &str = "the driver section is rendered into the cinder-backup Deployment";
const WAITING: &str = "waiting for the cinder-backup Deployment to mount this backup target's rendered driver section";

/// The base name of the Secrets target `name` of Cinder `cinder` is rendered into.
pub(crate) fn secret_base_name(cinder: &str, name: &str) -> String {
    format!("{cinder}-backup-{name}")
}

/// Whether the Deployment mounts target `name`'s Secret.
fn projected(
    children: &dyn Cluster,
    target: &CinderBackupBackend,
    cinder: &Cinder,
) -> Result<bool, Error> {
    let name = backup_deployment_name(cinder.name());
    let deployment = match children.get_typed::<Deployment>(Some(cinder.namespace()), &name) {
        Ok(deployment) => deployment,
        Err(wasm_operator_sdk::Error::Api(ApiError::NotFound(_))) => None,
        Err(source) => {
            return Err(Error::Cluster {
                what: format!("fetching backup Deployment {}/{name}", cinder.namespace()),
                source,
            });
        }
    };
    let pod_spec = deployment
        .as_ref()
        .and_then(|d| d.spec.template.spec.as_ref());
    let Some(secret) = secret_name_for_volume(pod_spec, BACKUP_VOLUME) else {
        return Ok(false);
    };
    let base = secret_base_name(cinder.name(), target.name());
    Ok(secret
        .rsplit_once('-')
        .is_some_and(|(stem, _)| stem == base))
}

/// Runs step 3: when to look again (`None` once projected).
pub(crate) fn run(
    children: &dyn Cluster,
    target: &mut CinderBackupBackend,
    cinder: &Cinder,
) -> Result<Option<Duration>, Error> {
    if projected(children, target, cinder)? {
        conditions::set(
            target,
            CONFIG_PROJECTED,
            true,
            CONFIG_PROJECTED_REASON,
            PROJECTED,
        );
        Ok(None)
    } else {
        conditions::set(
            target,
            CONFIG_PROJECTED,
            false,
            WAITING_FOR_PROJECTION,
            WAITING,
        );
        Ok(Some(SECRET_POLLING))
    }
}

#[cfg(test)]
#[path = "projection_tests.rs"]
mod tests;
