//! One pass, as a table of named steps.
//!
//! | Step           | What it does |
//! |----------------|--------------|
//! | `secrets`      | creates and fills the Secrets of spec.secrets ([`crate::reconcile_secrets`]) |
//! | `certificates` | the CA, TLS and chain Secrets of each certificate set ([`crate::reconcile_certificates`]) |
//! | `events`       | records SecretTypeKept and SecretDeclaredTwice ([`crate::events`]) |
//! | `status`       | status.secrets and the Ready condition ([`crate::status`]) |
//!
//! Before the steps: a GitLabSecrets that is gone, or being deleted, gets no writes. A step
//! may end the pass with a requeue after a second (stale cache, status conflict). After the
//! steps the pass ends by its worst failure: a Secret write refused as invalid (422) or too
//! large (413), and a plan the planner refused (an input no retry changes), are not retried
//! (the next change starts the next pass); anything else, a Secret write refused with a
//! conflict included, is retried with the controller's backoff. A pass that succeeds does
//! not requeue.

use wasm_operator_sdk::planner::Planner;
use wasm_operator_sdk::{Cluster, ObjectRef, Outcome, ReadFrom, ReconcileError, Request, log};

use crate::error::{Error, Result, Retry};
use crate::freshness::STALE_REQUEUE;
use crate::pass::Pass;
use crate::types::GitLabSecrets;
use crate::{declared, events, reconcile_certificates, reconcile_secrets, status};

/// How a step ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on with the next step.
    Continue,
    /// End the pass and requeue after [`STALE_REQUEUE`].
    Requeue,
}

/// A named step of a pass.
type Step = (&'static str, fn(&mut Pass<'_>) -> Result<Flow>);

/// The steps of a pass, in order.
const STEPS: &[Step] = &[
    ("secrets", reconcile_secrets::run),
    ("certificates", reconcile_certificates::run),
    ("events", |pass| {
        events::record(pass);
        Ok(Flow::Continue)
    }),
    ("status", status::run),
];

/// Runs one pass for the GitLabSecrets of `request`, planning with `planner`.
pub fn reconcile(
    cluster: &dyn Cluster,
    planner: &dyn Planner,
    request: &Request,
) -> Result<Outcome, ReconcileError> {
    let object = ObjectRef::of::<GitLabSecrets>(request.namespace.as_deref(), &request.name);
    let cached = cluster
        .get_json(&object, ReadFrom::Cache)
        .map_err(|source| Error::ReadPrimary {
            object: object.key(),
            source,
        })?;
    let Some(cached) = cached else {
        return Ok(Outcome::done());
    };
    let (primary, spec) = declared::read(cached).map_err(|message| Error::DecodePrimary {
        object: object.key(),
        message,
    })?;
    if primary.metadata.deletion_timestamp.is_some() {
        log::debug(&format!("{object} is being deleted: no writes"));
        return Ok(Outcome::done());
    }
    let mut pass = Pass::new(cluster, planner, primary, spec);
    for (name, step) in STEPS {
        match step(&mut pass) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Requeue) => {
                log::debug(&format!("{object}: step {name} requeues"));
                return Ok(Outcome::requeue(STALE_REQUEUE));
            }
            Err(error) => {
                log::warn(&format!("{object}: step {name} failed: {error}"));
                return Err(error.into());
            }
        }
    }
    outcome(&pass)
}

/// How a pass that ran every step ends: by its worst failure.
fn outcome(pass: &Pass<'_>) -> Result<Outcome, ReconcileError> {
    let failures: Vec<&Error> = pass
        .results
        .iter()
        .filter_map(|r| r.failure.as_ref())
        .collect();
    let message = || {
        failures
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    };
    match failures.iter().map(|f| f.retry()).max() {
        None => Ok(Outcome::done()),
        Some(Retry::Backoff) => Err(ReconcileError::Transient(message())),
        Some(Retry::Requeue) => Ok(Outcome::requeue(STALE_REQUEUE)),
        Some(Retry::NextChange) => Err(ReconcileError::Permanent(message())),
    }
}
