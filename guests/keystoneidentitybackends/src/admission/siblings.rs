//! The checks against the other backends attached to the same Keystone (CobaltCore's
//! webhook): one list of the namespace's backends, keeping those that are not this one,
//! not being deleted (a replacement may be created while the old one tears down) and name
//! the same Keystone, in name order.
//!
//! | Rule (against each sibling) | Field | Message |
//! |---|---|---|
//! | domain names differ, case-insensitively | `spec.domain.name` | domain name collides with KeystoneIdentityBackend "s" attached to the same Keystone "k" (comparison is case-insensitive) |
//! | two federation backends: identity provider names differ | `spec.oidc.identityProviderName` / `spec.saml.identityProviderName` | identity provider name collides with … |
//! | not two SAML backends | `spec.saml` | at most one SAML backend per Keystone "k" is supported (…); KeystoneIdentityBackend "s" already provides one |
//! | two OIDC backends: the same remoteIDAttribute | `spec.oidc.remoteIDAttribute` | remoteIDAttribute must be uniform across all OIDC backends of Keystone "k" (…); KeystoneIdentityBackend "s" uses "v" |
//! | two OIDC backends: not both with introspection | `spec.oidc.oauth2Introspection.enabled` | at most one OIDC backend per Keystone may enable oauth2Introspection (…); KeystoneIdentityBackend "s" already enables it |
//!
//! A failed list fails the request closed (`Internal error` at `spec.domain.name`).
//! DECISION: the list is the host's watch cache of backends (the plugin's primary kind);
//! a sibling created an instant before may not be in it yet (CobaltCore reads past its
//! cache). A stored backend that does not decode is skipped with a warning rather than
//! blocking every write of the namespace.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;
use wasm_operator_sdk::{Cluster, KindRef, ListOptions};

use crate::types::KeystoneIdentityBackend;

/// The backends attached to `backend`'s Keystone besides it, by name; warnings for those
/// that do not decode.
fn attached(
    cluster: &dyn Cluster,
    backend: &KeystoneIdentityBackend,
    warnings: &mut Vec<String>,
) -> Result<Vec<KeystoneIdentityBackend>, String> {
    let listed = cluster
        .list(
            &KindRef::of::<KeystoneIdentityBackend>(),
            Some(backend.namespace()),
            &ListOptions::default(),
        )
        .map_err(|e| e.to_string())?;
    let mut siblings = Vec::new();
    for object in listed {
        let name = object
            .pointer("/metadata/name")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned();
        match serde_json::from_value::<KeystoneIdentityBackend>(object) {
            Ok(other) => siblings.push(other),
            Err(e) => warnings.push(format!(
                "KeystoneIdentityBackend {name:?} cannot be read for the cross-backend checks: {e}"
            )),
        }
    }
    siblings.retain(|other| {
        other.name() != backend.name()
            && !other.is_deleting()
            && other.spec.keystone_ref.name == backend.spec.keystone_ref.name
    });
    siblings.sort_by(|a, b| a.name().cmp(b.name()));
    Ok(siblings)
}

/// Checks `backend` against its siblings.
pub(super) fn check(
    cluster: &dyn Cluster,
    backend: &KeystoneIdentityBackend,
    errors: &mut FieldErrors,
    warnings: &mut Vec<String>,
) {
    let siblings = match attached(cluster, backend, warnings) {
        Ok(siblings) => siblings,
        Err(e) => {
            errors.internal(
                "spec.domain.name",
                &format!("listing KeystoneIdentityBackends for the cross-backend checks: {e}"),
            );
            return;
        }
    };
    let spec = &backend.spec;
    let keystone = &spec.keystone_ref.name;
    for other in &siblings {
        let sibling = other.name();
        if other.spec.domain.name.to_lowercase() == spec.domain.name.to_lowercase() {
            errors.invalid(
                "spec.domain.name",
                &json!(spec.domain.name),
                &format!(
                    "domain name collides with KeystoneIdentityBackend {sibling:?} attached to the same Keystone {keystone:?} (comparison is case-insensitive)"
                ),
            );
        }
        if backend.is_federation()
            && other.is_federation()
            && backend.identity_provider_name() == other.identity_provider_name()
        {
            let field = if spec.saml.is_some() {
                "spec.saml.identityProviderName"
            } else {
                "spec.oidc.identityProviderName"
            };
            errors.invalid(
                field,
                &json!(backend.identity_provider_name()),
                &format!(
                    "identity provider name collides with KeystoneIdentityBackend {sibling:?} attached to the same Keystone {keystone:?}"
                ),
            );
        }
        if spec.saml.is_some() && other.spec.saml.is_some() {
            errors.invalid(
                "spec.saml",
                &json!(spec.type_.as_str()),
                &format!(
                    "at most one SAML backend per Keystone {keystone:?} is supported (the mod_auth_mellon SP configuration projects onto a shared /v3 parent Location); KeystoneIdentityBackend {sibling:?} already provides one"
                ),
            );
        }
        let (Some(mine), Some(theirs)) = (&spec.oidc, &other.spec.oidc) else {
            continue;
        };
        if backend.remote_id_attribute() != other.remote_id_attribute() {
            errors.invalid(
                "spec.oidc.remoteIDAttribute",
                &json!(backend.remote_id_attribute()),
                &format!(
                    "remoteIDAttribute must be uniform across all OIDC backends of Keystone {keystone:?} (it renders into the single [openid] section); KeystoneIdentityBackend {sibling:?} uses {:?}",
                    other.remote_id_attribute()
                ),
            );
        }
        if mine.introspection_enabled() && theirs.introspection_enabled() {
            errors.invalid(
                "spec.oidc.oauth2Introspection.enabled",
                &json!(true),
                &format!(
                    "at most one OIDC backend per Keystone may enable oauth2Introspection (mod_auth_openidc's OIDCOAuth* directives are server-scoped); KeystoneIdentityBackend {sibling:?} already enables it"
                ),
            );
        }
    }
}

#[cfg(test)]
#[path = "siblings_tests.rs"]
mod tests;
