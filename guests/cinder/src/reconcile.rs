//! One pass over a Cinder (facts §4): the table of named steps and the status write every
//! pass ends with.
//!
//! | # | Step | Condition |
//! |---|---|---|
//! | 1 | `secrets` ([`steps::secrets`]) | SecretsReady |
//! | 2 | `db-connection-secret` ([`steps::db_connection`]) | SecretsReady (on failure) |
//! | 3 | `backends` ([`steps::backends`]) | BackendsReady |
//! | 4 | `backup-backend` ([`steps::backup_backend`]) | BackupBackendReady |
//! | 5 | `config` ([`steps::config`]) | — |
//! | 6 | `database` ([`steps::database`]) | DatabaseReady |
//! | 7 | `volume-services` ([`steps::volume_services`]) | VolumeServicesReady |
//! | 8 | `backup-service` ([`steps::backup_service`]) | BackupServiceReady |
//! | 9 | `deployment` ([`steps::deployment`]) | DeploymentReady, CinderAPIReady |
//! | 10 | `not-required` ([`steps::not_required`]) | HPAReady, NetworkPolicyReady, HTTPRouteReady, DBPurgeReady |
//!
//! DECISION: facts §4's TransportURLSecret (RabbitMQ) and Scheduler steps are not part of
//! this minimal parent (no message bus runs here); the README says so.
//!
//! Before the steps: a Cinder that is gone is done; its `targetClusterRef` is opened
//! ([`targeting`]: the gate while it does not open, the remote-children finalizer, and the
//! deletion, which sweeps the children there); a deleting Cinder without that finalizer
//! needs nothing (its children go with it by owner reference).
//!
//! The first step that requeues or fails ends the pass. Whatever ended it, the status is
//! written: Ready recomputed over the twelve sub-conditions, observedGeneration stamped,
//! and no write at all when nothing changed.
//!
//! DECISION: no `cinder.openstack.c5c3.io/finalizer`: nothing outside the cluster is
//! cleaned up by the minimal parent (its MariaDB objects are owned, and mariadb-operator
//! drops the database). Only a targeted Cinder holds a finalizer, the remote-children one.

use std::time::Duration;

use wasm_operator_sdk::blocks::pipeline::{Step, run_pass};
use wasm_operator_sdk::blocks::remote_children;
use wasm_operator_sdk::{
    ApiError, Cluster, ClusterExt, ObjectRef, Outcome, Owner, ReadFrom, ReconcileError, Request,
    log,
};

use crate::conditions::recompute_ready;
use crate::error::Error;
use crate::pass::{Pass, StepResult};
use crate::types::{Cinder, CinderStatus};
use crate::{steps, targeting};

/// The steps of a pass, in order.
fn steps<'a>() -> Vec<Step<'a, Pass<'a>, Error>> {
    vec![
        Step::new("secrets", steps::secrets::run),
        Step::new("db-connection-secret", steps::db_connection::run),
        Step::new("backends", steps::backends::run),
        Step::new("backup-backend", steps::backup_backend::run),
        Step::new("config", steps::config::run),
        Step::new("database", steps::database::run),
        Step::new("volume-services", steps::volume_services::run),
        Step::new("backup-service", steps::backup_service::run),
        Step::new("deployment", steps::deployment::run),
        Step::new("not-required", steps::not_required::run),
    ]
}

/// Runs one pass for the Cinder of `request`.
pub fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
    let object = ObjectRef::of::<Cinder>(request.namespace.as_deref(), &request.name);
    let cached = cluster
        .get(&object, ReadFrom::Cache)
        .map_err(|e| ReconcileError::Transient(format!("reading {object}: {e}")))?;
    let Some(cached) = cached else {
        return Ok(Outcome::done());
    };
    let cinder: Cinder = serde_json::from_value(cached)
        .map_err(|e| ReconcileError::Permanent(format!("{object} does not decode: {e}")))?;
    let owner = Owner::of(&cinder).map_err(|e| ReconcileError::Permanent(e.to_string()))?;
    let before = cinder.status.clone();
    let target = cinder
        .spec
        .target_cluster_ref
        .as_ref()
        .map(|t| t.name.as_str());
    let opened = remote_children::open(cluster, target);
    let mut pass = Pass::new(cluster, cinder, owner);
    if let Some(children) = &opened.target {
        pass.cluster = children.as_ref();
    }
    pass.target_error = opened.error;
    let result = if pass.cinder.metadata.deletion_timestamp.is_some() {
        targeting::delete(&mut pass, &before)
    } else {
        match targeting::gate(&mut pass, &before) {
            Some(gated) => gated,
            None => run_pass(&mut steps(), &mut pass, |pass, _| {
                write_status(pass, &before)
            }),
        }
    };
    outcome(&object, result)
}

/// Writes the status when it differs from `before`, with Ready recomputed and
/// observedGeneration stamped.
pub(crate) fn write_status(
    pass: &mut Pass<'_>,
    before: &Option<CinderStatus>,
) -> Result<(), Error> {
    let generation = pass.cinder.metadata.generation.unwrap_or_default();
    let status = pass.status_mut();
    recompute_ready(&mut status.service.conditions, generation);
    status.service.observed_generation = generation;
    if pass.cinder.status.as_ref() == before.as_ref() {
        return Ok(());
    }
    let what = format!("writing the status of Cinder {}", pass.key(pass.name()));
    pass.primary_cluster
        .update_status_typed(&pass.cinder)
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
        }) => Ok(Outcome::requeue(Duration::from_secs(1))),
        Err(error) => {
            log::warn(&format!("{object}: {error}"));
            Err(ReconcileError::Transient(error.to_string()))
        }
    }
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
