//! One pass over a Keystone (facts §2.1–2.2): the prelude, the table of named steps, and
//! the status write every pass ends with.
//!
//! The prelude, in order:
//!
//! | Case | What the pass does |
//! |---|---|
//! | the Keystone is gone | done, no write |
//! | a deletionTimestamp is set | the deletion branch ([`deletion`]) instead of the steps |
//! | a `targetClusterRef` names a cluster the host cannot open | SecretsReady False `TargetClusterUnavailable` (the host's reason), status written, 15 s; no finalizer added |
//! | a `targetClusterRef` names an open target | every child read and written there (the Keystone, its status, finalizers, events and identity backends stay here) |
//! | a finalizer is missing ([`finalizers`]) | the first missing one added, run again at once (no status write) |
//! | all finalizers carried | the steps below (no write for the finalizers) |
//!
//! | # | Step | Condition |
//! |---|---|---|
//! | 1 | `secrets` ([`steps::secrets`]) | SecretsReady |
//! | 2 | `database-tls` ([`steps::database_tls`]) | DatabaseTLSReady |
//! | 3 | `db-connection-secret` ([`steps::db_connection`]) | SecretsReady (on failure) |
//! | 4 | `identity-backends` ([`steps::identity_backends`]) | IdentityBackendsReady |
//! | 5 | `config` ([`steps::config`]) | SecretsReady (on failure), ExtraConfigHealthy |
//! | 6 | ‖ `fernet-keys`, `credential-keys` ([`steps::keys`]), `network-policy` ([`steps::network_policy`]) | FernetKeysReady, CredentialKeysReady, NetworkPolicyReady |
//! | 7 | `database` ([`steps::database`], upgrades in [`steps::database_upgrade`]) | DatabaseReady |
//! | 8 | `policy-validation` ([`steps::policy_validation`]) | PolicyValidReady |
//! | 9 | `deployment` ([`steps::deployment`]) | DeploymentReady |
//! | 10 | `prune` ([`steps::prune`]) | SecretsReady (on failure) |
//! | 11 | ‖ `http-route` ([`steps::http_route`]), `health-check` ([`steps::health_check`]), `hpa` ([`steps::hpa`]), `bootstrap` ([`steps::bootstrap`]), `trust-flush` ([`steps::trust_flush`]) | HTTPRouteReady, KeystoneAPIReady, HPAReady, BootstrapReady, TrustFlushReady |
//! | 12 | `password-rotation` ([`steps::password_rotation`]) | PasswordRotationReady |
//!
//! The members of a parallel group (‖) each run on a copy of the pass; only each one's
//! own condition (and its writes to the Keystone's metadata) is merged back. The group
//! ends the pass with the first member's error, else the shortest requeue.
//!
//! The first step that requeues or fails ends the pass. Whatever ended it, the status is
//! written: Ready recomputed from its fifteen sub-conditions, observedGeneration stamped,
//! and no write at all when nothing changed.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use wasm_operator_sdk::blocks::pipeline::{Step, run_pass};
use wasm_operator_sdk::{
    ApiError, Cluster, ClusterExt, ObjectRef, Outcome, Owner, ReadFrom, ReconcileError, Request,
    log,
};

use crate::conditions::{
    BOOTSTRAP_READY, CREDENTIAL_KEYS_READY, FERNET_KEYS_READY, HPA_READY, HTTP_ROUTE_READY,
    KEYSTONE_API_READY, NETWORK_POLICY_READY, SECRETS_READY, TRUST_FLUSH_READY, recompute_ready,
};
use crate::error::Error;
use crate::pass::{Pass, SECRET_POLLING, StepResult};
use crate::steps;
use crate::types::Keystone;
use crate::{deletion, finalizers};

/// The steps of a pass, in order.
fn steps<'a>() -> Vec<Step<'a, Pass<'a>, Error>> {
    vec![
        Step::new("secrets", steps::secrets::run),
        Step::new("database-tls", steps::database_tls::run),
        Step::new("db-connection-secret", steps::db_connection::run),
        Step::new("identity-backends", steps::identity_backends::run),
        Step::new("config", steps::config::run),
        Step::parallel(
            "keys-and-network-policy",
            vec![
                Step::member("fernet-keys", FERNET_KEYS_READY, steps::keys::run_fernet),
                Step::member(
                    "credential-keys",
                    CREDENTIAL_KEYS_READY,
                    steps::keys::run_credential,
                ),
                Step::member(
                    "network-policy",
                    NETWORK_POLICY_READY,
                    steps::network_policy::run,
                ),
            ],
        ),
        Step::new("database", steps::database::run),
        Step::new("policy-validation", steps::policy_validation::run),
        Step::new("deployment", steps::deployment::run),
        Step::new("prune", steps::prune::run),
        Step::parallel(
            "exposure-and-jobs",
            vec![
                Step::member("http-route", HTTP_ROUTE_READY, steps::http_route::run),
                Step::member("health-check", KEYSTONE_API_READY, steps::health_check::run),
                Step::member("hpa", HPA_READY, steps::hpa::run),
                Step::member("bootstrap", BOOTSTRAP_READY, steps::bootstrap::run),
                Step::member("trust-flush", TRUST_FLUSH_READY, steps::trust_flush::run),
            ],
        ),
        Step::new("password-rotation", steps::password_rotation::run),
    ]
}

