//! The union rule (CobaltCore's webhook, the twin of the schema's CEL rule):
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | exactly the block `type` names | `spec.s3` | exactly one backend block matching spec.type must be set (type S3 requires spec.s3) |

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::{BackendType, GlanceBackendSpec};

/// The message of the union rule (the schema's, word for word).
pub(crate) const UNION_MESSAGE: &str =
    "exactly one backend block matching spec.type must be set (type S3 requires spec.s3)";

/// Checks the union rule.
pub(super) fn check(spec: &GlanceBackendSpec, errors: &mut FieldErrors) {
    if (spec.type_ == BackendType::S3) != spec.s3.is_some() {
        errors.invalid("spec.s3", &json!(spec.type_.as_str()), UNION_MESSAGE);
    }
}
