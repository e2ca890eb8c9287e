//! One pass over a KeystoneIdentityBackend (facts §3.2 "Controller flow").
//!
//! | # | Step | Module | Ends the pass when |
//! |---|---|---|---|
//! | 1 | read the backend; deleting → [`deletion`] (step 8); else ensure the finalizer | [`finalizer`] | the backend is gone (done); the finalizer was added (again at once, no status write) |
//! | 2 | the Keystone, its API ready | [`keystone_ref`] | no Keystone (done; 15 s on a read error); API not ready (done) |
//! | 3 | the admin credentials | [`admin_credentials`] | the Secret or its password is missing (15 s) |
//! | 4 | the identity client at `http://{keystone}.{ns}.svc.cluster.local:5000/v3` | [`identity`](crate::identity) | — |
//! | 5 | the domain (Manage / Adopt) | [`domain`] | Adopt and no domain (30 s); a failed call (error) |
//! | 6 | OIDC/SAML with DomainReady True and a status.domainID: federation objects | [`federation_objects`], [`groups`] | a role or project missing (30 s); a failed call (error) |
//! | 7 | ConfigProjected | [`projection`] | not projected or not rolled out (15 s) |
//!
//! Whatever ended steps 2–7, the status is written once: Ready recomputed over the
//! type's sub-conditions ([`conditions::ready_set`]), observedGeneration stamped, and no
//! write at all when nothing changed. A failed identity call sets its condition, then
//! fails the pass (retried with backoff). A Conflict on the backend's own writes runs the
//! pass again after 1 s.

use std::ops::ControlFlow;
use std::time::Duration;

use wasm_operator_sdk::{
    ApiError, Cluster, ClusterExt, ObjectRef, Outcome, ReadFrom, ReconcileError, Request, log,
};

use crate::error::Error;
use crate::identity::{Client, Egress, Transport};
use crate::pass::{Flow, Pass};
use crate::types::KeystoneIdentityBackend;
use crate::{
    admin_credentials, conditions, deletion, domain, federation_objects, finalizer, keystone_ref,
    projection,
};

/// Goes on with the value of a step that continues; returns a step's end.
macro_rules! next {
    ($step:expr) => {
        match $step? {
            ControlFlow::Continue(value) => value,
            ControlFlow::Break(after) => return Ok(ControlFlow::Break(after)),
        }
    };
}

/// How soon a pass that hit a Conflict on the backend runs again.
const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// One pass for the backend of `request`, sending identity requests through the plugin's
/// egress.
pub(crate) fn reconcile(
    cluster: &dyn Cluster,
    request: &Request,
) -> Result<Outcome, ReconcileError> {
    reconcile_with(cluster, request, &Egress)
}

/// [`reconcile`], sending identity requests through `transport`.
pub(crate) fn reconcile_with(
    cluster: &dyn Cluster,
    request: &Request,
    transport: &dyn Transport,
) -> Result<Outcome, ReconcileError> {
    let object =
        ObjectRef::of::<KeystoneIdentityBackend>(request.namespace.as_deref(), &request.name);
    let cached = cluster
        .get(&object, ReadFrom::Cache)
        .map_err(|e| ReconcileError::Transient(format!("reading {object}: {e}")))?;
    let Some(cached) = cached else {
        return Ok(Outcome::done());
    };
    let backend: KeystoneIdentityBackend = serde_json::from_value(cached)
        .map_err(|e| ReconcileError::Permanent(format!("{object} does not decode: {e}")))?;
    let before = backend.status.clone();
    let mut pass = Pass {
        cluster,
        transport,
        backend,
    };
    if pass.backend.is_deleting() {
        return outcome(&object, deletion::run(&mut pass));
    }
    match finalizer::ensure(&mut pass) {
        Ok(ControlFlow::Continue(())) => {}
        added => return outcome(&object, added),
    }
    let result = steps(&mut pass);
    let written = write_status(&mut pass, before.as_ref());
    outcome(&object, written.and(result))
}

/// Steps 2–7.
fn steps(pass: &mut Pass<'_>) -> Flow {
    let keystone = next!(keystone_ref::run(pass));
    let cluster = pass.cluster;
    let target = keystone_ref::children(cluster, &keystone)?;
    let children = target.as_deref().unwrap_or(cluster);
    let credentials = next!(admin_credentials::run(pass, &keystone, children));
    let client = Client::new(pass.transport, keystone.api_endpoint(), credentials);
    next!(domain::run(pass, &client));
    if pass.backend.is_federation()
        && pass.is_true(conditions::DOMAIN_READY)
        && !pass.domain_id().is_empty()
    {
        next!(federation_objects::run(pass, &client));
    }
    projection::run(pass, &keystone, children)
}

/// Writes the status when it differs from `before`, with Ready recomputed and
/// observedGeneration stamped.
fn write_status(
    pass: &mut Pass<'_>,
    before: Option<&crate::types::KeystoneIdentityBackendStatus>,
) -> Result<(), Error> {
    conditions::finish(&mut pass.backend);
    if pass.backend.status.as_ref() == before {
        return Ok(());
    }
    let what = format!(
        "writing the status of KeystoneIdentityBackend {}",
        pass.key(pass.name())
    );
    pass.cluster
        .update_status_typed(&pass.backend)
        .map_err(Error::cluster(what))?;
    Ok(())
}

/// The pass's outcome.
fn outcome(object: &ObjectRef, result: Flow) -> Result<Outcome, ReconcileError> {
    match result {
        Ok(ControlFlow::Continue(()) | ControlFlow::Break(None)) => Ok(Outcome::done()),
        Ok(ControlFlow::Break(Some(after))) => Ok(Outcome::requeue(after)),
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
