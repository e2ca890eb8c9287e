//! Step 3 — ConfigProjected (facts §3.6 "Evidence"), through the SDK's
//! [`section_projected`] on the cluster the Barbican's children live on: the Deployment
//! `{barbican}`, its volume `config`, the Secret that volume mounts, its data key
//! `barbican.conf`, and in it the header `[secretstore:<store name>]` as a whole line.
//! Observed only once CredentialsReady is True: the Barbican never projects a store that
//! is not credential-ready.
//!
//! | Case | ConfigProjected | Pass |
//! |---|---|---|
//! | the header is there | True `ConfigProjected` "secret-store section is rendered into the Barbican Deployment's config" | done |
//! | any link missing (Deployment, volume, Secret, data key, header) | False `WaitingForProjection` "waiting for the Barbican Deployment to mount this store's rendered secret-store section" | ends, 30 s |
//! | a read fails (other than NotFound) | unchanged (a True one stays: unobservable is not un-projected) | error "fetching Deployment …" / "fetching projection Secret …" |
//!
//! No event: waiting for the projection is the handshake's normal course. The poll is a
//! safety net: the Barbican and Deployment watches normally wake the store when the
//! projection lands.

use std::time::Duration;

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::satellite::{ObserveParams, section_projected};

use crate::barbican_ref::Barbican;
use crate::conditions::{self, CONFIG_PROJECTED, CONFIG_PROJECTED_REASON, WAITING_FOR_PROJECTION};
use crate::error::Error;
use crate::pass::SECRET_STORE_RETRY;
use crate::types::BarbicanSecretStore;

/// The pod volume of the Barbican's Deployment that mounts the rendered config.
pub(crate) const CONFIG_VOLUME: &str = "config";
/// The data key of that Secret holding barbican.conf.
pub(crate) const BARBICAN_CONF_KEY: &str = "barbican.conf";

const PROJECTED: &str = "secret-store section is rendered into the Barbican Deployment's config";
const WAITING: &str =
    "waiting for the Barbican Deployment to mount this store's rendered secret-store section";

/// The section header Barbican reads the store `name` from.
pub(crate) fn section_header(name: &str) -> String {
    format!("[secretstore:{name}]")
}

/// Runs step 3: when to look again (`None` once projected).
pub(crate) fn run(
    children: &dyn Cluster,
    store: &mut BarbicanSecretStore,
    barbican: &Barbican,
) -> Result<Option<Duration>, Error> {
    let header = section_header(store.name());
    let projected = section_projected(&ObserveParams {
        children,
        deployment_namespace: barbican.namespace(),
        deployment_name: barbican.name(),
        volume_name: CONFIG_VOLUME,
        data_key: BARBICAN_CONF_KEY,
        section_header: &header,
    })?;
    if projected {
        conditions::set(
            store,
            CONFIG_PROJECTED,
            true,
            CONFIG_PROJECTED_REASON,
            PROJECTED,
        );
        Ok(None)
    } else {
        conditions::set(
            store,
            CONFIG_PROJECTED,
            false,
            WAITING_FOR_PROJECTION,
            WAITING,
        );
        Ok(Some(SECRET_STORE_RETRY))
    }
}

#[cfg(test)]
#[path = "projection_tests.rs"]
mod tests;
