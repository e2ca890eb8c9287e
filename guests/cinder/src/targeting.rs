//! The Cinder's `targetClusterRef` (facts §2.1, §2.20, §4): its children (the API, the
//! volume and backup services, their Jobs, Secrets and MariaDB objects) on the target
//! cluster the host opened; the Cinder itself (status, finalizers, events) and its
//! CinderBackends and CinderBackupBackends on this one. The decisions are the SDK's
//! ([`remote_children::gate`], [`remote_children::deletion`]); this module carries them out.
//!
//! | Case | What the pass does |
//! |---|---|
//! | no `targetClusterRef` | children here, collected by their owner references; no finalizer |
//! | a target that does not open | SecretsReady False `TargetClusterUnavailable` (the host's text), status written, 15 s; no finalizer added, no child written |
//! | a target that opens, the finalizer missing | [`FINALIZER`] added (no status write), run again at once |
//! | a target that opens, the finalizer held | the steps, every child read and written there |
//! | deleting, the finalizer not held | nothing |
//! | deleting, the target opens | the Cinder's labelled children of the [`swept`] kinds deleted there, the finalizer released |
//! | deleting, the target does not open, under 5 min | SecretsReady False `TargetClusterUnavailable` ("…; waiting at least 5m0s …"), 15 s |
//! | deleting, the target does not open for 5 min | Warning `RemoteChildrenAbandoned`, the finalizer released without a sweep |

use std::time::Duration;

use wasm_operator_sdk::blocks::remote_children::{
    self, Deletion, FINALIZER, Gate, REASON_ABANDONED, RemoteOwner, TARGET_CLUSTER_UNAVAILABLE,
    TARGET_POLLING, abandoned_message, sweep,
};
use wasm_operator_sdk::blocks::service::child_kinds;
use wasm_operator_sdk::{ClusterExt, EventType, KindRef, log};

use crate::conditions::SECRETS_READY;
use crate::error::Error;
use crate::pass::{Pass, StepResult};
use crate::types::CinderStatus;

/// The kinds a Cinder writes to a target cluster, swept on deletion.
pub(crate) fn swept() -> [KindRef; 7] {
    child_kinds()
}

/// Before the steps of a live Cinder: the gate when its target does not open, the
/// finalizer when it targets a cluster and lacks it; `None` to run the steps.
pub(crate) fn gate(pass: &mut Pass<'_>, before: &Option<CinderStatus>) -> Option<StepResult> {
    let targeted = pass.cinder.spec.target_cluster_ref.is_some();
    match remote_children::gate(
        &pass.cinder.metadata,
        targeted,
        pass.target_error.as_deref(),
    ) {
        Gate::Open => None,
        Gate::Unavailable(message) => {
            pass.condition(SECRETS_READY, false, TARGET_CLUSTER_UNAVAILABLE, &message);
            let written = crate::reconcile::write_status(pass, before);
            Some(written.map(|()| Some(TARGET_POLLING)))
        }
        Gate::AddFinalizer => {
            let what = format!(
                "adding finalizer {FINALIZER} to Cinder {}",
                pass.key(pass.name())
            );
            let added = pass
                .primary_cluster
                .add_finalizer(&mut pass.cinder, FINALIZER)
                .map_err(Error::cluster(what));
            Some(added.map(|_| Some(Duration::ZERO)))
        }
    }
}

/// The deletion of a Cinder: sweeps its children from the target and releases
/// [`FINALIZER`], or waits for the target, or abandons them (see the module table).
pub(crate) fn delete(pass: &mut Pass<'_>, before: &Option<CinderStatus>) -> StepResult {
    let target = pass
        .cinder
        .spec
        .target_cluster_ref
        .as_ref()
        .map(|t| t.name.clone())
        .unwrap_or_default();
    let now = wasm_operator_sdk::blocks::conditions::now();
    match remote_children::deletion(
        &pass.cinder.metadata,
        &target,
        pass.target_error.as_deref(),
        &now,
    ) {
        Deletion::NotHeld => return Ok(None),
        Deletion::Sweep => {
            let owner = RemoteOwner {
                kind: "Cinder",
                namespace: pass.namespace(),
                name: pass.name(),
            };
            let sent = sweep(pass.cluster, owner, &swept()).map_err(|e| Error::Cluster {
                what: format!("{} on target cluster {target:?}", e.what),
                source: e.source.into(),
            })?;
            log::debug(&format!(
                "Cinder {}: {sent} children deleted on target cluster {target:?}",
                pass.key(pass.name())
            ));
        }
        Deletion::Wait(message) => {
            pass.condition(SECRETS_READY, false, TARGET_CLUSTER_UNAVAILABLE, &message);
            crate::reconcile::write_status(pass, before)?;
            return Ok(Some(TARGET_POLLING));
        }
        Deletion::Abandon => pass.event(
            EventType::Warning,
            REASON_ABANDONED,
            &abandoned_message("Cinder"),
        ),
    }
    let what = format!(
        "removing finalizer {FINALIZER} from Cinder {}",
        pass.key(pass.name())
    );
    pass.primary_cluster
        .remove_finalizer(&mut pass.cinder, FINALIZER)
        .map_err(Error::cluster(what))?;
    Ok(None)
}

#[cfg(test)]
#[path = "targeting_tests.rs"]
mod tests;
