//! `spec.extraOptions` (CobaltCore's webhook, the shared extraOptions rules): each key in
//! sorted order, the first failing rule only —
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | a key | `spec.extraOptions` | option name must not be empty |
//! | key matches `^[A-Za-z0-9_]+$` | `spec.extraOptions[key]` | option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore) |
//! | key not rendered by the operator ([`DENYLIST`]) | `spec.extraOptions[key]` | option "k" is owned by <owner> and must not be set via extraOptions |
//!
//! — then, for a key past the denylist, no CR/LF in the value: "value must not contain
//! newline or carriage-return characters". The charset check comes first: the denylist
//! matches exact strings, and a variant with a trailing space or a newline is not equal
//! to the option oslo.config reads it as.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::BarbicanSecretStoreSpec;

/// The `[vault_plugin]` and `[secretstore:<name>]` options extraOptions may not set, and
/// what owns each (CobaltCore's `openBaoExtraOptionsDenylist`, in its order).
pub(crate) const DENYLIST: &[(&str, &str)] = &[
    (
        "vault_url",
        "the operator (derived from spec.openBao.instanceRef, or spec.openBao.server.url)",
    ),
    (
        "use_ssl",
        "the operator (derived from the resolved server URL's scheme)",
    ),
    (
        "ssl_ca_crt_file",
        "the operator (spec.openBao.server.caBundleSecretRef, or the CA of the referenced OpenBaoCluster)",
    ),
    (
        "approle_role_id",
        "the operator (the AppRole credentials it mints for a managed store or reads from spec.openBao.server.credentialsSecretRef)",
    ),
    (
        "approle_secret_id",
        "the operator (env-injected from the credentials Secret, never written to the config file)",
    ),
    (
        "root_token_id",
        "the operator (the plugin authenticates through a mount-scoped AppRole, so a root token is never rendered)",
    ),
    ("kv_mountpoint", "spec.openBao.kvMountpoint"),
    ("namespace", "spec.openBao.namespace"),
    (
        "secret_store_plugin",
        "the operator (secret-store section wiring)",
    ),
    (
        "crypto_plugin",
        "the operator (secret-store section wiring)",
    ),
    ("global_default", "spec.isDefault"),
];

/// Whether `key` is an option name: letters, digits and underscores.
fn is_option_name(key: &str) -> bool {
    key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Checks `spec.extraOptions`.
pub(super) fn check(spec: &BarbicanSecretStoreSpec, errors: &mut FieldErrors) {
    for (key, value) in &spec.extra_options {
        let field = format!("spec.extraOptions[{key}]");
        if key.is_empty() {
            errors.invalid(
                "spec.extraOptions",
                &json!(key),
                "option name must not be empty",
            );
            continue;
        }
        if !is_option_name(key) {
            errors.invalid(
                &field,
                &json!(key),
                "option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore)",
            );
            continue;
        }
        if let Some((_, owner)) = DENYLIST.iter().find(|(option, _)| option == key) {
            errors.invalid(
                &field,
                &json!(value),
                &format!("option {key:?} is owned by {owner} and must not be set via extraOptions"),
            );
            continue;
        }
        if value.contains(['\n', '\r']) {
            errors.invalid(
                &field,
                &json!(value),
                "value must not contain newline or carriage-return characters",
            );
        }
    }
}

#[cfg(test)]
#[path = "extra_options_tests.rs"]
mod tests;
