//! The store's conditions (facts §3.6), and the aggregate Ready.
//!
//! | Type | Reasons |
//! |---|---|
//! | CredentialsReady | T `CredentialsAvailable`; F `WaitingForCredentials`, `WaitingForParent`, `TargetClusterUnavailable`, `InvalidCredentials`, `InsufficientCapabilities`, `OpenBaoUnreachable`, `ProvisioningDenied` |
//! | ProvisioningReady (managed only) | T `Provisioned`; F `InstanceNotFound`, `WaitingForInstance`, `WaitingForInstanceTLS`, `InstanceNotProvisioned`, `ProvisioningDenied`, `OpenBaoUnreachable` |
//! | ConfigProjected | T `ConfigProjected`; F `WaitingForProjection` |
//! | Ready | managed: CredentialsReady + ProvisioningReady + ConfigProjected; brownfield: CredentialsReady + ConfigProjected (a ProvisioningReady left from managed is removed); T `AllReady` / F `NotAllReady` |
//!
//! CredentialsReady is the gate the Barbican's SecretStores step reads (facts §3.0: never
//! Ready); this controller is the single writer of the store's status.

use wasm_operator_sdk::blocks::conditions::{
    FALSE, NewCondition, TRUE, set_aggregate_ready, set_condition,
};

use crate::types::BarbicanSecretStore;

/// Whether the store's AppRole credentials exist and the server accepts them (the gate
/// the parent reads).
pub(crate) const CREDENTIALS_READY: &str = "CredentialsReady";
/// Whether the OpenBaoCluster of a managed store carries the mount and the AppRole.
pub(crate) const PROVISIONING_READY: &str = "ProvisioningReady";
/// Whether the Barbican's Deployment mounts the store's section.
pub(crate) const CONFIG_PROJECTED: &str = "ConfigProjected";

pub(crate) const CREDENTIALS_AVAILABLE: &str = "CredentialsAvailable";
pub(crate) const WAITING_FOR_CREDENTIALS: &str = "WaitingForCredentials";
pub(crate) const WAITING_FOR_PARENT: &str = "WaitingForParent";
pub(crate) const INVALID_CREDENTIALS: &str = "InvalidCredentials";
pub(crate) const INSUFFICIENT_CAPABILITIES: &str = "InsufficientCapabilities";
pub(crate) const OPENBAO_UNREACHABLE: &str = "OpenBaoUnreachable";
pub(crate) const PROVISIONING_DENIED: &str = "ProvisioningDenied";

pub(crate) const PROVISIONED: &str = "Provisioned";
pub(crate) const INSTANCE_NOT_FOUND: &str = "InstanceNotFound";
pub(crate) const WAITING_FOR_INSTANCE: &str = "WaitingForInstance";
pub(crate) const WAITING_FOR_INSTANCE_TLS: &str = "WaitingForInstanceTLS";
pub(crate) const INSTANCE_NOT_PROVISIONED: &str = "InstanceNotProvisioned";

pub(crate) const CONFIG_PROJECTED_REASON: &str = "ConfigProjected";
pub(crate) const WAITING_FOR_PROJECTION: &str = "WaitingForProjection";

/// The sub-conditions Ready aggregates for a managed store.
pub(crate) const MANAGED_READY_SET: [&str; 3] =
    [CREDENTIALS_READY, PROVISIONING_READY, CONFIG_PROJECTED];
/// The sub-conditions Ready aggregates for a brownfield store.
pub(crate) const BROWNFIELD_READY_SET: [&str; 2] = [CREDENTIALS_READY, CONFIG_PROJECTED];

/// Sets `type_` on `store` for its generation.
pub(crate) fn set(
    store: &mut BarbicanSecretStore,
    type_: &str,
    ready: bool,
    reason: &str,
    message: &str,
) {
    let observed_generation = store.generation();
    let status = store.status.get_or_insert_with(Default::default);
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

/// Removes `type_` from `store`'s conditions.
pub(crate) fn remove(store: &mut BarbicanSecretStore, type_: &str) {
    if let Some(status) = store.status.as_mut() {
        status.conditions.retain(|c| c.type_ != type_);
    }
}

/// Recomputes Ready over the mode's set and stamps observedGeneration.
pub(crate) fn finish(store: &mut BarbicanSecretStore) {
    let generation = store.generation();
    let managed = store.is_managed();
    let status = store.status.get_or_insert_with(Default::default);
    if managed {
        set_aggregate_ready(&mut status.conditions, generation, &MANAGED_READY_SET);
    } else {
        set_aggregate_ready(&mut status.conditions, generation, &BROWNFIELD_READY_SET);
    }
    status.observed_generation = generation;
}
