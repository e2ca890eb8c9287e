//! At most one backup target per Cinder (CobaltCore's webhook, the single-attachment
//! check): the backup driver is a property of the one `{cinder}-backup` Deployment. One
//! list of the namespace's targets, keeping those that are not this one, not being
//! deleted and name the same Cinder, in name order. Runs on create and on update (the
//! target excludes itself).
//!
//! | Rule (against each sibling) | Field | Message |
//! |---|---|---|
//! | no other target of the same Cinder | `spec.cinderRef` | Forbidden: Cinder "c" already has CinderBackupBackend "s" attached |
//!
//! A failed list fails the request closed (`Internal error` at `spec.cinderRef`:
//! "listing CinderBackupBackends for the single-attachment check: …").
//! DECISION: the list is the host's watch cache of targets (the plugin's primary kind);
//! a sibling created an instant before may not be in it yet (CobaltCore reads past its
//! cache; the Cinder's BackupBackend step still refuses two, `MultipleBackupBackends`). A
//! stored target that does not decode is skipped with a warning rather than blocking
//! every write of the namespace.

use wasm_operator_sdk::admission::FieldErrors;
use wasm_operator_sdk::{Cluster, KindRef, ListOptions};

use crate::types::CinderBackupBackend;

/// The targets attached to `target`'s Cinder besides it, by name; warnings for those that
/// do not decode.
fn attached(
    cluster: &dyn Cluster,
    target: &CinderBackupBackend,
    warnings: &mut Vec<String>,
) -> Result<Vec<CinderBackupBackend>, String> {
    let listed = cluster
        .list(
            &KindRef::of::<CinderBackupBackend>(),
            Some(target.namespace()),
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
        match serde_json::from_value::<CinderBackupBackend>(object) {
            Ok(other) => siblings.push(other),
            Err(e) => warnings.push(format!(
                "CinderBackupBackend {name:?} cannot be read for the single-attachment check: {e}"
            )),
        }
    }
    siblings.retain(|other| {
        other.name() != target.name()
            && !other.is_deleting()
            && other.spec.cinder_ref.name == target.spec.cinder_ref.name
    });
    siblings.sort_by(|a, b| a.name().cmp(b.name()));
    Ok(siblings)
}

/// Checks `target` against its siblings.
pub(super) fn check(
    cluster: &dyn Cluster,
    target: &CinderBackupBackend,
    errors: &mut FieldErrors,
    warnings: &mut Vec<String>,
) {
    let siblings = match attached(cluster, target, warnings) {
        Ok(siblings) => siblings,
        Err(e) => {
            errors.internal(
                "spec.cinderRef",
                &format!("listing CinderBackupBackends for the single-attachment check: {e}"),
            );
            return;
        }
    };
    let cinder = &target.spec.cinder_ref.name;
    for other in &siblings {
        let sibling = other.name();
        errors.forbidden(
            "spec.cinderRef",
            &format!("Cinder {cinder:?} already has CinderBackupBackend {sibling:?} attached"),
        );
    }
}

#[cfg(test)]
#[path = "siblings_tests.rs"]
mod tests;