/// Runs one pass for the Keystone of `request`.
pub fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
    reconcile_with(
        cluster,
        request,
        wasm_operator_sdk::blocks::conditions::now(),
        &steps::health_check::Egress,
    )
}

/// [`reconcile`] at the time `now`: the pass's clock, which every bound is computed from.
#[cfg(test)]
pub(crate) fn reconcile_at(
    cluster: &dyn Cluster,
    request: &Request,
    now: Time,
) -> Result<Outcome, ReconcileError> {
    reconcile_with(cluster, request, now, &steps::health_check::Egress)
}

/// [`reconcile`] at the time `now`, the health check probing through `probe`.
pub(crate) fn reconcile_with(
    cluster: &dyn Cluster,
    request: &Request,
    now: Time,
    probe: &dyn steps::health_check::Probe,
) -> Result<Outcome, ReconcileError> {
    let object = ObjectRef::of::<Keystone>(request.namespace.as_deref(), &request.name);
    let cached = cluster
        .get(&object, ReadFrom::Cache)
        .map_err(|e| ReconcileError::Transient(format!("reading {object}: {e}")))?;
    let Some(cached) = cached else {
        return Ok(Outcome::done());
    };
    let keystone: Keystone = serde_json::from_value(cached)
        .map_err(|e| ReconcileError::Permanent(format!("{object} does not decode: {e}")))?;
    let owner = Owner::of(&keystone).map_err(|e| ReconcileError::Permanent(e.to_string()))?;
    let before = keystone.status.clone();
    let target = keystone.spec.target_cluster_ref.clone();
    let opened = target.as_ref().map(|t| cluster.open_target(&t.name));
    let mut pass = Pass::new(cluster, keystone, owner);
    pass.now = now;
    pass.probe = probe;
    match &opened {
        Some(Ok(children)) => pass.cluster = children.as_ref(),
        Some(Err(e)) => pass.target_error = Some(e.to_string()),
        None => {}
    }
    if pass.keystone.metadata.deletion_timestamp.is_some() {
        log::debug(&format!("{object} is being deleted"));
        let result = deletion::run(&mut pass, &before);
        return outcome(&object, result);
    }
    let result = match pass.target_error.clone() {
        Some(message) => {
            pass.condition(SECRETS_READY, false, "TargetClusterUnavailable", &message);
            let written = write_status(&mut pass, &before);
            written.map(|()| Some(SECRET_POLLING))
        }
        None => match finalizers::ensure_next(&mut pass) {
            Ok(None) => run_pass(&mut steps(), &mut pass, |pass, _| {
                write_status(pass, &before)
            }),
            added => added,
        },
    };
    outcome(&object, result)
}

/// Writes the status when it differs from `before`, with Ready recomputed and
/// observedGeneration stamped.
pub(crate) fn write_status(
    pass: &mut Pass<'_>,
    before: &Option<crate::types::KeystoneStatus>,
) -> Result<(), Error> {
    let generation = pass.keystone.metadata.generation.unwrap_or_default();
    let status = pass.status_mut();
    recompute_ready(&mut status.conditions, generation);
    status.observed_generation = generation;
    if pass.keystone.status.as_ref() == before.as_ref() {
        return Ok(());
    }
    let what = format!("writing the status of Keystone {}", pass.key(pass.name()));
    pass.primary_cluster
        .update_status_typed(&pass.keystone)
        .map_err(Error::cluster(what))?;
    Ok(())
}

fn outcome(object: &ObjectRef, result: StepResult) -> Result<Outcome, ReconcileError> {
    match result {
        Ok(None) => Ok(Outcome::done()),
        Ok(Some(after)) => Ok(Outcome::requeue(after)),
        Err(Error::Cluster {
            source: wasm_operator_sdk::Error::Api(ApiError::Conflict(_)),
            ..
        }) => Ok(Outcome::requeue(std::time::Duration::from_secs(1))),
        Err(error) => {
            log::warn(&format!("{object}: {error}"));
            Err(ReconcileError::Transient(error.to_string()))
        }
    }
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
