//! One pass over a BarbicanSecretStore (facts §3.6).
//!
//! | # | Step | Module | Ends the pass when |
//! |---|---|---|---|
//! | 0 | read the store | [`remote`] when deleting | it is gone, or being deleted: a held store sweeps its Secrets from its target cluster (or waits for it) and releases its finalizer; otherwise done, no write (the minted Secret is garbage-collected with its owner) |
//! | 1 | the Barbican, and the cluster its children live on | [`barbican_ref`], [`remote`] | no Barbican, or a target that does not open (15 s, no event); a managed store of a targeted Barbican lacking its annotation and finalizer (both added, at once) |
//! | 2 | the credentials: managed ([`managed`], [`minting`]) or brownfield ([`brownfield`]); neither mode named: CredentialsReady False `WaitingForCredentials` | — | the gate holds (30 s, with a Warning event) |
//! | 3 | ConfigProjected | [`projection`] | not projected (30 s); projected (step 2's revalidation: 15 min, or the managed re-mint point) |
//!
//! Whatever ended steps 1–3, the status is written once: Ready recomputed over the mode's
//! set ([`conditions::finish`]), observedGeneration stamped, and no write at all when
//! nothing changed. A failed read fails the pass (retried with backoff) after the status
//! write; a Conflict on the status write runs the pass again after 1 s.
//!
//! Every read goes through [`UnservedIsAbsent`]: a kind the cluster does not serve has no
//! objects. OpenBao is reached through a [`Transport`]: the plugin's egress in a pass, a
//! fake OpenBao in tests; the clock is passed in, so tests pin it.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use wasm_operator_sdk::blocks::satellite::{HostTargets, Resolution};
use wasm_operator_sdk::{
    ApiError, Cluster, ClusterExt, ObjectRef, Outcome, ReadFrom, ReconcileError, Request, log,
};

use crate::error::Error;
use crate::openbao::{Egress, Transport};
use crate::pass::{Gate, Pass};
use crate::types::{BarbicanSecretStore, BarbicanSecretStoreStatus};
use crate::{barbican_ref, brownfield, conditions, managed, projection, remote};
use wasm_operator_sdk::blocks::satellite::UnservedIsAbsent;

/// RequeueSecretPolling: waiting on the parent (or its cluster).
pub(crate) const SECRET_POLLING: Duration = Duration::from_secs(15);
/// How soon a pass whose status write hit a Conflict runs again.
const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// One pass for the store of `request`, through the plugin's egress, now.
pub(crate) fn reconcile(
    cluster: &dyn Cluster,
    request: &Request,
) -> Result<Outcome, ReconcileError> {
    let now = wasm_operator_sdk::blocks::conditions::now().0;
    reconcile_with(cluster, request, &Egress, now)
}

/// One pass for the store of `request`, reaching OpenBao through `transport`, at `now`.
pub(crate) fn reconcile_with(
    cluster: &dyn Cluster,
    request: &Request,
    transport: &dyn Transport,
    now: Timestamp,
) -> Result<Outcome, ReconcileError> {
    let object = ObjectRef::of::<BarbicanSecretStore>(request.namespace.as_deref(), &request.name);
    let cached = cluster
        .get(&object, ReadFrom::Cache)
        .map_err(|e| ReconcileError::Transient(format!("reading {object}: {e}")))?;
    let Some(cached) = cached else {
        return Ok(Outcome::done());
    };
    let mut store: BarbicanSecretStore = serde_json::from_value(cached)
        .map_err(|e| ReconcileError::Permanent(format!("{object} does not decode: {e}")))?;
    let before = store.status.clone();
    if store.is_deleting() {
        let result = remote::delete(cluster, &mut store, now);
        if matches!(result, Ok(Some(_))) {
            let written = write_status(cluster, &mut store, before.as_ref());
            return outcome(&object, written.and(result));
        }
        return outcome(&object, result);
    }
    let reads = UnservedIsAbsent(cluster);
    let result = steps(&reads, transport, now, &mut store);
    let written = write_status(cluster, &mut store, before.as_ref());
    outcome(&object, written.and(result))
}

/// Steps 1–3: when to run again.
fn steps(
    cluster: &dyn Cluster,
    transport: &dyn Transport,
    now: Timestamp,
    store: &mut BarbicanSecretStore,
) -> Result<Option<Duration>, Error> {
    let parent = barbican_ref::Parent::of(store);
    let resolver = HostTargets(cluster);
    let (barbican, children) = match barbican_ref::run(cluster, &resolver, store, &parent)? {
        Resolution::Resolved { parent, children } => (parent, children),
        Resolution::Requeue(after) => return Ok(Some(after)),
    };
    if let Some(target) = remote::target_of(&barbican, store)
        && remote::hold(cluster, store, &target)?
    {
        return Ok(Some(Duration::ZERO));
    }
    let mut pass = Pass {
        cluster: &*children,
        transport,
        now,
        store,
    };
    let revalidate = match credentials(&mut pass)? {
        Gate::Held(after) => return Ok(Some(after)),
        Gate::Passed(after) => after,
    };
    let projection = projection::run(&*children, store, &barbican)?;
    Ok(Some(projection.map_or(revalidate, |p| p.min(revalidate))))
}

/// Step 2, by mode.
fn credentials(pass: &mut Pass<'_>) -> Result<Gate, Error> {
    let Some(spec) = pass.store.spec.open_bao.clone() else {
        return Ok(brownfield::no_server(pass));
    };
    match (&spec.instance_ref, &spec.server) {
        (Some(instance), _) => managed::run(pass, &spec, &instance.name),
        (None, Some(server)) => brownfield::run(pass, &spec, server),
        (None, None) => Ok(brownfield::no_server(pass)),
    }
}

/// Writes the status when it differs from `before`, with Ready recomputed and
/// observedGeneration stamped.
fn write_status(
    cluster: &dyn Cluster,
    store: &mut BarbicanSecretStore,
    before: Option<&BarbicanSecretStoreStatus>,
) -> Result<(), Error> {
    conditions::finish(store);
    if store.status.as_ref() == before {
        return Ok(());
    }
    cluster
        .update_status_typed(store)
        .map_err(|source| Error::Cluster {
            what: format!(
                "writing the status of BarbicanSecretStore {}/{}",
                store.namespace(),
                store.name()
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
