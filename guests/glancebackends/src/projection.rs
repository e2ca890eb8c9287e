//! Step 3 — ConfigProjected (facts §3.3 "Observe"), through the SDK's
//! [`section_projected`] on the cluster the Glance's children live on: the Deployment
//! `{glance}`, its volume `backends`, the Secret that volume mounts, its data key
//! `backends.conf`, and in it the header `[<backend name>]` as a whole line.
//!
//! | Case | ConfigProjected | Pass |
//! |---|---|---|
//! | the header is there | True `ConfigProjected` "store section is rendered into the Glance Deployment's backends config" | done |
//! | any link missing (Deployment, volume, Secret, data key, header) | False `WaitingForProjection` "waiting for the Glance Deployment to mount this backend's rendered store section" | ends, 15 s |
//! | a read fails (other than NotFound) | unchanged (a True one stays: unobservable is not un-projected) | error "fetching Deployment …" / "fetching projection Secret …" |
//!
//! The poll is a safety net: the Glance and Deployment watches normally wake the backend
//! when the projection lands.

use std::time::Duration;

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::satellite::{ObserveParams, section_projected};

use crate::conditions::{self, CONFIG_PROJECTED, CONFIG_PROJECTED_REASON, WAITING_FOR_PROJECTION};
use crate::error::Error;
use crate::glance_ref::Glance;
use crate::reconcile::SECRET_POLLING;
use crate::types::GlanceBackend;

/// The pod volume of the Glance's Deployment that mounts the rendered store sections.
pub(crate) const BACKENDS_VOLUME: &str = "backends";
/// The data key of that Secret holding them.
pub(crate) const BACKENDS_CONF_KEY: &str = "backends.conf";

const PROJECTED: &str = "store section is rendered into the Glance Deployment's backends config";
const WAITING: &str =
    "waiting for the Glance Deployment to mount this backend's rendered store section";

/// Runs step 3: when to look again (`None` once projected).
pub(crate) fn run(
    children: &dyn Cluster,
    backend: &mut GlanceBackend,
    glance: &Glance,
) -> Result<Option<Duration>, Error> {
    let header = format!("[{}]", backend.name());
    let projected = section_projected(&ObserveParams {
        children,
        deployment_namespace: glance.namespace(),
        deployment_name: glance.name(),
        volume_name: BACKENDS_VOLUME,
        data_key: BACKENDS_CONF_KEY,
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
