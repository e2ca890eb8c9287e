//! The CinderBackend and CinderBackupBackend fields the Backends and BackupBackend steps
//! read (facts §3.4, §3.5): typed views, not the kinds' definitions (those are the
//! `cinderbackends` and `cinderbackupbackends` plugins').
//!
//! The views are lenient: unknown fields are ignored and every field defaults, so a
//! satellite written by a newer version of its kind, or one that bypassed admission,
//! still decodes as far as the steps need it; what is missing is the steps' to judge.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use wasm_operator_sdk::KindRef;

/// The gate the steps read: the satellites' own controllers set it.
pub(crate) const CREDENTIALS_READY: &str = "CredentialsReady";
/// The field of both kinds that names their Cinder.
pub(crate) const CINDER_REF: &str = "spec.cinderRef.name";
/// The CinderBackend finalizer the parent releases after the service-remove Job.
pub(crate) const SERVICE_REMOVE_FINALIZER: &str = "cinder.openstack.c5c3.io/service-remove";
/// `nfs.mountOptions` when unset.
pub(crate) const DEFAULT_NFS_MOUNT_OPTIONS: &str = "nfsvers=4.1,soft,timeo=30,retrans=2";
/// `rbd.clusterName` when unset.
pub(crate) const DEFAULT_CEPH_CLUSTER: &str = "ceph";
/// The RBD key's data key in the key Secret.
pub(crate) const USER_KEY: &str = "userKey";
/// `fileSize` and `compression` of a backup backend when unset.
pub(crate) const DEFAULT_BACKUP_FILE_SIZE: i64 = 52_428_800;
pub(crate) const DEFAULT_BACKUP_COMPRESSION: &str = "zlib";

fn kind(kind: &str, plural: &str) -> KindRef {
    KindRef {
        api_version: "cinder.openstack.c5c3.io/v1alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
        namespaced: true,
    }
}

/// The CinderBackend kind.
pub(crate) fn backend_kind() -> KindRef {
    kind("CinderBackend", "cinderbackends")
}

/// The CinderBackupBackend kind.
pub(crate) fn backup_backend_kind() -> KindRef {
    kind("CinderBackupBackend", "cinderbackupbackends")
}

/// A CinderBackend or CinderBackupBackend as the Cinder side reads it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Satellite {
    pub(crate) metadata: ObjectMeta,
    pub(crate) spec: SatelliteSpec,
    pub(crate) status: SatelliteStatus,
}

wasm_operator_sdk::custom_resource!(
    Satellite,
    "cinder.openstack.c5c3.io",
    "v1alpha1",
    "CinderBackend",
    "cinderbackends",
    k8s_openapi::NamespaceResourceScope
);

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct SatelliteSpec {
    #[serde(rename = "type")]
    pub(crate) type_: String,
    pub(crate) nfs: Option<NfsSpec>,
    pub(crate) rbd: Option<RbdSpec>,
    pub(crate) image_volume_cache: Option<ImageVolumeCacheSpec>,
    pub(crate) file_size: Option<i64>,
    pub(crate) compression: String,
    pub(crate) extra_options: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NfsSpec {
    pub(crate) server: String,
    pub(crate) path: String,
    pub(crate) mount_options: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RbdSpec {
    pub(crate) pool: String,
    pub(crate) user: String,
    pub(crate) monitors: Vec<String>,
    pub(crate) cluster_name: String,
    pub(crate) key_secret_ref: NameRef,
    #[serde(rename = "secretUUID")]
    pub(crate) secret_uuid: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ImageVolumeCacheSpec {
    pub(crate) enabled: bool,
    #[serde(rename = "maxSizeGB")]
    pub(crate) max_size_gb: Option<i32>,
    pub(crate) max_count: Option<i32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NameRef {
    pub(crate) name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SatelliteStatus {
    pub(crate) conditions: Vec<ConditionView>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ConditionView {
    #[serde(rename = "type")]
    pub(crate) type_: String,
    pub(crate) status: String,
}

impl Satellite {
    /// The satellite's name.
    pub(crate) fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Whether CredentialsReady is present and True (the gate; never Ready).
    pub(crate) fn credentials_ready(&self) -> bool {
        self.status
            .conditions
            .iter()
            .any(|c| c.type_ == CREDENTIALS_READY && c.status == "True")
    }

    /// Whether it carries the service-remove finalizer.
    pub(crate) fn holds_service_remove(&self) -> bool {
        self.metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == SERVICE_REMOVE_FINALIZER)
    }
}

impl NfsSpec {
    /// The mount options, the default when unset.
    pub(crate) fn mount_options(&self) -> &str {
        if self.mount_options.is_empty() {
            DEFAULT_NFS_MOUNT_OPTIONS
        } else {
            &self.mount_options
        }
    }
}

impl RbdSpec {
    /// The Ceph cluster name, `ceph` when unset.
    pub(crate) fn cluster(&self) -> &str {
        if self.cluster_name.is_empty() {
            DEFAULT_CEPH_CLUSTER
        } else {
            &self.cluster_name
        }
    }
}
