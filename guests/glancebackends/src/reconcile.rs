//! One pass over a GlanceBackend (facts §3.3 "Controller").
//!
//! | # | Step | Module | Ends the pass when |
//! |---|---|---|---|
//! | 0 | read the backend | — | it is gone, or being deleted (done, no write: no finalizer, nothing to clean up) |
//! | 1 | the Glance, and the cluster its children live on | [`glance_ref`] | no Glance, or a target cluster (15 s) |
//! | 2 | the S3 credentials gate | [`credentials`] | the gate holds (15 s) |
//! | 3 | ConfigProjected | [`projection`] | not projected (15 s); projected (done) |
//!
//! Whatever ended steps 1–3, the status is written once: Ready recomputed over
//! CredentialsReady + ConfigProjected ([`conditions::finish`]), observedGeneration
//! stamped, and no write at all when nothing changed. A failed read fails the pass
//! (retried with backoff) after the status write; a Conflict on the status write runs the
//! pass again after 1 s.
//!
//! Every read goes through the SDK's [`UnservedIsAbsent`]: a kind the cluster does not
//! serve has no objects. DECISION: the plugin loads while the Glance CRD (or ESO's) is not
//! installed yet; a Glance of an unserved kind reads as a missing parent (CredentialsReady
//! False `WaitingForParent`, 15 s), and the optional Glance watch wakes the backend once
//! the kind is served.

use std::time::Duration;

use wasm_operator_sdk::blocks::satellite::{HostTargets, Resolution, UnservedIsAbsent};
use wasm_operator_sdk::{
    ApiError, Cluster, ClusterExt, ObjectRef, Outcome, ReadFrom, ReconcileError, Request, log,
};

use crate::error::Error;
use crate::types::{GlanceBackend, GlanceBackendStatus};
use crate::{conditions, credentials, glance_ref, projection};

/// RequeueSecretPolling: waiting on the parent, the credentials or the projection.
pub(crate) const SECRET_POLLING: Duration = Duration::from_secs(15);
/// How soon a pass whose status write hit a Conflict runs again.
const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// One pass for the backend of `request`.
pub(crate) fn reconcile(
    cluster: &dyn Cluster,
    request: &Request,
) -> Result<Outcome, ReconcileError> {
    let object = ObjectRef::of::<GlanceBackend>(request.namespace.as_deref(), &request.name);
    let cached = cluster
        .get(&object, ReadFrom::Cache)
        .map_err(|e| ReconcileError::Transient(format!("reading {object}: {e}")))?;
    let Some(cached) = cached else {
        return Ok(Outcome::done());
    };
    let mut backend: GlanceBackend = serde_json::from_value(cached)
        .map_err(|e| ReconcileError::Permanent(format!("{object} does not decode: {e}")))?;
    if backend.is_deleting() {
        return Ok(Outcome::done());
    }
    let before = backend.status.clone();
    let reads = UnservedIsAbsent(cluster);
    let result = steps(&reads, &mut backend);
    let written = write_status(cluster, &mut backend, before.as_ref());
    outcome(&object, written.and(result))
}

/// Steps 1–3: when to run again (`None`: on the next change).
fn steps(cluster: &dyn Cluster, backend: &mut GlanceBackend) -> Result<Option<Duration>, Error> {
    let parent = glance_ref::Parent::of(backend);
    let resolver = HostTargets(cluster);
    let (glance, children) = match glance_ref::run(cluster, &resolver, backend, &parent)? {
        Resolution::Resolved { parent, children } => (parent, children),
        Resolution::Requeue(after) => return Ok(Some(after)),
    };
    if !credentials::run(&*children, backend)? {
        return Ok(Some(SECRET_POLLING));
    }
    projection::run(&*children, backend, &glance)
}

/// Writes the status when it differs from `before`, with Ready recomputed and
/// observedGeneration stamped.
fn write_status(
    cluster: &dyn Cluster,
    backend: &mut GlanceBackend,
    before: Option<&GlanceBackendStatus>,
) -> Result<(), Error> {
    conditions::finish(backend);
    if backend.status.as_ref() == before {
        return Ok(());
    }
    cluster
        .update_status_typed(backend)
        .map_err(|source| Error::Cluster {
            what: format!(
                "writing the status of GlanceBackend {}/{}",
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
