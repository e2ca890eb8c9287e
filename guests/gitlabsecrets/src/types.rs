//! The `apps.gitlab.com/v2alpha1` GitLabSecrets resource as Rust types.
//!
//! The types are the definition: `crds/apps.gitlab.com_gitlabsecrets.yaml` is generated from
//! them (see `crd.rs`), with the bounds and enums of `gitlabsecrets-schema.md`. Doc comments
//! on fields become the CRD's descriptions, so they speak to the resource's users.
//!
//! The reconciler reads only the names in spec; the entries go to the planner as JSON, so
//! every field serializes back exactly as the API server stored it (absent stays absent).
//!
//! DECISION: a generator is one flat object with a `type` and the union of the fields of
//! every type, not a tagged enum. A structural schema cannot declare one set of properties
//! per variant, and the planner checks each type's own fields (a missing `key` fails the
//! plan of that Secret, naming it).
//!
//! DECISION: `spec.policy` and `authority.expiry`, rendered by earlier chart drafts, are not
//! declared: a strict create or server-side apply rejects them, a lax one drops them.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// The API group.
pub const GROUP: &str = "apps.gitlab.com";
/// The version.
pub const VERSION: &str = "v2alpha1";
/// The kind.
pub const KIND: &str = "GitLabSecrets";
/// The resource (plural).
pub const PLURAL: &str = "gitlabsecrets";
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

impl k8s_openapi::Resource for GitLabSecrets {
    const API_VERSION: &'static str = "apps.gitlab.com/v2alpha1";
    const GROUP: &'static str = GROUP;
    const KIND: &'static str = KIND;
    const VERSION: &'static str = VERSION;
    const URL_PATH_SEGMENT: &'static str = PLURAL;
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for GitLabSecrets {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

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

/// One Secret, or part of one, and the generators of its keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SecretEntry {
    /// The Secret's name.
    #[cfg_attr(test, schemars(length(min = 1, max = 253)))]
    pub name: String,
    /// The type a missing Secret is created with; an existing Secret keeps its own.
    #[serde(rename = "type", default = "opaque")]
    pub secret_type: String,
    /// What the Secret's keys hold.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub generators: Vec<Generator>,
}

fn opaque() -> String {
    "Opaque".to_owned()
}

/// A generator of one or more keys. Which fields apply depends on `type`: random (key,
/// charset, length, encoding, wrap), bytes (key, length, encoding), static (key, value), rsa
/// (key, bits), x509 (commonName, bits, days, certKey, keyKey), sshHostKeys (none),
/// railsSecrets (key, env, fields).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Generator {
    /// The generator.
    #[serde(rename = "type")]
    pub generator_type: GeneratorType,
    /// The Secret key the value is stored under (railsSecrets: always secrets.yml).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(length(min = 1, max = 253)))]
    pub key: Option<String>,
    /// The characters of a random value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<Charset>,
    /// The number of characters (random) or bytes (bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub length: Option<u32>,
    /// random: none (default), base64 or base64-nowrap; bytes: raw (default) or base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// random: none (default) or jsonArray, which stores `["<value>"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrap: Option<Wrap>,
    /// static: the value, stored as given (may be empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// rsa and x509: the RSA key size in bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 2048, max = 8192)))]
    pub bits: Option<u32>,
    /// x509: the certificate's subject and issuer common name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_name: Option<String>,
    /// x509: the days the certificate is valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub days: Option<u32>,
    /// x509: the key of the certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(length(min = 1, max = 253)))]
    pub cert_key: Option<String>,
    /// x509: the key of the private key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(length(min = 1, max = 253)))]
    pub key_key: Option<String>,
    /// railsSecrets: the environment the document's fields are under, e.g. production.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub env: Option<String>,
    /// railsSecrets: the fields of the document; a missing or null one is generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<RailsField>>,
}

