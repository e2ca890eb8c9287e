//! The Keystone's immutables (facts §1.4), checked on update: the schema's transition
//! rules, checked again for API servers that do not evaluate CEL (kube-apiserver and the
//! embedded one do). Each is worded as
//! kube-apiserver words the failed rule — at the rule's field, the field's type as the
//! value, the rule's message (`crd.rs`).
//!
//! As CEL evaluates `self == oldSelf` only where both objects have the field, the admin
//! user and the region are compared only when both are set.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::KeystoneSpec;

/// Checks that `new` keeps what `old` fixed.
pub(super) fn check(old: &KeystoneSpec, new: &KeystoneSpec, errors: &mut FieldErrors) {
    let object = json!("object");
    let string = json!("string");
    let old_target = old.target_cluster_ref.as_ref().map(|t| &t.name);
    let new_target = new.target_cluster_ref.as_ref().map(|t| &t.name);
    if old_target != new_target {
        errors.invalid("spec", &object, "targetClusterRef is immutable");
    }
    if old.database.database != new.database.database {
        errors.invalid("spec.database", &object, "database name is immutable");
    }
    if old.database.cluster_ref.is_some() != new.database.cluster_ref.is_some() {
        errors.invalid(
            "spec.database",
            &object,
            "database mode (managed clusterRef vs brownfield host) is immutable",
        );
    }
    let fixed = [
        (
            "spec.bootstrap.adminUser",
            &old.bootstrap.admin_user,
            &new.bootstrap.admin_user,
            "bootstrap.adminUser is immutable",
        ),
        (
            "spec.bootstrap.region",
            &old.bootstrap.region,
            &new.bootstrap.region,
            "bootstrap.region is immutable",
        ),
    ];
    for (field, was, is, message) in fixed {
        if !was.is_empty() && !is.is_empty() && was != is {
            errors.invalid(field, &string, message);
        }
    }
}

#[cfg(test)]
#[path = "immutables_tests.rs"]
mod tests;
