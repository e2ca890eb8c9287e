//! The schema's CEL rules CobaltCore's webhook has no twin of, checked again in admission
//! for API servers that do not evaluate CEL (kube-apiserver and the embedded one do, before
//! the webhook is called). Each is worded as kube-apiserver words a failed rule:
//! at the rule's field, the field's type as the value, the rule's message (`types.rs`).
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | every extraOptions key ≤ 256 characters, every value ≤ 1024 | `spec.extraOptions` | each extraOptions key must be <=256 characters and each value <=1024 characters |
//! | on update, `barbicanRef.name` unchanged | `spec` | barbicanRef is immutable |
//! | on update, `type` unchanged | `spec` | type is immutable |
//! | on update (openBao on both), `kvMountpoint` unchanged | `spec.openBao` | kvMountpoint is immutable: the secret material already written under the old mount is not reachable under a new one |
//! | on update (openBao on both), instanceRef set on both or on neither | `spec.openBao` | the store mode (instanceRef vs server) is immutable: delete and recreate the store instead |
//!
//! The other two rules on `openBao` (exactly one mode; a managed store's mount and
//! namespace) have their webhook twins in [`spec`](super::spec).

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::BarbicanSecretStoreSpec;

/// The longest extraOptions key and value, in characters (CEL's `size`).
const MAX_KEY: usize = 256;
const MAX_VALUE: usize = 1024;

/// Checks the bounds of `spec.extraOptions`' entries.
pub(super) fn check_extra_options_bounds(spec: &BarbicanSecretStoreSpec, errors: &mut FieldErrors) {
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
    old: &BarbicanSecretStoreSpec,
    new: &BarbicanSecretStoreSpec,
    errors: &mut FieldErrors,
) {
    let object = json!("object");
    if old.barbican_ref.name != new.barbican_ref.name {
        errors.invalid("spec", &object, "barbicanRef is immutable");
    }
    if old.type_ != new.type_ {
        errors.invalid("spec", &object, "type is immutable");
    }
    let (Some(old), Some(new)) = (&old.open_bao, &new.open_bao) else {
        return;
    };
    if old.kv_mountpoint != new.kv_mountpoint {
        errors.invalid(
            "spec.openBao",
            &object,
            "kvMountpoint is immutable: the secret material already written under the old mount is not reachable under a new one",
        );
    }
    if old.instance_ref.is_some() != new.instance_ref.is_some() {
        errors.invalid(
            "spec.openBao",
            &object,
            "the store mode (instanceRef vs server) is immutable: delete and recreate the store instead",
        );
    }
}
