//! The schema's CEL rules CobaltCore's webhook has no twin of, checked again in admission
//! for API servers that do not evaluate CEL (kube-apiserver and the embedded one do, before
//! the webhook is called). Each is worded as kube-apiserver words a failed rule:
//! at the rule's field, the field's type as the value, the rule's message (`types/`).
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | every extraOptions key ≤ 256 characters, every value ≤ 1024 | `spec.extraOptions` | each extraOptions key must be <=256 characters and each value <=1024 characters |
//! | on update, `cinderRef.name` unchanged | `spec` | cinderRef is immutable |
//! | on update, `type` unchanged | `spec` | type is immutable |

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::CinderBackupBackendSpec;

/// The longest extraOptions key and value, in characters (CEL's `size`).
const MAX_KEY: usize = 256;
const MAX_VALUE: usize = 1024;

/// Checks the bounds of `spec.extraOptions`' entries.
pub(super) fn check_extra_options_bounds(spec: &CinderBackupBackendSpec, errors: &mut FieldErrors) {
    let too_long = spec
        .extra_options
        .iter()
        .any(|(k, v)| k.chars().count() > MAX_KEY || v.chars().count() > MAX_VALUE);
    if too_long {
        errors.invalid(
            "spec.extraOptions",
            &json!("object"),
            "each extraOptions key must be <=256 characters and each value <=1024 characters",
        );
    }
}

/// Checks that `new` keeps what `old` fixed.
pub(super) fn check_immutables(
    old: &CinderBackupBackendSpec,
    new: &CinderBackupBackendSpec,
    errors: &mut FieldErrors,
) {
    let object = json!("object");
    if old.cinder_ref.name != new.cinder_ref.name {
        errors.invalid("spec", &object, "cinderRef is immutable");
    }
    if old.type_ != new.type_ {
        errors.invalid("spec", &object, "type is immutable");
    }
}
