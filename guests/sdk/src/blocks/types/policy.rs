//! `policyOverrides`, `plugins` and `middleware`: what a service's config files gain.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::refs::LocalObjectReference;

/// oslo.policy rule overrides: inline rules over those of a ConfigMap's `policy.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(extend("x-kubernetes-validations" = [
    {"rule": "!has(self.rules) || self.rules.all(k, size(k) > 0)",
     "message": "policy rule name must not be empty"},
    {"rule": "!has(self.rules) || self.rules.all(k, size(self.rules[k]) > 0)",
     "message": "policy rule value must not be empty"}])))]
pub struct PolicySpec {
    /// Rule name (`identity:get_user`) to rule (`role:admin`); they win over the
    /// ConfigMap's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rules: BTreeMap<String, String>,
    /// A ConfigMap in the CR's namespace with a `policy.yaml` key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<LocalObjectReference>,
}

/// A plugin or driver: one config section of its own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct PluginSpec {
    /// The plugin's name.
    pub name: String,
    /// The config section it is configured in.
    pub config_section: String,
    /// The section's options.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config: BTreeMap<String, String>,
}

/// Where a middleware filter goes in the API pipeline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum PipelinePosition {
    /// Before the service's own filters.
    #[default]
    Before,
    /// After them, before the application.
    After,
}

/// A WSGI middleware filter of `api-paste.ini`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct MiddlewareSpec {
    /// The filter's name.
    pub name: String,
    /// Its Python entry point (`audit_middleware:filter_factory`).
    pub filter_factory: String,
    /// Where it goes in the pipeline.
    pub position: PipelinePosition,
    /// The filter section's options.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config: BTreeMap<String, String>,
}
