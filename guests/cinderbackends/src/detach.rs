//! The service-remove finalizer (facts §3.4): added first by this controller, released by
//! the parent Cinder once its `cinder-manage service remove cinder-volume {cinder}@{name}`
//! Job `{cinder}-{name}-service-remove` has succeeded.
//!
//! | Case | Writes | Pass |
//! |---|---|---|
//! | not deleting, no finalizer | merge patch adding [`FINALIZER`] (under the read resourceVersion); no status write | ends, 1 s (the next pass reads the stored object) |
//! | not deleting, finalizer held | — | goes on to step 1 |
//! | deleting, no finalizer of ours | nothing | done |
//! | deleting, the Cinder exists | Ready False `Detaching` "waiting for the parent Cinder to run the c-b-service-remove Job that unregisters this backend's volume service" (observedGeneration stamped; no write when unchanged) | done: the Cinder's release is the next change |
//! | deleting, the Cinder is gone (or its kind is not served) | finalizer released, Normal event `ServiceRemoveSkipped` "Parent Cinder ns/c no longer exists, so no service registry row can be removed; released the backend" | done |
//! | deleting, reading the Cinder fails otherwise | nothing | error "fetching parent Cinder ns/c: …" |
//!
//! DECISION (facts §3.4 "parent gone → released with event ServiceRemoveSkipped"): the
//! registry row lives in the Cinder's database, so with the Cinder gone nothing could ever
//! run the Job; holding the finalizer would leave the backend Terminating forever. The
//! controller touches nothing else while deleting (no credentials, no projection).

use std::time::Duration;

use wasm_operator_sdk::{ApiError, Cluster, ClusterExt, Event, EventType, ObjectRef};

use crate::cinder_ref::Cinder;
use crate::conditions::{self, DETACHING, READY};
use crate::error::Error;
use crate::types::CinderBackend;

/// The finalizer holding a backend until its volume service is unregistered.
pub(crate) const FINALIZER: &str = "cinder.openstack.c5c3.io/service-remove";
/// RequeueNextPass: after persisting the finalizer.
pub(crate) const NEXT_PASS: Duration = Duration::from_secs(1);
/// The event of a backend released without its Job.
pub(crate) const SERVICE_REMOVE_SKIPPED: &str = "ServiceRemoveSkipped";

/// The name of the parent's service-remove Job for `backend` of Cinder `cinder`.
fn service_remove_job(cinder: &str, backend: &str) -> String {
    format!("{cinder}-{backend}-service-remove")
}

/// `namespace/name` of `backend`.
fn key(backend: &CinderBackend) -> String {
    format!("{}/{}", backend.namespace(), backend.name())
}

/// Adds the finalizer when `backend` lacks it: `Some(NEXT_PASS)` once added, `None` when
/// it was held already.
pub(crate) fn ensure(
    cluster: &dyn Cluster,
    backend: &mut CinderBackend,
) -> Result<Option<Duration>, Error> {
    let what = format!(
        "adding finalizer {FINALIZER} on CinderBackend {}",
        key(backend)
    );
    let added = cluster
        .add_finalizer(backend, FINALIZER)
        .map_err(|source| Error::Cluster { what, source })?;
    Ok(added.then_some(NEXT_PASS))
}

/// Where a deleting backend stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detach {
    /// Held for the Cinder's Job; Ready says so.
    Waiting,
    /// Released: the object is on its way out, its status is not written.
    Released,
}

/// The deleting `backend`, which holds the finalizer: Ready `Detaching` while its Cinder
/// exists, released when the Cinder is gone. `cluster` reads an unserved kind as absent.
pub(crate) fn deleting(
    cluster: &dyn Cluster,
    backend: &mut CinderBackend,
) -> Result<Detach, Error> {
    let cinder_name = backend.spec.cinder_ref.name.clone();
    let cinder_key = format!("{}/{cinder_name}", backend.namespace());
    let cinder: Option<Cinder> = match cluster.get_typed(Some(backend.namespace()), &cinder_name) {
        Ok(found) => found,
        Err(wasm_operator_sdk::Error::Api(ApiError::NotFound(_))) => None,
        Err(source) => {
            return Err(Error::Cluster {
                what: format!("fetching parent Cinder {cinder_key}"),
                source,
            });
        }
    };
    if cinder.is_some() {
        let job = service_remove_job(&cinder_name, backend.name());
        let message = format!(
            "waiting for the parent Cinder to run the {job} Job that unregisters this \
             backend's volume service"
        );
        conditions::set(backend, READY, false, DETACHING, &message);
        return Ok(Detach::Waiting);
    }
    let what = format!(
        "removing finalizer {FINALIZER} on CinderBackend {}",
        key(backend)
    );
    cluster
        .remove_finalizer(backend, FINALIZER)
        .map_err(|source| Error::Cluster { what, source })?;
    let note = format!(
        "Parent Cinder {cinder_key} no longer exists, so no service registry row can be \
         removed; released the backend"
    );
    let event = Event {
        event_type: EventType::Normal,
        reason: SERVICE_REMOVE_SKIPPED.into(),
        action: "Detach".into(),
        note,
    };
    let regarding = ObjectRef::of::<CinderBackend>(Some(backend.namespace()), backend.name());
    cluster
        .record_event(&regarding, &event)
        .map_err(|e| Error::Cluster {
            what: format!(
                "recording {SERVICE_REMOVE_SKIPPED} on CinderBackend {}",
                key(backend)
            ),
            source: e.into(),
        })?;
    Ok(Detach::Released)
}

#[cfg(test)]
#[path = "detach_tests.rs"]
mod tests;
