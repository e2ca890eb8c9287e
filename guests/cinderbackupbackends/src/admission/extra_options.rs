//! `spec.extraOptions` (CobaltCore's webhook, the shared extraOptions rules) against the
//! denylist of the target's type: each key in sorted order, the first failing rule only —
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | a key | `spec.extraOptions` | option name must not be empty |
//! | key matches `^[A-Za-z0-9_]+$` | `spec.extraOptions[key]` | option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore) |
//! | key not rendered by the operator ([`COMMON`] + [`NFS`] or [`RBD`]) | `spec.extraOptions[key]` | option "k" is owned by <owner> and must not be set via extraOptions |
//!
//! — then, for a key past the denylist, no CR/LF in the value: "value must not contain
//! newline or carriage-return characters".
//!
//! DECISION: CobaltCore's (NFS-only) denylist is [`COMMON`] + [`NFS`]; the RBD options are
//! the ones §3.5 says the Cinder renders for an RBD target, their owners this plugin's
//! wording.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::{BackupType, CinderBackupBackendSpec};

/// The `[DEFAULT]` backup options no target may set through extraOptions, and their
/// owners.
pub(crate) const COMMON: &[(&str, &str)] = &[
    ("backup_driver", "spec.type"),
    (
        "backup_use_same_host",
        "the operator (backup service wiring)",
    ),
    (
        "host",
        "the operator (the host identity this deployment's backups are recorded against)",
    ),
];

/// The options an NFS target's typed fields render.
pub(crate) const NFS: &[(&str, &str)] = &[
    ("backup_share", "spec.nfs.server and spec.nfs.path"),
    (
        "backup_mount_point_base",
        "the operator (the mount path the cinder-backup pod carries)",
    ),
    ("backup_mount_options", "spec.nfs.mountOptions"),
    ("backup_file_size", "spec.fileSize"),
    ("backup_compression_algorithm", "spec.compression"),
];

/// The options an RBD target's typed fields render.
pub(crate) const RBD: &[(&str, &str)] = &[
    (
        "backup_ceph_conf",
        "the operator (the Ceph configuration the cinder-backup pod mounts)",
    ),
    ("backup_ceph_pool", "spec.rbd.pool"),
    ("backup_ceph_user", "spec.rbd.user"),
];

/// The owner of `key` for a target of `type_`, if the operator renders it.
fn owner(type_: BackupType, key: &str) -> Option<&'static str> {
    let typed = match type_ {
        BackupType::Nfs => NFS,
        BackupType::Rbd => RBD,
    };
    COMMON
        .iter()
        .chain(typed)
        .find(|(option, _)| *option == key)
        .map(|(_, owner)| *owner)
}

/// Whether `key` is an option name: letters, digits and underscores.
fn is_option_name(key: &str) -> bool {
    key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Checks `spec.extraOptions`.
pub(super) fn check(spec: &CinderBackupBackendSpec, errors: &mut FieldErrors) {
    for (key, value) in &spec.extra_options {
        let field = format!("spec.extraOptions[{key}]");
        if key.is_empty() {
            errors.invalid(
                "spec.extraOptions",
                &json!(key),
                "option name must not be empty",
            );
        } else if !is_option_name(key) {
            errors.invalid(
                &field,
                &json!(key),
                "option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore)",
            );
        } else if let Some(owner) = owner(spec.type_, key) {
            errors.invalid(
                &field,
                &json!(value),
                &format!("option {key:?} is owned by {owner} and must not be set via extraOptions"),
            );
        } else if value.contains(['\n', '\r']) {
            errors.invalid(
                &field,
                &json!(value),
                "value must not contain newline or carriage-return characters",
            );
        }
    }
}

#[cfg(test)]
#[path = "extra_options_tests.rs"]
mod tests;
