//! Validation of how the Keystone is reached (facts §1.6): federation's trusted dashboards
//! (with a warning for each cleartext one) and the Gateway exposure with the public
//! endpoint it must match.

use std::collections::BTreeSet;

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use super::url;
use crate::types::KeystoneSpec;

/// Checks the trusted dashboards and the gateway of `spec`.
pub(super) fn check(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    let dashboards = spec
        .federation
        .as_ref()
        .map(|f| f.trusted_dashboards.as_slice())
        .unwrap_or_default();
    let mut seen = BTreeSet::new();
    for (i, origin) in dashboards.iter().enumerate() {
        let field = format!("spec.federation.trustedDashboards[{i}]");
        if !seen.insert(origin.as_str()) {
            errors.duplicate(&field, &json!(origin));
            continue;
        }
        match url::parse(origin) {
            Err(e) => {
                errors.invalid(&field, &json!(origin), &format!("must be a valid URL: {e}"));
            }
            Ok(u) if u.scheme != "http" && u.scheme != "https" => {
                errors.invalid(&field, &json!(origin), "scheme must be http or https");
            }
            Ok(u) if u.host.is_empty() => {
                errors.invalid(&field, &json!(origin), "URL must include a host");
            }
            Ok(_) => {}
        }
    }
    let Some(gateway) = &spec.gateway else {
        return;
    };
    if gateway.hostname.is_empty() {
        errors.required("spec.gateway.hostname", "");
    }
    if gateway.parent_ref.name.is_empty() {
        errors.required("spec.gateway.parentRef.name", "");
    }
    let endpoint = &spec.bootstrap.public_endpoint;
    if gateway.hostname.is_empty() || endpoint.is_empty() {
        return;
    }
    let field = "spec.bootstrap.publicEndpoint";
    match url::parse(endpoint) {
        Err(e) => {
            errors.invalid(
                field,
                &json!(endpoint),
                &format!("must be a valid URL: {e}"),
            );
        }
        Ok(u) if u.scheme != "https" => {
            errors.invalid(
                field,
                &json!(endpoint),
                "scheme must be https when spec.gateway is set (the Gateway's listener \
                 terminates TLS)",
            );
        }
        Ok(u) if u.hostname() != gateway.hostname => {
            errors.invalid(
                field,
                &json!(endpoint),
                &format!(
                    "host {:?} must equal spec.gateway.hostname {:?}",
                    u.hostname(),
                    gateway.hostname
                ),
            );
        }
        Ok(_) => {}
    }
}

/// A warning for every `http://` trusted dashboard: Keystone posts the unscoped WebSSO
/// token there after each federated login.
pub(super) fn warnings(spec: &KeystoneSpec) -> Vec<String> {
    let dashboards = spec
        .federation
        .as_ref()
        .map(|f| f.trusted_dashboards.as_slice())
        .unwrap_or_default();
    dashboards
        .iter()
        .enumerate()
        .filter(|(_, origin)| url::parse(origin).is_ok_and(|u| u.scheme == "http"))
        .map(|(i, origin)| {
            format!(
                "spec.federation.trustedDashboards[{i}] {origin:?} uses http://: Keystone \
                 posts the unscoped WebSSO token to this origin after every federated login, \
                 so the token would travel in cleartext; use https://"
            )
        })
        .collect()
}

#[cfg(test)]
#[path = "exposure_tests.rs"]
mod tests;
