//! The store name (CobaltCore's webhook): a store's `metadata.name` becomes its
//! `[secretstore:<name>]` section and names its `<name>-approle` credentials Secret.
//!
//! | Rule | When | Field | Message |
//! |---|---|---|---|
//! | at most 55 characters (63 − len(`-approle`)) | create only (the name cannot change; an update of a stored object must stay possible) | `metadata.name` | name must be at most 55 characters: the operator appends "-approle" to name the AppRole credentials Secret |
//! | not one of [`RESERVED`] (compared lowercased) | create, update | `metadata.name` | name "n" collides with the reserved or operator-managed barbican.conf section of the same name |

//!
//! DECISION: facts §3.6 writes the bound as "63−len(`-approle`) = 56", but `-approle` is 8
//! characters: the formula, CobaltCore's `MaxBarbicanSecretStoreNameLength` (and its type's
//! doc, "caps the usable name at 55 characters") give 55, so the message CobaltCore
//! computes says 55 — the formula is kept, not the slip.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::APPROLE_SECRET_SUFFIX;

/// The barbican.conf sections Barbican, oslo or the operator own (lowercase).
pub(crate) const RESERVED: &[&str] = &[
    "default",
    "database",
    "keystone_authtoken",
    "secretstore",
    "vault_plugin",
    "queue",
    "oslo_policy",
    "oslo_middleware",
    "healthcheck",
];

/// The longest store name: what a DNS label leaves beside the suffix.
pub(crate) const MAX_NAME: usize = 63 - APPROLE_SECRET_SUFFIX.len();

/// Checks the name's length (on create).
pub(super) fn check_length(name: &str, errors: &mut FieldErrors) {
    if name.len() > MAX_NAME {
        errors.invalid(
            "metadata.name",
            &json!(name),
            &format!(
                "name must be at most {MAX_NAME} characters: the operator appends \
                 {APPROLE_SECRET_SUFFIX:?} to name the AppRole credentials Secret"
            ),
        );
    }
}

/// Checks the name against the reserved sections.
pub(super) fn check(name: &str, errors: &mut FieldErrors) {
    if RESERVED.contains(&name.to_lowercase().as_str()) {
        errors.invalid(
            "metadata.name",
            &json!(name),
            &format!(
                "name {name:?} collides with the reserved or operator-managed barbican.conf \
                 section of the same name"
            ),
        );
    }
}