/// The generator types: random, bytes, static, rsa, x509, sshHostKeys, railsSecrets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum GeneratorType {
    #[default]
    Random,
    Bytes,
    Static,
    Rsa,
    X509,
    SshHostKeys,
    RailsSecrets,
}

/// alphanumeric (a-zA-Z0-9), hex (a-f0-9) or lowerAlphanumeric (a-z0-9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Charset {
    Alphanumeric,
    Hex,
    LowerAlphanumeric,
}

/// How a value is encoded: none, base64, base64-nowrap (random), raw, base64 (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum Encoding {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "base64")]
    Base64,
    #[serde(rename = "base64-nowrap")]
    Base64NoWrap,
    #[serde(rename = "raw")]
    Raw,
}

/// How an encoded random value is wrapped: none or jsonArray.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum Wrap {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "jsonArray")]
    JsonArray,
}

/// One field of a secrets.yml document, directly under its environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RailsField {
    /// The field's name.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub path: String,
    /// scalar (charset, length), pem (bits) or list (charset, length: a one-element list).
    pub shape: Shape,
    /// scalar and list: the characters of the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<Charset>,
    /// scalar and list: the number of characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub length: Option<u32>,
    /// pem: the RSA key size in bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 2048, max = 8192)))]
    pub bits: Option<u32>,
}

/// The shape of a secrets.yml field: scalar, pem or list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Shape {
    #[default]
    Scalar,
    Pem,
    List,
}

/// A self-signed certificate set: a CA and a wildcard certificate for a domain, in three
/// Secrets. An existing set is never reissued or renewed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct CertificateEntry {
    /// The CA.
    pub authority: Authority,
    /// The domain: a DNS name, an IP address, an e-mail address or a URI. The certificate
    /// names it and its wildcard.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub domain: String,
    /// The days the CA is valid (recorded; the issued CA is valid 43800 hours, as the
    /// chart's Job issued it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub ca_days: Option<u32>,
    /// The days the certificate is valid (recorded; the issued certificate is valid 8760
    /// hours, as the chart's Job issued it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub cert_days: Option<u32>,
    /// The kubernetes.io/tls Secret: tls.crt and tls.key.
    #[cfg_attr(test, schemars(length(min = 1, max = 253)))]
    pub tls_secret: String,
    /// The Opaque Secret holding the CA certificate under caKey.
    #[cfg_attr(test, schemars(length(min = 1, max = 253)))]
    pub ca_secret: String,
    /// The key of the CA certificate.
    #[cfg_attr(test, schemars(length(min = 1, max = 253)))]
    pub ca_key: String,
    /// The Opaque Secret holding the CA certificate, then tls.crt, under chainKey.
    #[cfg_attr(test, schemars(length(min = 1, max = 253)))]
    pub chain_secret: String,
    /// The key of the chain.
    #[cfg_attr(test, schemars(length(min = 1, max = 253)))]
    pub chain_key: String,
}

impl CertificateEntry {
    /// The three Secrets of the set, in the order they are written: CA, TLS, chain.
    pub fn secret_names(&self) -> [&str; 3] {
        [&self.ca_secret, &self.tls_secret, &self.chain_secret]
    }
}

/// The CA of a certificate set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Authority {
    /// The CA's common name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_name: Option<String>,
    /// The CA's organization (the chart sets the namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// The CA's organizational unit (the chart sets the release).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organizational_unit: Option<String>,
    /// The key algorithm of both certificates.
    pub algorithm: Algorithm,
    /// rsa: 2048 to 8192 bits (default 2048); ecdsa: 256, 384 or 521 (default 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 256, max = 8192)))]
    pub key_size: Option<u32>,
}

/// rsa or ecdsa. ed25519 is refused: browsers do not accept an Ed25519 TLS server
/// certificate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Algorithm {
    #[default]
    Rsa,
    Ecdsa,
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
    /// The data-bearing units the Secret held when it was last ready; a unit listed here
    /// whose keys are all gone is reported rather than generated again.
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
