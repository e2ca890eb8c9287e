//! The Barbican resource (`barbican.openstack.c5c3.io/v1alpha1`, facts §4): the key
//! manager's API, its database and cache, the Keystone it authenticates against, and the
//! status the reconciler writes. Secret stores attach out of band as
//! BarbicanSecretStores ([`crate::store`]).
//!
//! DECISION: this is the minimal parent of facts §4 — the fields the aggregation and the
//! workload need. The shared deployment, autoscaling, networkPolicy, gateway, logging,
//! policyOverrides, extraConfig, plugins and middleware blocks are not served yet (the
//! README says so); an object carrying them is refused by the schema rather than
//! silently ignored.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::{ServiceSpec, ServiceStatus};

pub const GROUP: &str = "barbican.openstack.c5c3.io";
pub const VERSION: &str = "v1alpha1";
pub const API_VERSION: &str = "barbican.openstack.c5c3.io/v1alpha1";
pub const KIND: &str = "Barbican";
pub const PLURAL: &str = "barbicans";

/// The service user's name when the spec names none.
pub const DEFAULT_SERVICE_USER: &str = "barbican";

/// A Barbican: the OpenStack key manager.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Barbican {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: BarbicanSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<BarbicanStatus>,
}

wasm_operator_sdk::custom_resource!(
    Barbican,
    "barbican.openstack.c5c3.io",
    "v1alpha1",
    "Barbican",
    "barbicans",
    k8s_openapi::NamespaceResourceScope
);

/// What the Barbican runs and what it connects to: the spec every minimal service parent
/// shares.
pub type BarbicanSpec = ServiceSpec;

/// What the reconciler observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BarbicanStatus {
    /// The conditions, observedGeneration, endpoint and installed release.
    #[serde(flatten)]
    pub service: ServiceStatus,
    /// The secret stores the running config projects, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projected_secret_stores: Vec<String>,
    /// The server URLs of those stores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projected_secret_store_hosts: Vec<String>,
}

impl Barbican {
    /// The object's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The object's namespace.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
}
