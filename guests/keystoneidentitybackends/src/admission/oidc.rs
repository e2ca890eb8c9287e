//! The OIDC rules (CobaltCore's webhook), in its order:
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | issuer is http(s) | `spec.oidc.issuer` | url must use the http:// or https:// scheme |
//! | issuer set | `spec.oidc.issuer` | Required value: issuer must be set |
//! | providerMetadataURL, when set, is http(s) | `spec.oidc.providerMetadataURL` | url must use … |
//! | not both providerMetadataURL and endpoints | `spec.oidc.endpoints` | providerMetadataURL and endpoints are mutually exclusive |
//! | no CR, LF or `"` in issuer, providerMetadataURL, clientID, protocolID, identityProviderName, remoteIDAttribute, responseType, each scope | that field | value must not contain newline, carriage-return, or double-quote characters |
//! | each endpoint, when set: http(s), no CR/LF/`"` | `spec.oidc.endpoints.<endpoint>` | as above |
//! | with endpoints and introspection enabled: an https introspectionEndpoint | `spec.oidc.endpoints.introspectionEndpoint` | Required value: … / … must use https:// … |
//! | client Secret ref without `key` | `spec.oidc.clientSecretRef.key` | key must be empty: … ("clientSecret") |
//!
//! The values are written into the proxy's Apache configuration and the metadata JSON, so
//! a line break or a quote would inject into them.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use super::has_line_break;
use crate::types::oidc::OidcBackendSpec;

/// The message of a value with a line break or a quote.
pub(super) const LINE_BREAK_OR_QUOTE: &str =
    "value must not contain newline, carriage-return, or double-quote characters";

/// Whether `value` would break out of a quoted directive: a CR, an LF or a `"`.
pub(super) fn breaks_out(value: &str) -> bool {
    has_line_break(value) || value.contains('"')
}

/// `spec.oidc.<field>`, refused unless it is empty or http(s).
fn check_scheme(field: &str, value: &str, errors: &mut FieldErrors) {
    if !value.is_empty() && !value.starts_with("http://") && !value.starts_with("https://") {
        errors.invalid(
            &format!("spec.oidc.{field}"),
            &json!(value),
            "url must use the http:// or https:// scheme",
        );
    }
}

/// `spec.oidc.<field>`, refused when it would break out of a directive.
fn check_quotable(field: &str, value: &str, errors: &mut FieldErrors) {
    if breaks_out(value) {
        errors.invalid(
            &format!("spec.oidc.{field}"),
            &json!(value),
            LINE_BREAK_OR_QUOTE,
        );
    }
}

/// Checks `spec.oidc`.
pub(super) fn check(oidc: &OidcBackendSpec, errors: &mut FieldErrors) {
    check_scheme("issuer", &oidc.issuer, errors);
    if oidc.issuer.is_empty() {
        errors.required("spec.oidc.issuer", "issuer must be set");
    }
    check_scheme("providerMetadataURL", &oidc.provider_metadata_url, errors);
    if !oidc.provider_metadata_url.is_empty() && oidc.endpoints.is_some() {
        errors.invalid(
            "spec.oidc.endpoints",
            &json!(""),
            "providerMetadataURL and endpoints are mutually exclusive",
        );
    }
    let quoted = [
        ("issuer", &oidc.issuer),
        ("providerMetadataURL", &oidc.provider_metadata_url),
        ("clientID", &oidc.client_id),
        ("protocolID", &oidc.protocol_id),
        ("identityProviderName", &oidc.identity_provider_name),
        ("remoteIDAttribute", &oidc.remote_id_attribute),
        ("responseType", &oidc.response_type),
    ];
    for (field, value) in quoted {
        check_quotable(field, value, errors);
    }
    for (i, scope) in oidc.scopes.iter().enumerate() {
        check_quotable(&format!("scopes[{i}]"), scope, errors);
    }
    if let Some(endpoints) = &oidc.endpoints {
        let all = [
            ("authorizationEndpoint", &endpoints.authorization_endpoint),
            ("tokenEndpoint", &endpoints.token_endpoint),
            ("jwksURI", &endpoints.jwks_uri),
            ("userinfoEndpoint", &endpoints.userinfo_endpoint),
            ("endSessionEndpoint", &endpoints.end_session_endpoint),
            ("introspectionEndpoint", &endpoints.introspection_endpoint),
        ];
        for (name, value) in all {
            let field = format!("endpoints.{name}");
            check_scheme(&field, value, errors);
            check_quotable(&field, value, errors);
        }
        let introspection = &endpoints.introspection_endpoint;
        let field = "spec.oidc.endpoints.introspectionEndpoint";
        if oidc.introspection_enabled() {
            if introspection.is_empty() {
                errors.required(
                    field,
                    "introspectionEndpoint must be set when oauth2Introspection is enabled with explicit endpoints",
                );
            } else if !introspection.starts_with("https://") {
                errors.invalid(
                    field,
                    &json!(introspection),
                    "introspectionEndpoint must use https:// (mod_auth_openidc rejects http introspection endpoints)",
                );
            }
        }
    }
    let key = &oidc.client_secret_ref.key;
    if !key.is_empty() {
        errors.invalid(
            "spec.oidc.clientSecretRef.key",
            &json!(key),
            r#"key must be empty: the client Secret's data key is fixed ("clientSecret")"#,
        );
    }
}

#[cfg(test)]
#[path = "oidc_tests.rs"]
mod tests;
