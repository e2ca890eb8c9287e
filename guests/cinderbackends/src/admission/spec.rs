//! The union rule and the NFS export (CobaltCore's webhook, the twins of the schema's CEL
//! rule and patterns):
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | type NFS ⇔ `nfs` set | `spec.nfs` | [`UNION_MESSAGE`] |
//! | type RBD ⇔ `rbd` set | `spec.rbd` | [`UNION_MESSAGE`] |
//! | `nfs.path` printable ASCII only | `spec.nfs.path` | must contain only printable ASCII characters: … |
//! | `nfs.mountOptions` without CR/LF | `spec.nfs.mountOptions` | must not contain a newline or carriage return: … |
//!
//! DECISION: CobaltCore's NFS-only webhook words the union "(type NFS requires
//! spec.nfs)"; with RBD both halves are checked under the schema's own message, each at
//! the block that is wrong, the value being the type.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::{BackendType, CinderBackendSpec};

/// The message of the union rule (the schema's, word for word).
pub(crate) const UNION_MESSAGE: &str = "exactly one backend block matching spec.type must be set (type NFS requires spec.nfs, type RBD requires spec.rbd)";

const PATH_MESSAGE: &str = "must contain only printable ASCII characters: the value is written \
    verbatim into the NFS shares file and rendered as the backup_share option, where a space \
    cuts the export short and a newline appends a second one, while a non-ASCII space such as \
    U+00A0 survives an ASCII-only whitespace check here and is stripped by the python readers \
    there";
const MOUNT_OPTIONS_MESSAGE: &str = "must not contain a newline or carriage return: the value \
    is written verbatim into the rendered backend section and the NFS shares file";

/// Whether `text` carries a line break.
pub(super) fn has_line_break(text: &str) -> bool {
    text.contains(['\n', '\r'])
}

/// Checks the union rule.
pub(super) fn check_union(spec: &CinderBackendSpec, errors: &mut FieldErrors) {
    let type_ = json!(spec.type_.as_str());
    if (spec.type_ == BackendType::Nfs) != spec.nfs.is_some() {
        errors.invalid("spec.nfs", &type_, UNION_MESSAGE);
    }
    if (spec.type_ == BackendType::Rbd) != spec.rbd.is_some() {
        errors.invalid("spec.rbd", &type_, UNION_MESSAGE);
    }
}

/// Checks an export's path and mount options (shared with the backup target's).
pub(super) fn check_nfs_export(path: &str, mount_options: &str, errors: &mut FieldErrors) {
    if path.chars().any(|c| !('!'..='~').contains(&c)) {
        errors.invalid("spec.nfs.path", &json!(path), PATH_MESSAGE);
    }
    if has_line_break(mount_options) {
        errors.invalid(
            "spec.nfs.mountOptions",
            &json!(mount_options),
            MOUNT_OPTIONS_MESSAGE,
        );
    }
}
