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

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::{
    CacheSpec, DatabaseSpec, ImageSpec, SecretRefSpec, TargetClusterRefSpec,
};

pub const GROUP: &str = "cinder.openstack.c5c3.io";
pub const VERSION: &str = "v1alpha1";
pub const API_VERSION: &str = "cinder.openstack.c5c3.io/v1alpha1";
pub const KIND: &str = "Cinder";
pub const PLURAL: &str = "cinders";

/// The service user's name when the spec names none.
pub const DEFAULT_SERVICE_USER: &str = "cinder";
/// The service project when the spec names none.
pub const DEFAULT_SERVICE_PROJECT: &str = "service";
/// The domain of the service user and project when the spec names none.
pub const DEFAULT_SERVICE_DOMAIN: &str = "Default";

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

/// What the Cinder runs and what it connects to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CinderSpec {
    /// The OpenStack release deployed (`2025.2`): two releases a year.
    #[serde(default)]
    #[cfg_attr(test, schemars(regex(pattern = r"^\d{4}\.[12]$"), extend("x-required" = true)))]
    pub open_stack_release: String,
    /// The cinder-api container image.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub image: ImageSpec,
    /// The MariaDB the volumes' records live in.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub database: DatabaseSpec,
    /// The Memcached servers.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub cache: CacheSpec,
    /// The Keystone URL Cinder validates tokens against (`[keystone_authtoken]
    /// auth_url`), reachable from the Cinder pods.
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(length(min = 1), regex(pattern = r"^https?://"), extend("x-required" = true))
    )]
    pub keystone_endpoint: String,
    /// The Keystone URL clients are pointed at (`www_authenticate_uri`); the
    /// keystoneEndpoint when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(regex(pattern = r"^https?://")))]
    pub keystone_public_endpoint: String,
    /// The Keystone service user Cinder authenticates as.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub service_user: ServiceUserSpec,
    /// The Keystone region (`[keystone_authtoken] region_name`); omitted when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub region: String,
    /// The cinder-api replicas (1 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub replicas: Option<i32>,
    /// The cluster the children run on; this host runs them on its own cluster only.
    /// Fixed at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
        {"rule": "self == oldSelf", "message": "targetClusterRef is immutable"}])))]
    pub target_cluster_ref: Option<TargetClusterRefSpec>,
}

/// The Keystone service account and the Secret with its password.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServiceUserSpec {
    /// The user (`cinder` when empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub username: String,
    /// The project it is scoped to (`service` when empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub project_name: String,
    /// The user's domain (`Default` when empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user_domain_name: String,
    /// The project's domain (`Default` when empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub project_domain_name: String,
    /// The Secret with the password (key `password` unless named).
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub secret_ref: SecretRefSpec,
}

impl ServiceUserSpec {
    fn or<'a>(value: &'a str, default: &'a str) -> &'a str {
        if value.is_empty() { default } else { value }
    }

    /// The effective user name.
    pub fn username(&self) -> &str {
        Self::or(&self.username, DEFAULT_SERVICE_USER)
    }

    /// The effective project.
    pub fn project_name(&self) -> &str {
        Self::or(&self.project_name, DEFAULT_SERVICE_PROJECT)
    }

    /// The effective user domain.
    pub fn user_domain_name(&self) -> &str {
        Self::or(&self.user_domain_name, DEFAULT_SERVICE_DOMAIN)
    }

    /// The effective project domain.
    pub fn project_domain_name(&self) -> &str {
        Self::or(&self.project_domain_name, DEFAULT_SERVICE_DOMAIN)
    }

    /// The Secret's data key holding the password.
    pub fn password_key(&self) -> &str {
        Self::or(&self.secret_ref.key, "password")
    }
}

/// What the reconciler observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CinderStatus {
    /// The sub-conditions and Ready.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(schema_with = "wasm_operator_sdk::crd::conditions"))]
    pub conditions: Vec<Condition>,
    /// The generation the conditions describe.
    #[serde(
        default,
        skip_serializing_if = "wasm_operator_sdk::blocks::types::is_zero"
    )]
    pub observed_generation: i64,
    /// The in-cluster API URL (`http://{name}.{ns}.svc.cluster.local:8776`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub endpoint: String,
    /// The release whose schema the database holds (after a db-sync).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub installed_release: String,
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
