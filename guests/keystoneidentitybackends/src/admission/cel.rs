//! The schema's CEL rules CobaltCore's webhook has no twin of, checked again in admission
//! for API servers that do not evaluate CEL (kube-apiserver and the embedded one do, before
//! the webhook is called). Each is worded as kube-apiserver words a failed rule:
//! at the rule's field, the field's type as the value, the rule's message (`types/`).
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | every extraOptions key ≤ 256 characters, every value ≤ 1024 | `spec.extraOptions` | each extraOptions key must be <=256 characters and each value <=1024 characters |
//! | on update, `keystoneRef.name` unchanged | `spec` | keystoneRef is immutable |
//! | on update, `type` unchanged | `spec` | type is immutable |
//! | on update, `domain.name` unchanged | `spec.domain.name` | domain.name is immutable |
//! | on update, `domain.mode` unchanged | `spec.domain.mode` | domain.mode is immutable |
//!
//! As CEL evaluates `self == oldSelf` only where both objects have the field, the domain
//! name is compared only when both are set; the mode always has a value (its default).

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::KeystoneIdentityBackendSpec;

/// The longest extraOptions key and value, in characters (CEL's `size`).
const MAX_KEY: usize = 256;
const MAX_VALUE: usize = 1024;

/// Checks the bounds of `spec.extraOptions`' entries.
pub(super) fn check_extra_options_bounds(
    spec: &KeystoneIdentityBackendSpec,
    errors: &mut FieldErrors,
) {
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
    old: &KeystoneIdentityBackendSpec,
    new: &KeystoneIdentityBackendSpec,
    errors: &mut FieldErrors,
) {
    let object = json!("object");
    let string = json!("string");
    if old.keystone_ref.name != new.keystone_ref.name {
        errors.invalid("spec", &object, "keystoneRef is immutable");
    }
    if old.type_ != new.type_ {
        errors.invalid("spec", &object, "type is immutable");
    }
    let (was, is) = (&old.domain.name, &new.domain.name);
    if !was.is_empty() && !is.is_empty() && was != is {
        errors.invalid("spec.domain.name", &string, "domain.name is immutable");
    }
    if old.domain.mode != new.domain.mode {
        errors.invalid("spec.domain.mode", &string, "domain.mode is immutable");
    }
}

#[cfg(test)]
#[path = "cel_tests.rs"]
mod tests;
