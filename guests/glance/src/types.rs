//! The Glance resource (`glance.openstack.c5c3.io/v1alpha1`, facts §4): the image
//! service's API, its database and cache, the Keystone it authenticates against, and
//! the status the reconciler writes. Image stores attach out of band as GlanceBackends
//! ([`crate::backend`]).
//!
//! DECISION: this is the minimal parent of facts §4 — the fields the aggregation and the
//! workload need. The shared deployment, autoscaling, networkPolicy, gateway, logging,
//! policyOverrides, extraConfig, plugins and middleware blocks are not served yet (the
//! README says so); an object carrying them is refused by the schema rather than
//! silently ignored.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::{ServiceSpec, ServiceStatus};

pub const GROUP: &str = "glance.openstack.c5c3.io";
pub const VERSION: &str = "v1alpha1";
pub const API_VERSION: &str = "glance.openstack.c5c3.io/v1alpha1";
pub const KIND: &str = "Glance";
pub const PLURAL: &str = "glances";

/// The service user's name when the spec names none.
pub const DEFAULT_SERVICE_USER: &str = "glance";

/// A Glance: the OpenStack image service.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Glance {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: GlanceSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<GlanceStatus>,
}

wasm_operator_sdk::custom_resource!(
    Glance,
    "glance.openstack.c5c3.io",
    "v1alpha1",
    "Glance",
    "glances",
    k8s_openapi::NamespaceResourceScope
);

/// What the Glance runs and what it connects to: the spec every minimal service parent
/// shares.
pub type GlanceSpec = ServiceSpec;

/// What the reconciler observed.
pub type GlanceStatus = ServiceStatus;

impl Glance {
    /// The object's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The object's namespace.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
}
