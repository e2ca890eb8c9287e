//! The single-default check against the other backends attached to the same Glance
//! (CobaltCore's webhook). Only a backend marked `isDefault` is checked: one list of the
//! namespace's backends, keeping those that are not this one, not being deleted (a
//! replacement may be created while the old one tears down) and name the same Glance, in
//! name order.
//!
//! | Rule (against each sibling) | Field | Message |
//! |---|---|---|
//! | not both marked isDefault | `spec.isDefault` | GlanceBackend "s" attached to the same Glance "g" is already marked isDefault; exactly one default store is allowed |
//!
//! A failed list fails the request closed (`Internal error` at `spec.isDefault`:
//! "listing GlanceBackends for the single-default check: …").
//! DECISION: the list is the host's watch cache of backends (the plugin's primary kind);
//! a sibling created an instant before may not be in it yet (CobaltCore reads past its
//! cache; the Glance's Backends step still refuses two defaults). A stored backend that
//! does not decode is skipped with a warning rather than blocking every write of the
//! namespace.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;
use wasm_operator_sdk::{Cluster, KindRef, ListOptions};

use crate::types::GlanceBackend;

/// The backends attached to `backend`'s Glance besides it, by name; warnings for those
/// that do not decode.
fn attached(
    cluster: &dyn Cluster,
    backend: &GlanceBackend,
    warnings: &mut Vec<String>,
) -> Result<Vec<GlanceBackend>, String> {
    let listed = cluster
        .list(
            &KindRef::of::<GlanceBackend>(),
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
        match serde_json::from_value::<GlanceBackend>(object) {
            Ok(other) => siblings.push(other),
            Err(e) => warnings.push(format!(
                "GlanceBackend {name:?} cannot be read for the single-default check: {e}"
            )),
        }
    }
    siblings.retain(|other| {
        other.name() != backend.name()
            && !other.is_deleting()
            && other.spec.glance_ref.name == backend.spec.glance_ref.name
    });
    siblings.sort_by(|a, b| a.name().cmp(b.name()));
    Ok(siblings)
}

/// Checks `backend` against its siblings.
pub(super) fn check(
    cluster: &dyn Cluster,
    backend: &GlanceBackend,
    errors: &mut FieldErrors,
    warnings: &mut Vec<String>,
) {
    if !backend.spec.is_default {
        return;
    }
    let siblings = match attached(cluster, backend, warnings) {
        Ok(siblings) => siblings,
        Err(e) => {
            errors.internal(
                "spec.isDefault",
                &format!("listing GlanceBackends for the single-default check: {e}"),
            );
            return;
        }
    };
    let glance = &backend.spec.glance_ref.name;
    for other in siblings.iter().filter(|s| s.spec.is_default) {
        let sibling = other.name();
        errors.invalid(
            "spec.isDefault",
            &json!(true),
            &format!(
                "GlanceBackend {sibling:?} attached to the same Glance {glance:?} is already marked isDefault; exactly one default store is allowed"
            ),
        );
    }
}

#[cfg(test)]
#[path = "siblings_tests.rs"]
mod tests;
