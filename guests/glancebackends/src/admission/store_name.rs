//! The store name (CobaltCore's webhook): a backend's `metadata.name` becomes its store
//! identifier and its `[<name>]` section, so it must not be a section Glance or the
//! operator owns. Compared lowercased; at most one error.
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | not one of [`RESERVED`] | `metadata.name` | name "n" collides with the reserved or operator-managed Glance store section of the same name |
//! | no `os_glance_` / `os-glance-` prefix | `metadata.name` | name must not use the reserved "os_glance_" / "os-glance-" store-section prefix (Glance owns that namespace for its staging and tasks stores) |

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

/// The store identifiers and glance-api.conf sections Glance and the operator own
/// (lowercase).
pub(crate) const RESERVED: &[&str] = &[
    "default",
    "database",
    "keystone_authtoken",
    "glance_store",
    "paste_deploy",
    "oslo_policy",
    "os_glance_staging_store",
    "os_glance_tasks_store",
];

/// The prefixes of Glance's reserved stores (lowercase).
pub(crate) const RESERVED_PREFIXES: [&str; 2] = ["os_glance_", "os-glance-"];

/// Checks the backend's name.
pub(super) fn check(name: &str, errors: &mut FieldErrors) {
    let lower = name.to_lowercase();
    if RESERVED.contains(&lower.as_str()) {
        errors.invalid(
            "metadata.name",
            &json!(name),
            &format!(
                "name {name:?} collides with the reserved or operator-managed Glance store \
                 section of the same name"
            ),
        );
    } else if RESERVED_PREFIXES.iter().any(|p| lower.starts_with(p)) {
        errors.invalid(
            "metadata.name",
            &json!(name),
            r#"name must not use the reserved "os_glance_" / "os-glance-" store-section prefix (Glance owns that namespace for its staging and tasks stores)"#,
        );
    }
}
