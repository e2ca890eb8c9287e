//! `deployment`, `autoscaling`, `networkPolicy` and `gateway`: the API pods and how they
//! are reached.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::DeploymentStrategy;
use k8s_openapi::api::core::v1::{ResourceRequirements, TopologySpreadConstraint};
use k8s_openapi::api::networking::v1::NetworkPolicyEgressRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};

/// API pods when `deployment.replicas` is unset or zero.
pub const DEFAULT_REPLICAS: i32 = 3;
/// The pods' grace period when unset.
pub const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
/// The preStop sleep when unset.
pub const DEFAULT_PRE_STOP_SLEEP_SECONDS: i64 = 5;

/// The API Deployment's pod-level settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(extend("x-kubernetes-validations" = [
    {"rule": "(has(self.preStopSleepSeconds) ? self.preStopSleepSeconds : 5) < (has(self.terminationGracePeriodSeconds) ? self.terminationGracePeriodSeconds : 30)",
     "message": "preStopSleepSeconds must be strictly less than terminationGracePeriodSeconds"}])))]
pub struct DeploymentSpec {
    /// API pods (3 when unset).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1), extend("default" = 3)))]
    pub replicas: i32,
    /// The API container's requests and limits (admission sets 256Mi/100m requested,
    /// 512Mi/500m limits when unset or empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schemars",
        schemars(schema_with = "crate::crd::kubernetes::<ResourceRequirements>")
    )]
    pub resources: Option<ResourceRequirements>,
    /// Seconds between SIGTERM and SIGKILL (30 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 10)))]
    pub termination_grace_period_seconds: Option<i64>,
    /// Seconds the preStop hook sleeps, so endpoints drop the pod before it stops
    /// (5 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 0)))]
    pub pre_stop_sleep_seconds: Option<i64>,
    /// The rollout strategy (RollingUpdate, maxUnavailable 0, maxSurge 1 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schemars",
        schemars(schema_with = "crate::crd::kubernetes::<DeploymentStrategy>")
    )]
    pub strategy: Option<DeploymentStrategy>,
    /// How pods spread (unset: across zones and hosts, maxSkew 1, ScheduleAnyway; an empty
    /// list: no constraint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schemars",
        schemars(schema_with = "crate::crd::kubernetes::<Vec<TopologySpreadConstraint>>")
    )]
    pub topology_spread_constraints: Option<Vec<TopologySpreadConstraint>>,
    /// The pods' priority class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
}

impl DeploymentSpec {
    /// The replica count, 3 for zero.
    pub fn effective_replicas(&self) -> i32 {
        if self.replicas <= 0 {
            DEFAULT_REPLICAS
        } else {
            self.replicas
        }
    }

    /// The grace period, 30 s when unset.
    pub fn effective_grace_seconds(&self) -> i64 {
        self.termination_grace_period_seconds
            .unwrap_or(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS)
    }

    /// The preStop sleep, 5 s when unset.
    pub fn effective_pre_stop_seconds(&self) -> i64 {
        self.pre_stop_sleep_seconds
            .unwrap_or(DEFAULT_PRE_STOP_SLEEP_SECONDS)
    }
}

/// Horizontal pod autoscaling of the API Deployment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(extend("x-kubernetes-validations" = [
    {"rule": "has(self.targetCPUUtilization) || has(self.targetMemoryUtilization)",
     "message": "at least one of targetCPUUtilization or targetMemoryUtilization must be set"},
    {"rule": "!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",
     "message": "minReplicas must not exceed maxReplicas"}])))]
pub struct AutoscalingSpec {
    /// The fewest replicas (the Deployment's replica count when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1)))]
    pub min_replicas: Option<i32>,
    /// The most replicas.
    #[cfg_attr(feature = "schemars", schemars(range(min = 1)))]
    pub max_replicas: i32,
    /// Target average CPU utilization, percent.
    #[serde(
        default,
        rename = "targetCPUUtilization",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1, max = 100)))]
    pub target_cpu_utilization: Option<i32>,
    /// Target average memory utilization, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1, max = 100)))]
    pub target_memory_utilization: Option<i32>,
}

/// Network isolation of the API pods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(extend("x-kubernetes-validations" = [
    {"rule": "size(self.ingress) > 0",
     "message": "at least one ingress source must be specified"}])))]
pub struct NetworkPolicySpec {
    /// The sources allowed to reach the API port.
    #[serde(default)]
    #[cfg_attr(feature = "schemars", schemars(extend("x-required" = true)))]
    pub ingress: Vec<NetworkPolicyIngressSource>,
    /// Egress rules added after the derived ones (DNS, database, cache).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(
        feature = "schemars",
        schemars(schema_with = "crate::crd::kubernetes::<Vec<NetworkPolicyEgressRule>>")
    )]
    pub additional_egress: Vec<NetworkPolicyEgressRule>,
}

/// Pods allowed to reach the API: those of the selected namespaces, narrowed by
/// `podSelector` when set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct NetworkPolicyIngressSource {
    /// The namespaces.
    #[cfg_attr(
        feature = "schemars",
        schemars(schema_with = "crate::crd::kubernetes::<LabelSelector>")
    )]
    pub namespace_selector: LabelSelector,
    /// The pods within them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schemars",
        schemars(schema_with = "crate::crd::kubernetes::<LabelSelector>")
    )]
    pub pod_selector: Option<LabelSelector>,
}

/// External exposure through a Gateway API HTTPRoute on an existing Gateway.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct GatewaySpec {
    /// The Gateway the route attaches to.
    pub parent_ref: GatewayParentRefSpec,
    /// The host name the route matches.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1)))]
    pub hostname: String,
    /// The path prefix the route matches (`/` when unset).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// Annotations copied onto the HTTPRoute.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl GatewaySpec {
    /// The path prefix: `/` when unset, `/`-prefixed otherwise.
    pub fn effective_path(&self) -> String {
        if self.path.is_empty() {
            "/".into()
        } else if self.path.starts_with('/') {
            self.path.clone()
        } else {
            format!("/{}", self.path)
        }
    }
}

/// A Gateway, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct GatewayParentRefSpec {
    /// The Gateway's name.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1)))]
    pub name: String,
    /// Its namespace (the CR's when unset).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// One listener of the Gateway.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub section_name: String,
}
