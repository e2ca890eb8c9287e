//! The `apps.gitlab.com/v2alpha1` GitLabSecrets resource as Rust types.
//!
//! The types are the definition: `crds/apps.gitlab.com_gitlabsecrets.yaml` is generated from
//! them (see `crd.rs`), with the bounds and enums of `gitlabsecrets-schema.md`. Doc comments
//! on fields become the CRD's descriptions, so they speak to the resource's users.
//!
//! The entries of spec.secrets and spec.certificates are the planner's
//! ([`wasm_operator_planner::entries`], re-exported here), declared once for this
//! reconciler and secretgen. The reconciler reads only the names in spec; the entries go to
//! the planner as JSON, so every field serializes back exactly as the API server stored it
//! (absent stays absent).
//!
//! DECISION: `spec.policy` and `authority.expiry`, rendered by earlier chart drafts, are not
//! declared: a strict create or server-side apply rejects them, a lax one drops them.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

pub use wasm_operator_planner::entries::{
    Authority, CertificateEntry, Charset, Encoding, Generator, GeneratorType, RailsField,
    SecretEntry, Shape, Wrap,
};

/// The API group.
pub const GROUP: &str = <GitLabSecrets as k8s_openapi::Resource>::GROUP;
/// The version.
pub const VERSION: &str = <GitLabSecrets as k8s_openapi::Resource>::VERSION;
/// The kind.
pub const KIND: &str = <GitLabSecrets as k8s_openapi::Resource>::KIND;
/// The resource (plural).
pub const PLURAL: &str = <GitLabSecrets as k8s_openapi::Resource>::URL_PATH_SEGMENT;
/// The most readyUnits one status entry holds (secretgen's `MAX_READY_UNITS`).
pub const MAX_READY_UNITS: usize = 64;
/// The unit a certificate set's TLS Secret holds once the set is ready.
pub const CERTIFICATE_SET_UNIT: &str = "certificate-set";

/// A GitLabSecrets: the Secrets one GitLab release needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitLabSecrets {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: GitLabSecretsSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<GitLabSecretsStatus>,
}

wasm_operator_sdk::custom_resource!(
    GitLabSecrets,
    "apps.gitlab.com",
    "v2alpha1",
    "GitLabSecrets",
    "gitlabsecrets",
    k8s_openapi::NamespaceResourceScope
);

/// The Secrets to create and fill: keys are added, never changed or removed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GitLabSecretsSpec {
    /// The Secrets and the keys they hold. A name may appear more than once; its entries
    /// then declare one Secret together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretEntry>,
    /// Self-signed certificate sets: a CA Secret, a TLS Secret and a chain Secret each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<CertificateEntry>,
}

/// What the reconciler found and did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GitLabSecretsStatus {
    /// Ready: whether every Secret holds what it declares.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// One entry per Secret of spec.secrets, then the CA, TLS and chain Secrets of each
    /// certificate set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretStatus>,
}

/// The readiness of one Secret.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SecretStatus {
    /// The Secret's name.
    pub name: String,
    /// Whether the Secret holds everything it declares.
    pub ready: bool,
    /// The data-bearing units the Secret held when it was last ready. A unit of spec.secrets
    /// listed here whose keys are all gone is generated again; a certificate set
    /// (certificate-set, on the TLS Secret) listed here whose keys are gone is reported
    /// rather than issued again.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(max = 64)))]
    pub ready_units: Vec<String>,
}

/// A condition, as metav1.Condition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition's type, e.g. Ready.
    #[serde(rename = "type")]
    #[cfg_attr(test, schemars(length(min = 1, max = 316)))]
    pub condition_type: String,
    /// True, False or Unknown.
    pub status: ConditionStatus,
    /// The metadata.generation the condition was set for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 0)))]
    pub observed_generation: Option<i64>,
    /// When the status last changed (RFC 3339).
    #[cfg_attr(test, schemars(extend("format" = "date-time")))]
    pub last_transition_time: String,
    /// Why, in CamelCase.
    #[cfg_attr(test, schemars(length(min = 1, max = 1024)))]
    pub reason: String,
    /// Why, for people.
    #[cfg_attr(test, schemars(length(max = 32768)))]
    pub message: String,
}

/// True, False or Unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum ConditionStatus {
    True,
    False,
    #[default]
    Unknown,
}
