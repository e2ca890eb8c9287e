//! The backend's conditions (facts §3.3), and the aggregate Ready.
//!
//! | Type | Reasons |
//! |---|---|
//! | CredentialsReady | F `WaitingForParent`, `TargetClusterUnavailable`, `WaitingForCredentials`; T `CredentialsAvailable` |
//! | ConfigProjected | F `WaitingForProjection`; T `ConfigProjected` |
//! | Ready | CredentialsReady + ConfigProjected: T `AllReady` / F `NotAllReady` |
//!
//! CredentialsReady is the gate the Glance's Backends step reads (facts §3.0: never
//! Ready); this controller is the single writer of the backend's status.

use wasm_operator_sdk::blocks::conditions::{
    FALSE, NewCondition, TRUE, set_aggregate_ready, set_condition,
};

use crate::types::GlanceBackend;

/// Whether the S3 credentials Secret carries both data keys (the gate the parent reads).
pub(crate) const CREDENTIALS_READY: &str = "CredentialsReady";
/// Whether the Glance's Deployment mounts the backend's store section.
pub(crate) const CONFIG_PROJECTED: &str = "ConfigProjected";

pub(crate) const CREDENTIALS_AVAILABLE: &str = "CredentialsAvailable";
pub(crate) const WAITING_FOR_CREDENTIALS: &str = "WaitingForCredentials";
pub(crate) const WAITING_FOR_PARENT: &str = "WaitingForParent";
pub(crate) const CONFIG_PROJECTED_REASON: &str = "ConfigProjected";
pub(crate) const WAITING_FOR_PROJECTION: &str = "WaitingForProjection";

/// The sub-conditions Ready aggregates.
pub(crate) const READY_SET: [&str; 2] = [CREDENTIALS_READY, CONFIG_PROJECTED];

/// Sets `type_` on `backend` for its generation.
pub(crate) fn set(
    backend: &mut GlanceBackend,
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
pub(crate) fn finish(backend: &mut GlanceBackend) {
    let generation = backend.generation();
    let status = backend.status.get_or_insert_with(Default::default);
    set_aggregate_ready(&mut status.conditions, generation, &READY_SET);
    status.observed_generation = generation;
}
