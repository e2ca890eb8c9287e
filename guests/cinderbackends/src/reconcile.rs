//! One pass over a CinderBackend (facts §3.4).
//!
//! | # | Step | Module | Ends the pass when |
//! |---|---|---|---|
//! | 0 | read the backend | — | it is gone (done, no write) |
//! | D | deleting: Ready `Detaching`, or released with the Cinder gone | [`detach`] | always (done) |
//! | F | the service-remove finalizer, added first | [`detach`] | it was added (1 s) |
//! | 1 | the Cinder, and the cluster its children live on | [`cinder_ref`] | no Cinder, or a target cluster (15 s) |
//! | 2 | the credential gate (NFS none, RBD the key Secret) | [`credentials`] | the gate holds (15 s) |
//! | 3 | ConfigProjected | [`projection`] | not projected (15 s); projected (done) |
//!
//! Whatever ended steps 1–3, the status is written once: Ready recomputed over
//! CredentialsReady + ConfigProjected ([`conditions::finish`]), observedGeneration
//! stamped, and no write at all when nothing changed. While deleting, Ready is
//! `Detaching` instead and is not recomputed. A failed read fails the pass (retried with
//! backoff) after the status write; a Conflict on a write runs the pass again after 1 s.
//!
//! Every read goes through the SDK's [`UnservedIsAbsent`]: a kind the cluster does not
//! serve has no objects (the plugin loads, and its backends wait, before the Cinder CRD
//! or ESO's is installed).

use std::time::Duration;

use wasm_operator_sdk::blocks::satellite::{HostTargets, Resolution, UnservedIsAbsent};
use wasm_operator_sdk::{
    ApiError, Cluster, ClusterExt, ObjectRef, Outcome, ReadFrom, ReconcileError, Request, log,
};

use crate::detach::{self, Detach, FINALIZER};
use crate::error::Error;
use crate::types::{CinderBackend, CinderBackendStatus};
use crate::{cinder_ref, conditions, credentials, projection};

/// RequeueSecretPolling: waiting on the parent, the credentials or the projection.
pub(crate) const SECRET_POLLING: Duration = Duration::from_secs(15);
/// How soon a pass whose write hit a Conflict runs again.
const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// One pass for the backend of `request`.
pub(crate) fn reconcile(
    cluster: &dyn Cluster,
    request: &Request,
) -> Result<Outcome, ReconcileError> {
    let object = ObjectRef::of::<CinderBackend>(request.namespace.as_deref(), &request.name);
    let cached = cluster
        .get(&object, ReadFrom::Cache)
        .map_err(|e| ReconcileError::Transient(format!("reading {object}: {e}")))?;
    let Some(cached) = cached else {
        return Ok(Outcome::done());
    };
    let mut backend: CinderBackend = serde_json::from_value(cached)
        .map_err(|e| ReconcileError::Permanent(format!("{object} does not decode: {e}")))?;
    let reads = UnservedIsAbsent(cluster);
    if backend.is_deleting() {
        return outcome(&object, deleting(&reads, &mut backend));
    }
    match detach::ensure(&reads, &mut backend) {
        Ok(None) => {}
        other => return outcome(&object, other),
    }
    let before = backend.status.clone();
    let result = steps(&reads, &mut backend);
    conditions::finish(&mut backend);
    let written = write_status(cluster, &backend, before.as_ref());
    outcome(&object, written.and(result))
}

/// A deleting backend: nothing unless it holds the finalizer.
fn deleting(cluster: &dyn Cluster, backend: &mut CinderBackend) -> Result<Option<Duration>, Error> {
    if !backend.holds(FINALIZER) {
        return Ok(None);
    }
    let before = backend.status.clone();
    if detach::deleting(cluster, backend)? == Detach::Waiting {
        conditions::stamp(backend);
        write_status(cluster, backend, before.as_ref())?;
    }
    Ok(None)
}

/// Steps 1–3: when to run again (`None`: on the next change).
fn steps(cluster: &dyn Cluster, backend: &mut CinderBackend) -> Result<Option<Duration>, Error> {
    let parent = cinder_ref::Parent::of(backend);
    let resolver = HostTargets(cluster);
    let (cinder, children) = match cinder_ref::run(cluster, &resolver, backend, &parent)? {
        Resolution::Resolved { parent, children } => (parent, children),
        Resolution::Requeue(after) => return Ok(Some(after)),
    };
    if !credentials::run(&*children, backend)? {
        return Ok(Some(SECRET_POLLING));
    }
    projection::run(&*children, backend, &cinder)
}

/// Writes the status when it differs from `before`.
fn write_status(
    cluster: &dyn Cluster,
    backend: &CinderBackend,
    before: Option<&CinderBackendStatus>,
) -> Result<(), Error> {
    if backend.status.as_ref() == before {
        return Ok(());
    }
    cluster
        .update_status_typed(backend)
        .map_err(|source| Error::Cluster {
            what: format!(
                "writing the status of CinderBackend {}/{}",
                backend.namespace(),
                backend.name()
            ),
            source,
        })?;
    Ok(())
}

/// The pass's outcome.
fn outcome(
    object: &ObjectRef,
    result: Result<Option<Duration>, Error>,
) -> Result<Outcome, ReconcileError> {
    match result {
        Ok(None) => Ok(Outcome::done()),
        Ok(Some(after)) => Ok(Outcome::requeue(after)),
        Err(Error::Cluster {
            source: wasm_operator_sdk::Error::Api(ApiError::Conflict(_)),
            ..
        }) => Ok(Outcome::requeue(CONFLICT_RETRY)),
        Err(error) => {
            log::warn(&format!("{object}: {error}"));
            Err(ReconcileError::Transient(error.to_string()))
        }
    }
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
