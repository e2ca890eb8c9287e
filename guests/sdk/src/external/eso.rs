//! External Secrets Operator: `external-secrets.io/v1` ExternalSecret, SecretStore and
//! ClusterSecretStore, and `external-secrets.io/v1alpha1` PushSecret (an unstable API).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ConditionsStatus, external_kind};

/// The condition type ESO sets on a synced ExternalSecret (`esov1.ExternalSecretReady`).
pub const EXTERNAL_SECRET_READY: &str = "Ready";
/// The condition type ESO sets on a usable store (`esov1.SecretStoreReady`).
pub const SECRET_STORE_READY: &str = "Ready";

/// The store an ExternalSecret reads from (`spec.secretStoreRef`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretStoreRef {
    pub name: String,
    /// `SecretStore` or `ClusterSecretStore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// Where an ExternalSecret writes (`spec.target`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretTarget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `Owner`, `Orphan`, `Merge` or `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_policy: Option<String>,
    /// `Delete`, `Merge` or `Retain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_policy: Option<String>,
    /// The Secret template; its structure is not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
}

/// `spec.data[].remoteRef`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretDataRemoteRef {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// `spec.data[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretData {
    pub secret_key: String,
    pub remote_ref: ExternalSecretDataRemoteRef,
}

/// `ExternalSecret.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSecretSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_store_ref: Option<SecretStoreRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<ExternalSecretTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_interval: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data: Vec<ExternalSecretData>,
    /// `spec.dataFrom`; its structure is not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_from: Vec<Value>,
}

/// An External Secrets ExternalSecret.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExternalSecret {
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ExternalSecretSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ConditionsStatus>,
}
external_kind!(
    ExternalSecret,
    "external-secrets.io",
    "v1",
    "ExternalSecret",
    "externalsecrets",
    NamespaceResourceScope
);

/// A namespaced store; only its Ready condition is read, its provider is kept as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SecretStore {
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ConditionsStatus>,
}
external_kind!(
    SecretStore,
    "external-secrets.io",
    "v1",
    "SecretStore",
    "secretstores",
    NamespaceResourceScope
);

/// A cluster-wide store; only its Ready condition is read, its provider is kept as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterSecretStore {
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ConditionsStatus>,
}
external_kind!(
    ClusterSecretStore,
    "external-secrets.io",
    "v1",
    "ClusterSecretStore",
    "clustersecretstores",
    ClusterResourceScope
);

/// One store a PushSecret writes to (`spec.secretStoreRefs[]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushSecretStoreRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `SecretStore` or `ClusterSecretStore` (server default `SecretStore`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// `spec.selector.secret`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushSecretSecret {
    pub name: String,
}

/// `spec.selector`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushSecretSelector {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<PushSecretSecret>,
}

/// `spec.data[].match.remoteRef`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretRemoteRef {
    pub remote_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
}

/// `spec.data[].match`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretMatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key: Option<String>,
    pub remote_ref: PushSecretRemoteRef,
}

/// `spec.data[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushSecretData {
    #[serde(rename = "match")]
    pub match_: PushSecretMatch,
}

/// `PushSecret.spec`. `updatePolicy` and `refreshInterval` are server-defaulted and left to
/// the server unless the builder sets them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushSecretSpec {
    pub secret_store_refs: Vec<PushSecretStoreRef>,
    pub selector: PushSecretSelector,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data: Vec<PushSecretData>,
    /// `Delete` or `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_policy: Option<String>,
    /// `Replace` or `IfNotExists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_interval: Option<String>,
}

/// An External Secrets PushSecret.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PushSecret {
    pub metadata: ObjectMeta,
    pub spec: PushSecretSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ConditionsStatus>,
}
external_kind!(
    PushSecret,
    "external-secrets.io",
    "v1alpha1",
    "PushSecret",
    "pushsecrets",
    NamespaceResourceScope
);
