//! The `cinder.openstack.c5c3.io/v1alpha1` CinderBackupBackend resource as Rust types
//! (facts §3.5).
//!
//! The types are the definition: `crds/cinder.openstack.c5c3.io_cinderbackupbackends.yaml`
//! is generated from them (`crd.rs`). Doc comments become the CRD's field descriptions.
//!
//! | Field | Rules |
//! |---|---|
//! | `cinderRef.name` | required, min 1, immutable (CEL on `spec`) |
//! | `type` | required, enum `NFS`/`RBD`, immutable (CEL on `spec`) |
//! | `nfs` / `rbd` | exactly the block `type` names (CEL on `spec`) |
//! | `nfs.{server,path,mountOptions}` | as CinderBackend's |
//! | `rbd.{pool,user,monitors,networks,clusterName,keySecretRef}` | as CinderBackend's (no `secretUUID`) |
//! | `fileSize` | int64, default 52428800, minimum 1048576, multipleOf 32768 (NFS only) |
//! | `compression` | enum `none`/`zlib`/`bz2`/`zstd`, default `zlib` (NFS only) |
//! | `extraOptions` | ≤ 32 entries, key ≤ 256, value ≤ 1024 (CEL) |
//!
//! DECISION: `fileSize` and `compression` are defaulted on every target (the schema
//! defaults do not look at `type`) and rendered for NFS only. `compression` is a string
//! with a schema enum, so admission names an unsupported value rather than failing to
//! read the object.

mod blocks;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::is_zero;

pub use blocks::{
    DEFAULT_CLUSTER_NAME, DEFAULT_MOUNT_OPTIONS, KeySecretRef, NfsBackupBackendSpec,
    RbdBackupBackendSpec,
};

/// The API group.
pub const GROUP: &str = <CinderBackupBackend as k8s_openapi::Resource>::GROUP;
/// The version.
pub const VERSION: &str = <CinderBackupBackend as k8s_openapi::Resource>::VERSION;
/// The kind.
pub const KIND: &str = <CinderBackupBackend as k8s_openapi::Resource>::KIND;
/// The resource (plural).
pub const PLURAL: &str = <CinderBackupBackend as k8s_openapi::Resource>::URL_PATH_SEGMENT;
/// The apiVersion.
pub const API_VERSION: &str = <CinderBackupBackend as k8s_openapi::Resource>::API_VERSION;

/// The one data key of the RBD key Secret: the user's raw cephx key.
pub const RBD_KEY_DATA_KEY: &str = "userKey";
/// The backup chunk size of a target without one: 50 MiB.
pub const DEFAULT_FILE_SIZE: i64 = 52_428_800;
/// The smallest backup chunk size: 1 MiB.
pub const MIN_FILE_SIZE: i64 = 1_048_576;
/// What a backup chunk size is a multiple of: the 32 KiB blocks cinder hashes it in.
pub const FILE_SIZE_MULTIPLE: i64 = 32_768;
/// The compression of a target without one.
pub const DEFAULT_COMPRESSION: &str = "zlib";
/// The compressions cinder offers.
pub const COMPRESSIONS: [&str; 4] = ["none", "zlib", "bz2", "zstd"];

fn default_file_size() -> Option<i64> {
    Some(DEFAULT_FILE_SIZE)
}

fn default_compression() -> String {
    DEFAULT_COMPRESSION.to_owned()
}

/// A CinderBackupBackend: the single target — an NFS export or a Ceph RBD pool — the
/// backup service of the Cinder its `spec.cinderRef` names writes volume backups to. At
/// most one attaches to a Cinder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CinderBackupBackend {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: CinderBackupBackendSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CinderBackupBackendStatus>,
}

wasm_operator_sdk::custom_resource!(
    CinderBackupBackend,
    "cinder.openstack.c5c3.io",
    "v1alpha1",
    "CinderBackupBackend",
    "cinderbackupbackends",
    k8s_openapi::NamespaceResourceScope
);

impl CinderBackupBackend {
    /// Its name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Its namespace.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }

    /// Whether it is being deleted.
    pub fn is_deleting(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }

