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

use crate::types::GlanceBackendSpec;

/// The `[<store>]` options extraOptions may not set, and what owns each.
pub(crate) const DENYLIST: &[(&str, &str)] = &[
    ("s3_store_host", "spec.s3.host"),
    ("s3_store_bucket", "spec.s3.bucket"),
    ("s3_store_access_key", "spec.s3.credentialsSecretRef"),
    ("s3_store_secret_key", "spec.s3.credentialsSecretRef"),
    ("s3_store_bucket_url_format", "spec.s3.bucketURLFormat"),
    ("s3_store_region_name", "spec.s3.region"),
    ("s3_store_create_bucket_on_put", "spec.s3.createBucketOnPut"),
    ("s3_store_large_object_size", "spec.s3.largeObjectSize"),
    (
        "s3_store_large_object_chunk_size",
        "spec.s3.largeObjectChunkSize",
    ),
    ("store_description", "the operator (store section wiring)"),
];

/// Whether `key` is an option name: letters, digits and underscores.
fn is_option_name(key: &str) -> bool {
    key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Checks `spec.extraOptions`.
pub(super) fn check(spec: &GlanceBackendSpec, errors: &mut FieldErrors) {
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
