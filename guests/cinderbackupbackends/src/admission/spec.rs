//! The union rule, the chunk size, the compression and the NFS export (CobaltCore's
//! webhook, the twins of the schema's CEL rule, bounds, enum and patterns):
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | type NFS ⇔ `nfs` set | `spec.nfs` | [`UNION_MESSAGE`] |
//! | type RBD ⇔ `rbd` set | `spec.rbd` | [`UNION_MESSAGE`] |
//! | `fileSize` ≥ 1048576 | `spec.fileSize` | fileSize must be at least 1048576 bytes |
//! | `fileSize` a multiple of 32768 (checked once the minimum holds) | `spec.fileSize` | fileSize must be a multiple of 32768 bytes (the block size cinder hashes backup chunks in) |
//! | `compression` one of none, zlib, bz2, zstd (an empty one asks for the default) | `spec.compression` | Unsupported value: "x": supported values: "none", "zlib", "bz2", "zstd" |
//! | `nfs.path` printable ASCII only | `spec.nfs.path` | must contain only printable ASCII characters: … |
//! | `nfs.mountOptions` without CR/LF | `spec.nfs.mountOptions` | must not contain a newline or carriage return: … |
//!
//! DECISION: CobaltCore's NFS-only webhook words the union "exactly one backup backend
//! block matching spec.type must be set (type NFS requires spec.nfs)"; with RBD both
//! halves are checked under this plugin's schema message, each at the block that is
//! wrong, the value being the type.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::{
    BackupType, COMPRESSIONS, CinderBackupBackendSpec, FILE_SIZE_MULTIPLE, MIN_FILE_SIZE,
};

/// The message of the union rule (the schema's, word for word).
pub(crate) const UNION_MESSAGE: &str = "exactly one backup backend block matching spec.type must be set (type NFS requires spec.nfs, type RBD requires spec.rbd)";

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
pub(super) fn check_union(spec: &CinderBackupBackendSpec, errors: &mut FieldErrors) {
    let type_ = json!(spec.type_.as_str());
    if (spec.type_ == BackupType::Nfs) != spec.nfs.is_some() {
        errors.invalid("spec.nfs", &type_, UNION_MESSAGE);
    }
    if (spec.type_ == BackupType::Rbd) != spec.rbd.is_some() {
        errors.invalid("spec.rbd", &type_, UNION_MESSAGE);
    }
}

/// Checks the chunk size and the compression.
pub(super) fn check_backup(spec: &CinderBackupBackendSpec, errors: &mut FieldErrors) {
    if let Some(size) = spec.file_size {
        if size < MIN_FILE_SIZE {
            errors.invalid(
                "spec.fileSize",
                &json!(size),
                &format!("fileSize must be at least {MIN_FILE_SIZE} bytes"),
            );
        } else if size % FILE_SIZE_MULTIPLE != 0 {
            errors.invalid(
                "spec.fileSize",
                &json!(size),
                &format!(
                    "fileSize must be a multiple of {FILE_SIZE_MULTIPLE} bytes (the block size \
                     cinder hashes backup chunks in)"
                ),
            );
        }
    }
    let compression = spec.compression.as_str();
    if !compression.is_empty() && !COMPRESSIONS.contains(&compression) {
        errors.not_supported("spec.compression", &json!(compression), &COMPRESSIONS);
    }
}

/// Checks an export's path and mount options.
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
