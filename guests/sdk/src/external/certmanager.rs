//! cert-manager's `cert-manager.io/v1` Certificate.

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::{ConditionsStatus, external_kind};

/// The issuer that signs a Certificate (`spec.issuerRef`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuerRef {
    pub name: String,
    /// `Issuer` or `ClusterIssuer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `cert-manager.io` for cert-manager's own issuers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// `spec.privateKey`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificatePrivateKey {
    /// `RSA`, `ECDSA` or `Ed25519`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
    /// `PKCS1` or `PKCS8`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// `Never` or `Always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation_policy: Option<String>,
}

/// `Certificate.spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateSpec {
    pub secret_name: String,
    pub issuer_ref: IssuerRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dns_names: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_addresses: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_before: Option<String>,
    /// e.g. `client auth`, `digital signature`, `key encipherment`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub usages: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key: Option<CertificatePrivateKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "isCA")]
    pub is_ca: Option<bool>,
}

/// A cert-manager Certificate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    pub metadata: ObjectMeta,
    pub spec: CertificateSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ConditionsStatus>,
}
external_kind!(
    Certificate,
    "cert-manager.io",
    "v1",
    "Certificate",
    "certificates",
    NamespaceResourceScope
);
