//! The Cinder resource (`cinder.openstack.c5c3.io/v1alpha1`, facts §4): the block storage
//! service's API, its database and cache, the Keystone it authenticates against, and the
//! status the reconciler writes. Volume and backup backends attach out of band as
//! CinderBackends and CinderBackupBackends ([`crate::satellites`]).
//!
//! DECISION: this is the minimal parent of facts §4 — the fields the aggregation and the
//! workload need. The shared deployment, autoscaling, networkPolicy, gateway, logging,
//! policyOverrides, extraConfig, plugins and middleware blocks are not served yet (the
//! README says so); an object carrying them is refused by the schema rather than
//! silently ignored.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::{ServiceSpec, ServiceStatus};

pub const GROUP: &str = "cinder.openstack.c5c3.io";
pub const VERSION: &str = "v1alpha1";
pub const API_VERSION: &str = "cinder.openstack.c5c3.io/v1alpha1";
pub const KIND: &str = "Cinder";
pub const PLURAL: &str = "cinders";

/// The service user's name when the spec names none.
pub const DEFAULT_SERVICE_USER: &str = "cinder";

/// A Cinder: the OpenStack block storage service.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cinder {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: CinderSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CinderStatus>,
}

wasm_operator_sdk::custom_resource!(
    Cinder,
    "cinder.openstack.c5c3.io",
    "v1alpha1",
    "Cinder",
    "cinders",
    k8s_openapi::NamespaceResourceScope
);

/// What the Cinder runs and what it connects to: the spec every minimal service parent
/// shares.
pub type CinderSpec = ServiceSpec;

/// What the reconciler observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CinderStatus {
    /// The conditions, observedGeneration, endpoint and installed release.
    #[serde(flatten)]
    pub service: ServiceStatus,
    /// The cinder-volume services, one per projected CinderBackend.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_services: Vec<VolumeServiceStatus>,
}

/// One cinder-volume service.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct VolumeServiceStatus {
    /// The CinderBackend it serves.
    pub backend: String,
    /// Its service host, `{cinder}@{backend}`.
    pub host: String,
}

impl Cinder {
    /// The object's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The object's namespace.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
}
