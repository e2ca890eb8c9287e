//! The spec blocks OpenStack service CRs share (CobaltCore's `internal/common/types`),
//! facts §1.3: a Keystone, a Glance or a Cinder embeds the same `image`, `database`,
//! `cache`, `deployment`, … blocks, with the same schema rules and effective defaults.
//!
//! The types serialize as CobaltCore's Go types do: a zero number, an empty string or a
//! false flag is left out (`omitempty`), an absent block is `None`. With the `schemars`
//! feature they carry their JSON schemas, schema rules (CEL `x-kubernetes-validations`)
//! included, for a reconciler's CRD ([`crate::crd`]). Doc comments become the CRD's field
//! descriptions, so they speak to the resource's users.

mod api_service;
mod cache;
mod database;
mod image;
mod policy;
mod refs;
mod service;
mod workload;

pub use api_service::{
    DEFAULT_SERVICE_DOMAIN, DEFAULT_SERVICE_PROJECT, ServiceSpec, ServiceStatus, ServiceUserSpec,
};
pub use cache::{CacheSpec, DEFAULT_CACHE_BACKEND, MEMCACHED_PORT};
pub use database::{
    CREDENTIALS_MODE_DYNAMIC, CREDENTIALS_MODE_STATIC, DEFAULT_DATABASE_PORT, DatabaseSpec,
    DatabaseTlsSpec, TLS_MODES, UpgradePhase, escape_userinfo,
};
pub use image::ImageSpec;
pub use policy::{MiddlewareSpec, PipelinePosition, PluginSpec, PolicySpec};
pub use refs::{LocalObjectReference, SecretRefSpec, TargetClusterRefSpec};
pub use service::{LOG_LEVELS, LoggingSpec, UwsgiSpec};
pub use workload::{
    AutoscalingSpec, DEFAULT_PRE_STOP_SLEEP_SECONDS, DEFAULT_REPLICAS,
    DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, DeploymentSpec, GatewayParentRefSpec, GatewaySpec,
    NetworkPolicyIngressSource, NetworkPolicySpec,
};

/// `omitempty` for numbers (`#[serde(skip_serializing_if = "is_zero")]`).
pub fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// `omitempty` for flags.
pub fn is_false(value: &bool) -> bool {
    !*value
}

/// The DNS-1123 subdomain grammar of object names.
pub const DNS1123_SUBDOMAIN: &str =
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

#[cfg(test)]
mod tests;