    /// Its `metadata.generation` (0 when unset).
    pub fn generation(&self) -> i64 {
        self.metadata.generation.unwrap_or_default()
    }
}

/// Which Cinder the backup target attaches to, and the target.
///
/// `cinderRef` and `type` are fixed at creation: a restore reads a backup with the
/// driver, and from the deployment, that wrote it. Exactly the block `type` names is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
    {"rule": "self.cinderRef.name == oldSelf.cinderRef.name", "message": "cinderRef is immutable"},
    {"rule": "self.type == oldSelf.type", "message": "type is immutable"},
    {"rule": "(self.type == 'NFS') == has(self.nfs) && (self.type == 'RBD') == has(self.rbd)",
     "message": "exactly one backup backend block matching spec.type must be set (type NFS requires spec.nfs, type RBD requires spec.rbd)"},
])))]
pub struct CinderBackupBackendSpec {
    /// The Cinder in this namespace the backup target attaches to. It need not exist yet:
    /// a target applied first waits for it (Ready False). Fixed at creation.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub cinder_ref: CinderRefSpec,
    /// The backup driver: `NFS` or `RBD`. Fixed at creation.
    #[serde(rename = "type")]
    pub type_: BackupType,
    /// The NFS export (exactly when type is NFS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfs: Option<NfsBackupBackendSpec>,
    /// The Ceph RBD pool (exactly when type is RBD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rbd: Option<RbdBackupBackendSpec>,
    /// The size in bytes of one backup chunk (`backup_file_size`, NFS only): a multiple of
    /// 32768, at least 1048576. Defaults to 52428800 (50 MiB).
    #[serde(default = "default_file_size", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        test,
        schemars(range(min = 1_048_576), extend("multipleOf" = 32768, "default" = 52428800))
    )]
    pub file_size: Option<i64>,
    /// The algorithm each chunk is compressed with (`backup_compression_algorithm`, NFS
    /// only): `none`, `zlib`, `bz2` or `zstd`. Defaults to `zlib`.
    #[serde(default = "default_compression")]
    #[cfg_attr(
        test,
        schemars(extend("enum" = ["none", "zlib", "bz2", "zstd"], "default" = "zlib"))
    )]
    pub compression: String,
    /// Backup options the typed fields do not cover, by bare option name. Options the
    /// operator renders are refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(test, schemars(extend("maxProperties" = 32, "x-kubernetes-validations" = [
        {"rule": "self.all(k, size(k) <= 256 && size(self[k]) <= 1024)",
         "message": "each extraOptions key must be <=256 characters and each value <=1024 characters"}])))]
    pub extra_options: BTreeMap<String, String>,
}

impl Default for CinderBackupBackendSpec {
    fn default() -> Self {
        Self {
            cinder_ref: CinderRefSpec::default(),
            type_: BackupType::default(),
            nfs: None,
            rbd: None,
            file_size: default_file_size(),
            compression: default_compression(),
            extra_options: BTreeMap::new(),
        }
    }
}

/// A Cinder in the target's namespace, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CinderRefSpec {
    /// The Cinder's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), extend("x-required" = true)))]
    pub name: String,
}

/// The backup driver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum BackupType {
    /// The NFS backup driver: chunks written as files on an export (the default of
    /// `Default::default` only: the field itself has none).
    #[default]
    #[serde(rename = "NFS")]
    Nfs,
    /// The Ceph backup driver: backups kept as RBD images in a pool.
    #[serde(rename = "RBD")]
    Rbd,
}

impl BackupType {
    /// The type as the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Nfs => "NFS",
            Self::Rbd => "RBD",
        }
    }
}

/// What the target's controller found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CinderBackupBackendStatus {
    /// CredentialsReady (nothing for NFS; the RBD key Secret carries a cephx key),
    /// ConfigProjected (the Cinder's backup Deployment mounts this target's Secret) and
    /// the aggregate Ready, each for `observedGeneration`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(schema_with = "wasm_operator_sdk::crd::conditions"))]
    pub conditions: Vec<Condition>,
    /// The metadata.generation last reconciled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
}
