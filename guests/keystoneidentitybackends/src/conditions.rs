//! The backend's conditions (facts §3.2 "Conditions and reasons"), the transient-reason
//! rule, and the aggregate Ready.
//!
//! | Type | Reasons |
//! |---|---|
//! | DomainReady | F `KeystoneNotFound`, `WaitingForKeystoneAPI`, `AdminSecretUnavailable`, `IdentityAPIError`, `DomainNotFound`, `DomainAlreadyExists`; T `DomainProvisioned`, `DomainAdopted` |
//! | ConfigProjected | F `WaitingForProjection`, `WaitingForRollout`; T `ConfigProjected` |
//! | FederationObjectsReady (OIDC, SAML) | T `FederationObjectsProvisioned`; F `IdentityAPIError`, `NoMappingRules` |
//! | MappingsReady (OIDC, SAML) | T `MappingsApplied`; F `NoMappingRules`, `RoleOrProjectNotFound`, `IdentityAPIError` |
//! | Ready | DomainReady + ConfigProjected (LDAP); + FederationObjectsReady + MappingsReady (OIDC, SAML) |
//!
//! Transient-reason rule ([`set`]): a DomainReady, FederationObjectsReady or
//! MappingsReady that stands True is not demoted to False with
//! [`WAITING_FOR_KEYSTONE_API`], [`ADMIN_SECRET_UNAVAILABLE`] or [`IDENTITY_API_ERROR`]:
//! those report a failed observation, not a finding. Projecting an OIDC backend rolls the
//! Keystone and briefly takes its API away; a demotion then would make the Keystone
//! de-project the backend, roll again, and so on. ConfigProjected is set directly.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use wasm_operator_sdk::blocks::conditions::{
    FALSE, NewCondition, TRUE, find, set_aggregate_ready, set_condition,
};

use crate::types::KeystoneIdentityBackend;

/// Whether the backend's domain exists and is the backend's.
pub(crate) const DOMAIN_READY: &str = "DomainReady";
/// Whether the Keystone's Deployment runs the backend's rendered config.
pub(crate) const CONFIG_PROJECTED: &str = "ConfigProjected";
/// Whether the identity provider and protocol are registered (federation types).
pub(crate) const FEDERATION_OBJECTS_READY: &str = "FederationObjectsReady";
/// Whether the mapping, groups and role assignments are applied (federation types).
pub(crate) const MAPPINGS_READY: &str = "MappingsReady";

pub(crate) const KEYSTONE_NOT_FOUND: &str = "KeystoneNotFound";
pub(crate) const WAITING_FOR_KEYSTONE_API: &str = "WaitingForKeystoneAPI";
pub(crate) const ADMIN_SECRET_UNAVAILABLE: &str = "AdminSecretUnavailable";
pub(crate) const IDENTITY_API_ERROR: &str = "IdentityAPIError";
pub(crate) const DOMAIN_NOT_FOUND: &str = "DomainNotFound";
pub(crate) const DOMAIN_ALREADY_EXISTS: &str = "DomainAlreadyExists";
pub(crate) const DOMAIN_PROVISIONED: &str = "DomainProvisioned";
pub(crate) const DOMAIN_ADOPTED: &str = "DomainAdopted";
pub(crate) const WAITING_FOR_PROJECTION: &str = "WaitingForProjection";
pub(crate) const WAITING_FOR_ROLLOUT: &str = "WaitingForRollout";
pub(crate) const CONFIG_PROJECTED_REASON: &str = "ConfigProjected";
pub(crate) const FEDERATION_OBJECTS_PROVISIONED: &str = "FederationObjectsProvisioned";
pub(crate) const NO_MAPPING_RULES: &str = "NoMappingRules";
pub(crate) const MAPPINGS_APPLIED: &str = "MappingsApplied";
pub(crate) const ROLE_OR_PROJECT_NOT_FOUND: &str = "RoleOrProjectNotFound";

/// The reasons that never demote a True condition.
const TRANSIENT: [&str; 3] = [
    WAITING_FOR_KEYSTONE_API,
    ADMIN_SECRET_UNAVAILABLE,
    IDENTITY_API_ERROR,
];

/// Sets `type_` for `generation` under the transient-reason rule: a False with a
/// [`TRANSIENT`] reason leaves a True condition as it is.
pub(crate) fn set(
    conditions: &mut Vec<Condition>,
    generation: i64,
    type_: &str,
    ready: bool,
    reason: &str,
    message: &str,
) {
    let guarded = type_ != CONFIG_PROJECTED;
    if guarded
        && !ready
        && TRANSIENT.contains(&reason)
        && find(conditions, type_).is_some_and(|c| c.status == TRUE)
    {
        return;
    }
    set_condition(
        conditions,
        &NewCondition {
            type_,
            status: if ready { TRUE } else { FALSE },
            reason,
            message,
            observed_generation: generation,
        },
    );
}

/// The sub-conditions Ready aggregates for `backend`'s type.
pub(crate) fn ready_set(backend: &KeystoneIdentityBackend) -> &'static [&'static str] {
    if backend.is_federation() {
        &[
            DOMAIN_READY,
            FEDERATION_OBJECTS_READY,
            MAPPINGS_READY,
            CONFIG_PROJECTED,
        ]
    } else {
        &[DOMAIN_READY, CONFIG_PROJECTED]
    }
}

/// Recomputes Ready over [`ready_set`] and stamps observedGeneration.
pub(crate) fn finish(backend: &mut KeystoneIdentityBackend) {
    let generation = backend.metadata.generation.unwrap_or_default();
    let set = ready_set(backend);
    let status = backend.status.get_or_insert_with(Default::default);
    set_aggregate_ready(&mut status.conditions, generation, set);
    status.observed_generation = generation;
}

#[cfg(test)]
#[path = "conditions_tests.rs"]
mod tests;
