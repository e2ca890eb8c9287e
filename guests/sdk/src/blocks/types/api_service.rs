//! The spec and status every minimal OpenStack API service parent shares (facts §4: the
//! Glance, Barbican and Cinder of the satellite handshake): the release, image,
//! database, cache, Keystone endpoints and service user, region, replicas and target
//! cluster; conditions, observedGeneration, endpoint and installed release.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use super::{CacheSpec, DatabaseSpec, ImageSpec, SecretRefSpec, TargetClusterRefSpec};

/// The service project when the spec names none.
pub const DEFAULT_SERVICE_PROJECT: &str = "service";
/// The domain of the service user and project when the spec names none.
pub const DEFAULT_SERVICE_DOMAIN: &str = "Default";

/// What a service runs and what it connects to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ServiceSpec {
    /// The OpenStack release deployed (`2025.2`): two releases a year.
    #[serde(default)]
    #[cfg_attr(feature = "schemars", schemars(regex(pattern = r"^\d{4}\.[12]$"), extend("x-required" = true)))]
    pub open_stack_release: String,
    /// The service's container image.
    #[serde(default)]
    #[cfg_attr(feature = "schemars", schemars(extend("x-required" = true)))]
    pub image: ImageSpec,
    /// The MariaDB the service keeps its state in.
    #[serde(default)]
    #[cfg_attr(feature = "schemars", schemars(extend("x-required" = true)))]
    pub database: DatabaseSpec,
    /// The Memcached servers.
    #[serde(default)]
    #[cfg_attr(feature = "schemars", schemars(extend("x-required" = true)))]
    pub cache: CacheSpec,
    /// The Keystone URL the service validates tokens against (`[keystone_authtoken]
    /// auth_url`), reachable from its pods.
    #[serde(default)]
    #[cfg_attr(
        feature = "schemars",
        schemars(length(min = 1), regex(pattern = r"^https?://"), extend("x-required" = true))
    )]
    pub keystone_endpoint: String,
    /// The Keystone URL clients are pointed at (`www_authenticate_uri`); the
    /// keystoneEndpoint when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "schemars", schemars(regex(pattern = r"^https?://")))]
    pub keystone_public_endpoint: String,
    /// The Keystone service user the service authenticates as.
    #[serde(default)]
    #[cfg_attr(feature = "schemars", schemars(extend("x-required" = true)))]
    pub service_user: ServiceUserSpec,
    /// The Keystone region (`[keystone_authtoken] region_name`); omitted when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub region: String,
    /// The API's replicas (1 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 0)))]
    pub replicas: Option<i32>,
    /// The cluster the children run on; this host runs them on its own cluster only.
    /// Fixed at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(extend("x-kubernetes-validations" = [
        {"rule": "self == oldSelf", "message": "targetClusterRef is immutable"}])))]
    pub target_cluster_ref: Option<TargetClusterRefSpec>,
}

/// The Keystone service account and the Secret with its password.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ServiceUserSpec {
    /// The user (the service's name, `glance`, when empty).
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
    #[cfg_attr(feature = "schemars", schemars(extend("x-required" = true)))]
    pub secret_ref: SecretRefSpec,
}

impl ServiceUserSpec {
    fn or<'a>(value: &'a str, default: &'a str) -> &'a str {
        if value.is_empty() { default } else { value }
    }

    /// The effective user name: `default` (the service's) when unset.
    pub fn username<'a>(&'a self, default: &'a str) -> &'a str {
        Self::or(&self.username, default)
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
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ServiceStatus {
    /// The sub-conditions and Ready.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schemars", schemars(schema_with = "crate::crd::conditions"))]
    pub conditions: Vec<Condition>,
    /// The generation the conditions describe.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub observed_generation: i64,
    /// The in-cluster API URL (`http://{name}.{ns}.svc.cluster.local:{port}`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub endpoint: String,
    /// The release whose schema the database holds (after a db-sync).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub installed_release: String,
}
