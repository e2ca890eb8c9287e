//! `spec.extraOptions` (CobaltCore's webhook, the shared extraOptions rules) against the
//! denylist of the backend's type: each key in sorted order, the first failing rule only —
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
//! DECISION: the owners of the RBD options are this plugin's wording (CobaltCore's RBD
//! denylist was not found in its source; its keys are the facts' §3.4 list).

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::{BackendType, CinderBackendSpec};

/// The `[<name>]` options no backend may set through extraOptions, and their owners.
pub(crate) const COMMON: &[(&str, &str)] = &[
    ("volume_driver", "spec.type"),
    (
        "volume_backend_name",
        "the operator (backend section wiring)",
    ),
    (
        "backend_host",
        "the operator (the host identity this backend's volumes are keyed by)",
    ),
    (
        "image_volume_cache_enabled",
        "spec.imageVolumeCache.enabled",
    ),
    (
        "image_volume_cache_max_size_gb",
        "spec.imageVolumeCache.maxSizeGB",
    ),
    (
        "image_volume_cache_max_count",
        "spec.imageVolumeCache.maxCount",
    ),
];

/// The options an NFS backend's typed fields render.
pub(crate) const NFS: &[(&str, &str)] = &[
    ("nfs_shares_config", "spec.nfs.server and spec.nfs.path"),
    (
        "nfs_mount_point_base",
        "the operator (the mount path the cinder-volume pod carries)",
    ),
    ("nfs_mount_options", "spec.nfs.mountOptions"),
    (
        "nas_secure_file_operations",
        "the operator (it follows the pod's security context)",
    ),
    (
        "nas_secure_file_permissions",
        "the operator (it follows the pod's security context)",
    ),
    ("nfs_snapshot_support", "the operator (NFS driver wiring)"),
    ("nfs_sparsed_volumes", "the operator (NFS driver wiring)"),
    ("nfs_qcow2_volumes", "the operator (NFS driver wiring)"),
];

/// The options an RBD backend's typed fields render.
pub(crate) const RBD: &[(&str, &str)] = &[
    ("rbd_pool", "spec.rbd.pool"),
    ("rbd_user", "spec.rbd.user"),
    ("rbd_cluster_name", "spec.rbd.clusterName"),
    ("rbd_secret_uuid", "spec.rbd.secretUUID"),
    (
        "rbd_ceph_conf",
        "the operator (the Ceph configuration the cinder-volume pod mounts)",
    ),
    (
        "rbd_keyring_conf",
        "the operator (the keyring the cinder-volume pod mounts)",
    ),
];

/// The owner of `key` for a backend of `type_`, if the operator renders it.
fn owner(type_: BackendType, key: &str) -> Option<&'static str> {
    let typed = match type_ {
        BackendType::Nfs => NFS,
        BackendType::Rbd => RBD,
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
pub(super) fn check(spec: &CinderBackendSpec, errors: &mut FieldErrors) {
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
