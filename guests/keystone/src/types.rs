//! The `keystone.openstack.c5c3.io/v1alpha1` Keystone resource as Rust types (facts §1).
//!
//! The types are the definition: `crds/keystone.openstack.c5c3.io_keystones.yaml` is
//! generated from them (`crd.rs`). The blocks OpenStack services share come from
//! [`wasm_operator_sdk::blocks::types`]; the Keystone-only blocks are here. Doc comments
//! become the CRD's field descriptions, so they speak to the resource's users.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::secrets::SecretStoreRefSpec;
use wasm_operator_sdk::blocks::types::{
    AutoscalingSpec, CacheSpec, DatabaseSpec, DeploymentSpec, GatewaySpec, ImageSpec, LoggingSpec,
    MiddlewareSpec, NetworkPolicySpec, PluginSpec, PolicySpec, SecretRefSpec, TargetClusterRefSpec,
    UpgradePhase, UwsgiSpec, is_false, is_zero,
};

/// The API group.
pub const GROUP: &str = <Keystone as k8s_openapi::Resource>::GROUP;
/// The version.
pub const VERSION: &str = <Keystone as k8s_openapi::Resource>::VERSION;
/// The kind.
pub const KIND: &str = <Keystone as k8s_openapi::Resource>::KIND;
/// The resource (plural).
pub const PLURAL: &str = <Keystone as k8s_openapi::Resource>::URL_PATH_SEGMENT;
/// The apiVersion.
pub const API_VERSION: &str = <Keystone as k8s_openapi::Resource>::API_VERSION;

/// The default schedule of key rotation: weekly, Sunday midnight.
pub const DEFAULT_ROTATION_SCHEDULE: &str = "0 0 * * 0";
/// The default schedule of `trust_flush`: hourly.
pub const DEFAULT_TRUST_FLUSH_SCHEDULE: &str = "0 * * * *";
/// The default schedule of admin-password rotation: monthly, on the 1st.
pub const DEFAULT_PASSWORD_ROTATION_SCHEDULE: &str = "0 0 1 * *";
/// The default length of a rotated admin password.
pub const DEFAULT_PASSWORD_LENGTH: i32 = 32;
/// The shortest admin password allowed.
pub const MIN_PASSWORD_LENGTH: i32 = 24;
/// The fewest active fernet or credential keys.
pub const MIN_ACTIVE_KEYS: i32 = 3;
/// The default admin user.
pub const DEFAULT_ADMIN_USER: &str = "admin";
/// The default region.
pub const DEFAULT_REGION: &str = "RegionOne";

/// A Keystone: one OpenStack identity service.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Keystone {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: KeystoneSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<KeystoneStatus>,
}

wasm_operator_sdk::custom_resource!(
    Keystone,
    "keystone.openstack.c5c3.io",
    "v1alpha1",
    "Keystone",
    "keystones",
    k8s_openapi::NamespaceResourceScope
);

/// What the Keystone runs and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
    {"rule": "has(self.targetClusterRef) == has(oldSelf.targetClusterRef) && (!has(self.targetClusterRef) || self.targetClusterRef.name == oldSelf.targetClusterRef.name)",
     "message": "targetClusterRef is immutable"}])))]
pub struct KeystoneSpec {
    /// The API Deployment's pod-level settings.
    #[serde(default)]
    pub deployment: DeploymentSpec,
    /// The Keystone image; its tag names the release.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub image: ImageSpec,
    /// The MariaDB database: managed (`clusterRef`) or an existing server (`host`).
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub database: DatabaseSpec,
    /// The Memcached cache: managed (`clusterRef`) or explicit `servers`.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub cache: CacheSpec,
    /// Fernet token key rotation.
    #[serde(default)]
    pub fernet: KeyRotationSpec,
    /// Credential encryption key rotation.
    #[serde(default)]
    pub credential_keys: KeyRotationSpec,
    /// Scheduled rotation of the admin password (off when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_rotation: Option<PasswordRotationSpec>,
    /// Periodic `keystone-manage trust_flush` (admission adds it, hourly, when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_flush: Option<TrustFlushSpec>,
    /// How federation's proxy runs and which dashboards it trusts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub federation: Option<FederationSpec>,
    /// The initial bootstrap: admin user, password and region.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub bootstrap: BootstrapSpec,
    /// WSGI filters added to the API pipeline of `api-paste.ini`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub middleware: Vec<MiddlewareSpec>,
    /// Plugins and drivers, one config section each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["configSection"])))]
    pub plugins: Vec<PluginSpec>,
    /// oslo.policy overrides rendered into `policy.yaml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_overrides: Option<PolicySpec>,
    /// The External Secrets store of the Keystone's ExternalSecrets and PushSecrets
    /// (the ClusterSecretStore `openbao-cluster-store` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_store_ref: Option<SecretStoreRefSpec>,
    /// The cluster the Keystone's children live on (this one when absent); fixed at
    /// creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cluster_ref: Option<TargetClusterRefSpec>,
    /// A HorizontalPodAutoscaler for the API (none when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<AutoscalingSpec>,
    /// A NetworkPolicy for the API pods (none when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_policy: Option<NetworkPolicySpec>,
    /// An HTTPRoute exposing the API through a Gateway (none when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewaySpec>,
    /// The uWSGI server (2 processes, 1 thread, keep-alive when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uwsgi: Option<UwsgiSpec>,
    /// oslo.log output (admission adds text, INFO, no debug when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<LoggingSpec>,
    /// Free-form `keystone.conf` sections and options; they win over everything the
    /// operator renders.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_config: BTreeMap<String, BTreeMap<String, String>>,
}

