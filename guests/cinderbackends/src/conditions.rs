//! The backend's conditions (facts §3.4), and the aggregate Ready.
//!
//! | Type | Reasons |
//! |---|---|
//! | CredentialsReady | T `CredentialsNotRequired` (NFS), `CredentialsAvailable` (RBD); F `WaitingForCredentials`, `WaitingForParent`, `TargetClusterUnavailable` |
//! | ConfigProjected | T `ConfigProjected`; F `WaitingForProjection` |
//! | Ready | CredentialsReady + ConfigProjected: T `AllReady` / F `NotAllReady`; while deleting F `Detaching` |
//!
//! CredentialsReady is the gate the Cinder's Backends step reads (facts §3.0: never
//! Ready); this controller is the single writer of the backend's status.

use wasm_operator_sdk::blocks::conditions::{
    FALSE, NewCondition, TRUE, set_aggregate_ready, set_condition,
};

use crate::types::CinderBackend;

/// Whether the backend needs nothing (NFS) or its RBD key is usable: the gate the parent
/// reads.
pub(crate) const CREDENTIALS_READY: &str = "CredentialsReady";
/// Whether the backend's cinder-volume Deployment mounts its section.
pub(crate) const CONFIG_PROJECTED: &str = "ConfigProjected";
/// The aggregate.
pub(crate) const READY: &str = "Ready";

pub(crate) const CREDENTIALS_NOT_REQUIRED: &str = "CredentialsNotRequired";
pub(crate) const CREDENTIALS_AVAILABLE: &str = "CredentialsAvailable";
pub(crate) const WAITING_FOR_CREDENTIALS: &str = "WaitingForCredentials";
pub(crate) const WAITING_FOR_PARENT: &str = "WaitingForParent";
pub(crate) const CONFIG_PROJECTED_REASON: &str = "ConfigProjected";
pub(crate) const WAITING_FOR_PROJECTION: &str = "WaitingForProjection";
pub(crate) const DETACHING: &str = "Detaching";

/// The sub-conditions Ready aggregates.
pub(crate) const READY_SET: [&str; 2] = [CREDENTIALS_READY, CONFIG_PROJECTED];

/// Sets `type_` on `backend` for its generation.
pub(crate) fn set(
    backend: &mut CinderBackend,
    type_: &str,
    ready: bool,
    reason: &str,
    message: &str,
) {
    let observed_generation = backend.generation();
    let status = backend.status.get_or_insert_with(Default::default);
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
pub(crate) fn finish(backend: &mut CinderBackend) {
    let generation = backend.generation();
    let status = backend.status.get_or_insert_with(Default::default);
    set_aggregate_ready(&mut status.conditions, generation, &READY_SET);
    status.observed_generation = generation;
}

/// Stamps observedGeneration only (Ready was set by the caller: `Detaching`).
pub(crate) fn stamp(backend: &mut CinderBackend) {
    let generation = backend.generation();
    backend
        .status
        .get_or_insert_with(Default::default)
        .observed_generation = generation;
}
