//! The deletion branch (facts §2.20): a Keystone with a deletionTimestamp runs no step; it
//! releases its finalizers, in the table's order, once what each guards is cleaned up.
//!
//! | # | Finalizer | Released when | Events |
//! |---|---|---|---|
//! | 1 | `keystone.openstack.c5c3.io/finalizer` ([`database`]) | Delete sent to MariaDB Database, User, Grant `{name}` (not waited for) | `FinalizingDatabase` (one was live), `DatabaseFinalized` |
//! | 2 | `keystone.openstack.c5c3.io/openbao-finalizer` ([`openbao`]) | the backup PushSecrets are gone, or the bounds below ran out | `FinalizingOpenBaoSecrets`, `OpenBaoSecretsFinalized`; Warnings `ESOAdoptionTimedOut`, `OpenBaoCleanupStalled` |
//! | 3 | `openstack.c5c3.io/remote-children` ([`remote_children`]) | the children on the target cluster are swept | Warning `RemoteChildrenAbandoned` |
//!
//! Before any of them, the children's cluster is resolved ([`resolve`]): the Keystone's own,
//! or the target cluster its `targetClusterRef` names, opened by the host. A target that
//! does not open makes the deletion wait, SecretsReady False `TargetClusterUnavailable`,
//! 15 s, until [`ABANDON_AFTER`] has passed since its deletionTimestamp; then every
//! finalizer is released without cleanup, each with a Warning `RemoteChildrenAbandoned`.
//!
//! The guest keeps nothing from one pass to the next, so every pass decides from the
//! cluster alone: which finalizers the Keystone still carries, which children exist and
//! in what state, and how long ago the Keystone's deletionTimestamp is at the pass's
//! `now` (read once when the pass starts). Every bound is computed from those two times.
//!
//! A pass that ends with one of these finalizers still on the Keystone (waiting, or
//! failed) writes its status as every pass does (skipped when unchanged); a pass that
//! released the last one writes nothing more (the API server may have removed the
//! Keystone), and a Keystone that carries none of them gets no request but its read.

pub(crate) mod database;
pub(crate) mod openbao;
pub(crate) mod remote_children;

use std::time::Duration;

use wasm_operator_sdk::{ApiError, Cluster, log};

use crate::conditions::SECRETS_READY;
use crate::finalizers::holds_any;
use crate::pass::{Pass, SECRET_POLLING, StepResult};
use crate::types::KeystoneStatus;

pub(crate) use wasm_operator_sdk::blocks::remote_children::ABANDON_AFTER;

/// Where the children the finalizers guard live, as far as the deletion can reach them.
///
/// Every finalizer flow matches it exhaustively.
#[derive(Clone, Copy)]
pub(crate) enum Children<'c> {
    /// On this cluster, next to the Keystone.
    Local(&'c dyn Cluster),
    /// On the target cluster the Keystone names, opened for this pass.
    Remote(&'c dyn Cluster),
    /// On a target cluster that did not resolve within [`ABANDON_AFTER`]: left where they
    /// are.
    Abandoned,
}

/// What resolving the children's cluster for a deletion gave.
enum Resolution<'c> {
    /// Clean up there.
    Children(Children<'c>),
    /// The target cluster does not resolve yet: wait (the message says why).
    Wait(String),
}

/// Runs the deletion branch over a Keystone with a deletionTimestamp; `before` is its
/// status as read, for the status write.
pub(crate) fn run(pass: &mut Pass<'_>, before: &Option<KeystoneStatus>) -> StepResult {
    if !holds_any(&pass.keystone) {
        log::debug(&format!(
            "Keystone {} is being deleted and carries none of this reconciler's finalizers",
            pass.key(pass.name())
        ));
        return Ok(None);
    }
    let result = match resolve(pass) {
        Resolution::Wait(message) => {
            pass.condition(SECRETS_READY, false, "TargetClusterUnavailable", &message);
            Ok(Some(SECRET_POLLING))
        }
        Resolution::Children(children) => release(pass, children),
    };
    if !holds_any(&pass.keystone) {
        return result;
    }
    let written = crate::reconcile::write_status(pass, before);
    match (result, written) {
        (Err(e), _) | (Ok(_), Err(e)) => Err(e),
        (Ok(after), Ok(())) => Ok(after),
    }
}

/// Releases the finalizers in order; the first flow that waits or fails ends the pass.
fn release(pass: &mut Pass<'_>, children: Children<'_>) -> StepResult {
    database::release(pass, children)?;
    if let Some(after) = openbao::release(pass, children)? {
        return Ok(Some(after));
    }
    remote_children::release(pass, children)?;
    Ok(None)
}

/// The children's cluster of a deleting Keystone: this one without a `targetClusterRef`;
/// the target with one that opened; with one that did not, a wait until [`ABANDON_AFTER`]
/// has passed since the deletionTimestamp, then [`Children::Abandoned`].
fn resolve<'c>(pass: &Pass<'c>) -> Resolution<'c> {
    let Some(target) = &pass.keystone.spec.target_cluster_ref else {
        return Resolution::Children(Children::Local(pass.cluster));
    };
    let Some(error) = &pass.target_error else {
        return Resolution::Children(Children::Remote(pass.cluster));
    };
    if since_deletion(pass) < ABANDON_AFTER {
        return Resolution::Wait(wasm_operator_sdk::blocks::remote_children::wait_message(
            error,
            &target.name,
        ));
    }
    log::info(&format!(
        "Keystone {}: target cluster {:?} did not resolve within {}; releasing the \
         finalizers and leaving its children behind",
        pass.key(pass.name()),
        target.name,
        go_duration(ABANDON_AFTER)
    ));
    Resolution::Children(Children::Abandoned)
}

/// How long before the pass's `now` the Keystone's deletionTimestamp is (zero when it has
/// none, or one in the future).
pub(crate) fn since_deletion(pass: &Pass<'_>) -> Duration {
    let Some(deleted) = &pass.keystone.metadata.deletion_timestamp else {
        return Duration::ZERO;
    };
    Duration::try_from(pass.now.0.duration_since(deleted.0)).unwrap_or(Duration::ZERO)
}

/// `duration` as Go prints a `time.Duration` under a minute-scale bound (`5m0s`, `10m0s`).
pub(crate) fn go_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match (seconds / 3600, seconds % 3600 / 60, seconds % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, m, s) => format!("{h}h{m}m{s}s"),
    }
}

/// `result` with a kind the cluster does not serve read as "none of that kind exists".
pub(crate) fn unserved_as<T>(
    result: Result<T, wasm_operator_sdk::Error>,
    none: T,
) -> Result<T, wasm_operator_sdk::Error> {
    match result {
        Err(wasm_operator_sdk::Error::Api(ApiError::NotServed(_))) => Ok(none),
        other => other,
    }
}

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