/// Rotation of the fernet or the credential keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct KeyRotationSpec {
    /// When the keys rotate (cron).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(extend("default" = "0 0 * * 0")))]
    pub rotation_schedule: String,
    /// The most keys kept active (at least 3).
    #[serde(default, skip_serializing_if = "is_zero")]
    #[cfg_attr(test, schemars(range(min = 3), extend("default" = 3)))]
    pub max_active_keys: i32,
    /// Pauses the rotation CronJob.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(test, schemars(extend("default" = false)))]
    pub suspend: bool,
}

impl KeyRotationSpec {
    /// The active key count: `maxActiveKeys`, at least 3.
    pub fn active_keys(&self) -> i32 {
        self.max_active_keys.max(MIN_ACTIVE_KEYS)
    }
}

/// Periodic purging of expired trusts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TrustFlushSpec {
    /// When `trust_flush` runs (cron).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(extend("default" = "0 * * * *")))]
    pub schedule: String,
    /// Pauses the CronJob.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(test, schemars(extend("default" = false)))]
    pub suspend: bool,
    /// Arguments appended to `keystone-manage trust_flush`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

/// Federation: the proxy sidecar's image and the dashboards trusted with WebSSO tokens.
/// Federation itself is switched on by an OIDC or SAML KeystoneIdentityBackend.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FederationSpec {
    /// The Apache proxy sidecar's image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_image: Option<ImageSpec>,
    /// Dashboard origins a WebSSO token may be posted back to, exactly as the dashboard
    /// sends them (`https://horizon.example.com/auth/websso/`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(
        test,
        schemars(
            length(max = 8),
            inner(length(max = 512), regex(pattern = r"^https?://[^\s]*$"))
        )
    )]
    pub trusted_dashboards: Vec<String>,
}

/// Scheduled admin-password rotation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PasswordRotationSpec {
    /// Turns rotation on.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(test, schemars(extend("default" = false)))]
    pub enabled: bool,
    /// When a new password is made (cron).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(extend("default" = "0 0 1 * *")))]
    pub schedule: String,
    /// Pauses the CronJob.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(test, schemars(extend("default" = false)))]
    pub suspend: bool,
    /// The new password's length (at least 24).
    #[serde(default, skip_serializing_if = "is_zero")]
    #[cfg_attr(test, schemars(range(min = 24), extend("default" = 32)))]
    pub password_length: i32,
}

/// The bootstrap of the identity service.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BootstrapSpec {
    /// The admin user; fixed at creation.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(extend("default" = "admin", "x-kubernetes-validations" = [
        {"rule": "self == oldSelf", "message": "bootstrap.adminUser is immutable"}])))]
    pub admin_user: String,
    /// The Secret holding the admin password (key `password`).
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub admin_password_secret_ref: SecretRefSpec,
    /// The region; fixed at creation.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(extend("default" = "RegionOne", "x-kubernetes-validations" = [
        {"rule": "self == oldSelf", "message": "bootstrap.region is immutable"}])))]
    pub region: String,
    /// The externally routable endpoint (`https://keystone.example.com/v3`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(regex(pattern = r"^https?://")))]
    pub public_endpoint: String,
}

/// What the reconciler found and did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct KeystoneStatus {
    /// Ready and its sub-conditions, each for `observedGeneration`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(schema_with = "wasm_operator_sdk::crd::conditions"))]
    pub conditions: Vec<Condition>,
    /// The metadata.generation last reconciled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// The API's endpoint URL.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub endpoint: String,
    /// The release whose schema the database holds.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub installed_release: String,
    /// The release an upgrade is moving to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub target_release: String,
    /// The phase of a database upgrade (empty when none runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_phase: Option<UpgradePhase>,
}
