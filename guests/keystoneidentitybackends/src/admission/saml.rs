//! The SAML rules (CobaltCore's webhook), in its order:
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | idpEntityID set | `spec.saml.idpEntityID` | Required value: idpEntityID must be set |
//! | no CR, LF or `"` in idpEntityID, protocolID, identityProviderName, remoteIDAttribute | that field | value must not contain newline, carriage-return, or double-quote characters |
//! | remoteIDAttribute, when set, matches `^HTTP_[A-Za-z0-9_]+$` | `spec.saml.remoteIDAttribute` | remoteIDAttribute must match … |
//! | protocolID is no section the Keystone renders | `spec.saml.protocolID` | protocolID "x" collides with the operator-owned keystone.conf section of the same name |
//! | each forwardAttributes entry matches `^[A-Za-z0-9_]+$`, once | `spec.saml.forwardAttributes[i]` | … / Duplicate value |
//! | exactly one metadata source | `spec.saml.idpMetadata` | exactly one of inline, secretRef, or url must be set |
//! | metadata url is https | `spec.saml.idpMetadata.url` | url must use https:// … |
//! | metadata Secret ref without `key` | `spec.saml.idpMetadata.secretRef.key` | key must be empty: … ("idp-metadata.xml") |
//! | inline metadata is one EntityDescriptor whose entityID is idpEntityID | `spec.saml.idpMetadata.inline` | inline IdP metadata … |
//! | SP certificate Secret ref without `key` | `spec.saml.sp.certificateSecretRef.key` | key must be empty: … ("tls.crt" and "tls.key") |

use std::collections::BTreeSet;

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use super::oidc::{LINE_BREAK_OR_QUOTE, breaks_out};
use super::saml_metadata::entity_id;
use crate::types::saml::SamlBackendSpec;

/// The `keystone.conf` sections the Keystone renders itself: a SAML protocol id names a
/// `[<protocolID>]` section, which must not be one of them.
///
/// DECISION: the sections of the Keystone crate's owned keys
/// (`guests/keystone/src/admission/owned_keys.rs`), copied: a plugin cannot link another.
pub(crate) const RESERVED_SECTIONS: &[&str] = &[
    "DEFAULT",
    "auth",
    "cache",
    "credential",
    "database",
    "federation",
    "fernet_tokens",
    "identity",
    "memcache",
    "openid",
    "oslo_middleware",
    "oslo_policy",
    "paste_deploy",
    "token",
];

/// Whether `value` is `HTTP_` and one or more of letters, digits and underscores.
fn is_header_attribute(value: &str) -> bool {
    value
        .strip_prefix("HTTP_")
        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(is_name_byte))
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Checks `spec.saml`.
pub(super) fn check(saml: &SamlBackendSpec, errors: &mut FieldErrors) {
    if saml.idp_entity_id.is_empty() {
        errors.required("spec.saml.idpEntityID", "idpEntityID must be set");
    }
    let quoted = [
        ("idpEntityID", &saml.idp_entity_id),
        ("protocolID", &saml.protocol_id),
        ("identityProviderName", &saml.identity_provider_name),
        ("remoteIDAttribute", &saml.remote_id_attribute),
    ];
    for (field, value) in quoted {
        if breaks_out(value) {
            errors.invalid(
                &format!("spec.saml.{field}"),
                &json!(value),
                LINE_BREAK_OR_QUOTE,
            );
        }
    }
    let attribute = &saml.remote_id_attribute;
    if !attribute.is_empty() && !is_header_attribute(attribute) {
        errors.invalid(
            "spec.saml.remoteIDAttribute",
            &json!(attribute),
            "remoteIDAttribute must match ^HTTP_[A-Za-z0-9_]+$ (it is conveyed to keystone as a request header across the sidecar hop)",
        );
    }
    if RESERVED_SECTIONS.contains(&saml.protocol_id.as_str()) {
        errors.invalid(
            "spec.saml.protocolID",
            &json!(saml.protocol_id),
            &format!(
                "protocolID {:?} collides with the operator-owned keystone.conf section of the same name",
                saml.protocol_id
            ),
        );
    }
    let mut seen = BTreeSet::new();
    for (i, attribute) in saml.forward_attributes.iter().enumerate() {
        let field = format!("spec.saml.forwardAttributes[{i}]");
        if attribute.is_empty() || !attribute.bytes().all(is_name_byte) {
            errors.invalid(
                &field,
                &json!(attribute),
                "forwardAttributes entry must match ^[A-Za-z0-9_]+$ (it renders into Apache header directives)",
            );
        } else if !seen.insert(attribute.as_str()) {
            errors.duplicate(&field, &json!(attribute));
        }
    }
    check_metadata(saml, errors);
    if let Some(reference) = saml
        .sp
        .as_ref()
        .and_then(|sp| sp.certificate_secret_ref.as_ref())
        .filter(|r| !r.key.is_empty())
    {
        errors.invalid(
            "spec.saml.sp.certificateSecretRef.key",
            &json!(reference.key),
            r#"key must be empty: the SP certificate Secret's data keys are fixed ("tls.crt" and "tls.key")"#,
        );
    }
}

/// The rules of `spec.saml.idpMetadata`.
fn check_metadata(saml: &SamlBackendSpec, errors: &mut FieldErrors) {
    let metadata = &saml.idp_metadata;
    let sources = [
        !metadata.inline.is_empty(),
        metadata.secret_ref.is_some(),
        !metadata.url.is_empty(),
    ]
    .into_iter()
    .filter(|set| *set)
    .count();
    if sources != 1 {
        errors.invalid(
            "spec.saml.idpMetadata",
            &json!(sources),
            "exactly one of inline, secretRef, or url must be set",
        );
    }
    if !metadata.url.is_empty() && !metadata.url.starts_with("https://") {
        errors.invalid(
            "spec.saml.idpMetadata.url",
            &json!(metadata.url),
            "url must use https:// (the IdP metadata carries the assertion-signing certificate; a plaintext fetch lets an on-path attacker substitute the trust anchor)",
        );
    }
    if let Some(reference) = metadata.secret_ref.as_ref().filter(|r| !r.key.is_empty()) {
        errors.invalid(
            "spec.saml.idpMetadata.secretRef.key",
            &json!(reference.key),
            r#"key must be empty: the metadata Secret's data key is fixed ("idp-metadata.xml")"#,
        );
    }
    if metadata.inline.is_empty() {
        return;
    }
    let field = "spec.saml.idpMetadata.inline";
    match entity_id(&metadata.inline) {
        Err(cause) => {
            errors.invalid(
                field,
                &json!("<xml>"),
                &format!("inline IdP metadata is not a single SAML EntityDescriptor: {cause}"),
            );
        }
        Ok(id) if !saml.idp_entity_id.is_empty() && id != saml.idp_entity_id => {
            errors.invalid(
                field,
                &json!(id),
                &format!(
                    "inline IdP metadata entityID {id:?} does not match spec.saml.idpEntityID {:?}",
                    saml.idp_entity_id
                ),
            );
        }
        Ok(_) => {}
    }
}

#[cfg(test)]
#[path = "saml_tests.rs"]
mod tests;
