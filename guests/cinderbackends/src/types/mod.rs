//! The `cinder.openstack.c5c3.io/v1alpha1` CinderBackend resource as Rust types (facts
//! §3.4).
//!
//! The types are the definition: `crds/cinder.openstack.c5c3.io_cinderbackends.yaml` is
//! generated from them (`crd.rs`). Doc comments become the CRD's field descriptions, so
//! they speak to the resource's users.
//!
//! | Field | Rules |
//! |---|---|
//! | `cinderRef.name` | required, min 1, immutable (CEL on `spec`) |
//! | `type` | required, enum `NFS`/`RBD`, immutable (CEL on `spec`) |
//! | `nfs` / `rbd` | exactly the block `type` names: NFS ⇔ nfs, RBD ⇔ rbd (CEL on `spec`) |
//! | `nfs.server` | required, min 1, `^[A-Za-z0-9.-]+$` |
//! | `nfs.path` | required, `^/[!-~]*$` |
//! | `nfs.mountOptions` | default `nfsvers=4.1,soft,timeo=30,retrans=2`, `^[^\n\r]*$` |
//! | `rbd.pool` | required, 1..64, `^[A-Za-z0-9._-]+$` |
//! | `rbd.user` | required, 1..64, same pattern, not starting `client.` (CEL) |
//! | `rbd.monitors` | 1..16 items, each 1..253, `^[A-Za-z0-9.-]+(:[0-9]{1,5})?$` |
//! | `rbd.networks` | 1..16 IPv4 CIDRs `^([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}$` (admission: canonical) |
//! | `rbd.clusterName` | default `ceph`, ≤ 63, `^[A-Za-z0-9_-]+$` |
//! | `rbd.keySecretRef.name` | required DNS-1123 subdomain, 1..253; data key fixed ([`RBD_KEY_DATA_KEY`]) |
//! | `rbd.secretUUID` | optional lowercase UUID |
//! | `imageVolumeCache` | optional `{enabled, maxSizeGB ≥ 1, maxCount ≥ 1}` |
//! | `extraOptions` | ≤ 32 entries, key ≤ 256, value ≤ 1024 (CEL) |
//!
//! `type` has no default: an object without one does not decode. `mountOptions` and
//! `clusterName` default in serde as in the schema, so a value written before defaulting
//! reads with its default.

mod blocks;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::is_zero;

pub use blocks::{
    DEFAULT_CLUSTER_NAME, DEFAULT_MOUNT_OPTIONS, ImageVolumeCacheSpec, KeySecretRef,
    NfsBackendSpec, RbdBackendSpec,
};

/// The API group.
pub const GROUP: &str = <CinderBackend as k8s_openapi::Resource>::GROUP;
/// The version.
pub const VERSION: &str = <CinderBackend as k8s_openapi::Resource>::VERSION;
/// The kind.
pub const KIND: &str = <CinderBackend as k8s_openapi::Resource>::KIND;
/// The resource (plural).
pub const PLURAL: &str = <CinderBackend as k8s_openapi::Resource>::URL_PATH_SEGMENT;
/// The apiVersion.
pub const API_VERSION: &str = <CinderBackend as k8s_openapi::Resource>::API_VERSION;

/// The one data key of the RBD key Secret: the user's raw cephx key, as `ceph auth
/// get-key client.<user>` prints it (the key Rook's CephClient writes).
pub const RBD_KEY_DATA_KEY: &str = "userKey";

/// A CinderBackend: one volume backend — an NFS export or a Ceph RBD pool — of the Cinder
/// its `spec.cinderRef` names. The Cinder runs one cinder-volume Deployment per attached,
/// credential-ready backend, configured by the backend's `[<name>]` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CinderBackend {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: CinderBackendSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CinderBackendStatus>,
}

wasm_operator_sdk::custom_resource!(
    CinderBackend,
    "cinder.openstack.c5c3.io",
    "v1alpha1",
    "CinderBackend",
    "cinderbackends",
    k8s_openapi::NamespaceResourceScope
);

impl CinderBackend {
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

    /// Whether it carries `finalizer`.
    pub fn holds(&self, finalizer: &str) -> bool {
        wasm_operator_sdk::has_finalizer(&self.metadata, finalizer)
    }
}

/// Which Cinder the backend attaches to, and the backend.
///
/// `cinderRef` and `type` are fixed at creation: the volumes already on the backend were
/// created under its host identity and by its driver. Delete and recreate instead.
/// Exactly the block `type` names is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
    {"rule": "self.cinderRef.name == oldSelf.cinderRef.name", "message": "cinderRef is immutable"},
    {"rule": "self.type == oldSelf.type", "message": "type is immutable"},
    {"rule": "(self.type == 'NFS') == has(self.nfs) && (self.type == 'RBD') == has(self.rbd)",
     "message": "exactly one backend block matching spec.type must be set (type NFS requires spec.nfs, type RBD requires spec.rbd)"},
])))]
pub struct CinderBackendSpec {
    /// The Cinder in this namespace the backend attaches to. It need not exist yet: a
    /// backend applied first waits for it (Ready False). Fixed at creation.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub cinder_ref: CinderRefSpec,
    /// The volume driver: `NFS` or `RBD`. Fixed at creation.
    #[serde(rename = "type")]
    pub type_: BackendType,
    /// The NFS export (exactly when type is NFS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfs: Option<NfsBackendSpec>,
    /// The Ceph RBD pool (exactly when type is RBD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rbd: Option<RbdBackendSpec>,
    /// The per-backend image-volume cache: the first volume created from an image is kept
    /// and later ones clone it on the backend. Needs `spec.internalTenant` on the Cinder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_volume_cache: Option<ImageVolumeCacheSpec>,
    /// `[<name>]` backend-section options the typed fields do not cover, by bare option
    /// name. Options the operator renders are refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(test, schemars(extend("maxProperties" = 32, "x-kubernetes-validations" = [
        {"rule": "self.all(k, size(k) <= 256 && size(self[k]) <= 1024)",
         "message": "each extraOptions key must be <=256 characters and each value <=1024 characters"}])))]
    pub extra_options: BTreeMap<String, String>,
}

/// A Cinder in the backend's namespace, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CinderRefSpec {
    /// The Cinder's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), extend("x-required" = true)))]
    pub name: String,
}

/// The backend's volume driver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum BackendType {
    /// The NFS driver: one file per volume on an export (the default of
    /// `Default::default` only: the field itself has none).
    #[default]
    #[serde(rename = "NFS")]
    Nfs,
    /// The RBD driver: one RBD image per volume in a Ceph pool.
    #[serde(rename = "RBD")]
    Rbd,
}

impl BackendType {
    /// The type as the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Nfs => "NFS",
            Self::Rbd => "RBD",
        }
    }
}

/// What the backend's controller found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CinderBackendStatus {
    /// CredentialsReady (nothing for NFS; the RBD key Secret carries a cephx key),
    /// ConfigProjected (the backend's cinder-volume Deployment mounts its section) and the
    /// aggregate Ready, each for `observedGeneration`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(schema_with = "wasm_operator_sdk::crd::conditions"))]
    pub conditions: Vec<Condition>,
    /// The metadata.generation last reconciled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
}
