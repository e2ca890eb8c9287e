//! Step 3 — ConfigProjected (facts §3.4 "Evidence"), through the SDK's
//! [`section_projected`] on the cluster the Cinder's children live on: the backend's own
//! Deployment `{cinder}-volume-{name}`, its volume `backend`, the Secret that volume
//! mounts, its data key `backend.conf`, and in it the header `[{name}]` as a whole line.
//!
//! | Case | ConfigProjected | Pass |
//! |---|---|---|
//! | the header is there | True `ConfigProjected` "the backend section is rendered into this backend's cinder-volume Deployment" | done |
//! | any link missing (Deployment, volume, Secret, data key, header) | False `WaitingForProjection` "waiting for this backend's cinder-volume Deployment to mount its rendered backend section" | ends, 15 s |
//! | a read fails (other than NotFound) | unchanged (a True one stays: unobservable is not un-projected) | error "fetching Deployment …" / "fetching projection Secret …" |
//!
//! The poll is a safety net: the Cinder and Deployment watches normally wake the backend
//! when the projection lands.

use std::time::Duration;

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::satellite::{ObserveParams, section_projected};

use crate::cinder_ref::Cinder;
use crate::conditions::{self, CONFIG_PROJECTED, CONFIG_PROJECTED_REASON, WAITING_FOR_PROJECTION};
use crate::error::Error;
use crate::indexes::volume_deployment_name;
use crate::reconcile::SECRET_POLLING;
use crate::types::CinderBackend;

/// The pod volume of the backend's Deployment that mounts its rendered Secret.
pub(crate) const BACKEND_VOLUME: &str = "backend";
/// The data key of that Secret holding the backend section.
pub(crate) const BACKEND_CONF_KEY: &str = "backend.conf";

const PROJECTED: &str =
    "the backend section is rendered into this backend's cinder-volume Deployment";
const WAITING: &str =
    "waiting for this backend's cinder-volume Deployment to mount its rendered backend section";

/// Runs step 3: when to look again (`None` once projected).
pub(crate) fn run(
    children: &dyn Cluster,
    backend: &mut CinderBackend,
    cinder: &Cinder,
) -> Result<Option<Duration>, Error> {
    let header = format!("[{}]", backend.name());
    let deployment = volume_deployment_name(cinder.name(), backend.name());
    let projected = section_projected(&ObserveParams {
        children,
        deployment_namespace: cinder.namespace(),
        deployment_name: &deployment,
        volume_name: BACKEND_VOLUME,
        data_key: BACKEND_CONF_KEY,
        section_header: &header,
    })?;
    if projected {
        conditions::set(
            backend,
            CONFIG_PROJECTED,
            true,
            CONFIG_PROJECTED_REASON,
            PROJECTED,
        );
        Ok(None)
    } else {
        conditions::set(
            backend,
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
