//! The rules over the spec as a whole (CobaltCore's webhook, in its order):
//!
//! | Rule | Field |
//! |---|---|
//! | `keystoneRef.name` set | `spec.keystoneRef.name` |
//! | exactly the block `type` names (one rule per block) | `spec.ldap`, `spec.oidc`, `spec.saml` |
//! | `mappings`, `groups` only on OIDC or SAML | `spec.mappings`, `spec.groups` |
//! | `extraOptions` only on LDAP | `spec.extraOptions` |
//! | `domain.name` not `default` in any case, and set | `spec.domain.name` |
//!
//! The block and type rules are also the schema's CEL rules (same messages); the webhook
//! copy holds where CEL is not evaluated.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::{BackendType, DEFAULT_DOMAIN, KeystoneIdentityBackendSpec};

/// The message of the Default-domain rule (the schema's, word for word).
pub(crate) const DEFAULT_DOMAIN_MESSAGE: &str = "the Default domain hosts the SQL-backed \
    service users and the bootstrap admin and must never be backed by an external identity \
    backend";

/// Checks the rules of the table above.
pub(super) fn check(spec: &KeystoneIdentityBackendSpec, errors: &mut FieldErrors) {
    if spec.keystone_ref.name.is_empty() {
        errors.required("spec.keystoneRef.name", "keystoneRef.name must be set");
    }
    let type_ = json!(spec.type_.as_str());
    let blocks = [
        ("ldap", BackendType::Ldap, spec.ldap.is_some()),
        ("oidc", BackendType::Oidc, spec.oidc.is_some()),
        ("saml", BackendType::Saml, spec.saml.is_some()),
    ];
    for (field, block_type, present) in blocks {
        if (spec.type_ == block_type) != present {
            errors.invalid(
                &format!("spec.{field}"),
                &type_,
                &format!(
                    "exactly one backend block matching spec.type must be set (type {} \
                     requires spec.{field})",
                    block_type.as_str()
                ),
            );
        }
    }
    let ldap = spec.type_ == BackendType::Ldap;
    if ldap && !spec.mappings.is_empty() {
        errors.invalid(
            "spec.mappings",
            &type_,
            "mappings are only supported on federation backends (type OIDC or SAML)",
        );
    }
    if ldap && !spec.groups.is_empty() {
        errors.invalid(
            "spec.groups",
            &type_,
            "groups are only supported on federation backends (type OIDC or SAML)",
        );
    }
    if !ldap && !spec.extra_options.is_empty() {
        errors.invalid(
            "spec.extraOptions",
            &type_,
            "extraOptions carries [ldap] section options and is only supported on type LDAP",
        );
    }
    let name = &spec.domain.name;
    if name.eq_ignore_ascii_case(DEFAULT_DOMAIN) {
        errors.invalid("spec.domain.name", &json!(name), DEFAULT_DOMAIN_MESSAGE);
    } else if name.is_empty() {
        errors.required("spec.domain.name", "domain.name must be set");
    }
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
