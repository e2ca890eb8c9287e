//! The backup target's conditions (facts §3.5: CinderBackend's vocabulary), and the
//! aggregate Ready.
//!
//! | Type | Reasons |
//! |---|---|
//! | CredentialsReady | T `CredentialsNotRequired` (NFS), `CredentialsAvailable` (RBD); F `WaitingForCredentials`, `WaitingForParent`, `TargetClusterUnavailable` |
//! | ConfigProjected | T `ConfigProjected`; F `WaitingForProjection` |
//! | Ready | CredentialsReady + ConfigProjected: T `AllReady` / F `NotAllReady` |
//!
//! CredentialsReady is the gate the Cinder's BackupBackend step reads (facts §3.0: never
//! Ready); this controller is the single writer of the target's status.

use wasm_operator_sdk::blocks::conditions::{
    FALSE, NewCondition, TRUE, set_aggregate_ready, set_condition,
};

use crate::types::CinderBackupBackend;

/// Whether the target needs nothing (NFS) or its RBD key is usable: the gate the parent
/// reads.
pub(crate) const CREDENTIALS_READY: &str = "CredentialsReady";
/// Whether the Cinder's backup Deployment mounts the target's Secret.
pub(crate) const CONFIG_PROJECTED: &str = "ConfigProjected";
pub(crate) const CREDENTIALS_NOT_REQUIRED: &str = "CredentialsNotRequired";
pub(crate) const CREDENTIALS_AVAILABLE: &str = "CredentialsAvailable";
pub(crate) const WAITING_FOR_CREDENTIALS: &str = "WaitingForCredentials";
pub(crate) const WAITING_FOR_PARENT: &str = "WaitingForParent";
pub(crate) const CONFIG_PROJECTED_REASON: &str = "ConfigProjected";
pub(crate) const WAITING_FOR_PROJECTION: &str = "WaitingForProjection";

/// The sub-conditions Ready aggregates.
pub(crate) const READY_SET: [&str; 2] = [CREDENTIALS_READY, CONFIG_PROJECTED];

/// Sets `type_` on `target` for its generation.
pub(crate) fn set(
    target: &mut CinderBackupBackend,
    type_: &str,
    ready: bool,
    reason: &str,
    message: &str,
) {
    let observed_generation = target.generation();
    let status = target.status.get_or_insert_with(Default::default);
    set_condition(
        &mut status.conditions,
        &NewCondition {
            type_,
            status: if ready { TRUE } else { FALSE },
            reason,
            message,
            observed_generation,
        },
    );
}

/// Recomputes Ready over [`READY_SET`] and stamps observedGeneration.
pub(crate) fn finish(target: &mut CinderBackupBackend) {
    let generation = target.generation();
    let status = target.status.get_or_insert_with(Default::default);
    set_aggregate_ready(&mut status.conditions, generation, &READY_SET);
    status.observed_generation = generation;
}
