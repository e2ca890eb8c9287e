//! The entries of a GitLabSecrets' spec, as users write them and the API server stores
//! them: spec.secrets ([`SecretEntry`], its [`Generator`]s) and spec.certificates
//! ([`CertificateEntry`]). Defined once here for both sides of the planner interface: the
//! gitlabsecrets reconciler decodes its resource with them (and generates its CRD from them,
//! with the `schemars` feature), and hands them to the planner as JSON; secretgen decodes
//! that JSON with them and plans from their [`typed`] view.
//!
//! Field names follow `gitlabsecrets-schema.md`. Doc comments on fields become the CRD's
//! descriptions, so they speak to the resource's users. Every field serializes back exactly
//! as it was decoded (absent stays absent), and an explicit `null` reads as absent, as the
//! API server prunes it. Unknown fields are ignored (the CRD prunes them).
//!
//! DECISION: a generator is one flat object with a `type` and the union of the fields of
//! every type, not a tagged enum. A structural schema cannot declare one set of properties
//! per variant; [`typed::Generator`] is the per-type view, which checks that a generator has
//! the fields of its type (a missing `key` fails the plan of that Secret, naming it).

use serde::{Deserialize, Serialize};

pub mod typed;

/// One Secret, or part of one, and the generators of its keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SecretEntry {
    /// The Secret's name.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1, max = 253)))]
    pub name: String,
    /// The type a missing Secret is created with; an existing Secret keeps its own.
    #[serde(rename = "type", default = "opaque")]
    pub secret_type: String,
    /// What the Secret's keys hold.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1)))]
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
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Generator {
    /// The generator.
    #[serde(rename = "type")]
    pub generator_type: GeneratorType,
    /// The Secret key the value is stored under (railsSecrets: always secrets.yml).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(length(min = 1, max = 253)))]
    pub key: Option<String>,
    /// The characters of a random value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<Charset>,
    /// The number of characters (random) or bytes (bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1)))]
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
    #[cfg_attr(feature = "schemars", schemars(range(min = 2048, max = 8192)))]
    pub bits: Option<u32>,
    /// x509: the certificate's subject and issuer common name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_name: Option<String>,
    /// x509: the days the certificate is valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1)))]
    pub days: Option<u32>,
    /// x509: the key of the certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(length(min = 1, max = 253)))]
    pub cert_key: Option<String>,
    /// x509: the key of the private key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(length(min = 1, max = 253)))]
    pub key_key: Option<String>,
    /// railsSecrets: the environment the document's fields are under, e.g. production.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(length(min = 1)))]
    pub env: Option<String>,
    /// railsSecrets: the fields of the document; a missing or null one is generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<RailsField>>,
}

/// The generator types: random, bytes, static, rsa, x509, sshHostKeys, railsSecrets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Charset {
    Alphanumeric,
    Hex,
    LowerAlphanumeric,
}

/// How a value is encoded: none, base64, base64-nowrap (random), raw, base64 (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum Wrap {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "jsonArray")]
    JsonArray,
}

/// One field of a secrets.yml document, directly under its environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RailsField {
    /// The field's name.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1)))]
    pub path: String,
    /// scalar (charset, length), pem (bits) or list (charset, length: a one-element list).
    pub shape: Shape,
    /// scalar and list: the characters of the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<Charset>,
    /// scalar and list: the number of characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1)))]
    pub length: Option<u32>,
    /// pem: the RSA key size in bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 2048, max = 8192)))]
    pub bits: Option<u32>,
}

/// The shape of a secrets.yml field: scalar, pem or list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct CertificateEntry {
    /// The CA.
    pub authority: Authority,
    /// The domain: a DNS name, an IP address, an e-mail address or a URI. The certificate
    /// names it and its wildcard.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1)))]
    pub domain: String,
    /// The days the CA is valid (recorded; the issued CA is valid 43800 hours, as the
    /// chart's Job issued it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1)))]
    pub ca_days: Option<u32>,
    /// The days the certificate is valid (recorded; the issued certificate is valid 8760
    /// hours, as the chart's Job issued it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1)))]
    pub cert_days: Option<u32>,
    /// The kubernetes.io/tls Secret: tls.crt and tls.key.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1, max = 253)))]
    pub tls_secret: String,
    /// The Opaque Secret holding the CA certificate under caKey.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1, max = 253)))]
    pub ca_secret: String,
    /// The key of the CA certificate.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1, max = 253)))]
    pub ca_key: String,
    /// The Opaque Secret holding the CA certificate, then tls.crt, under chainKey.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1, max = 253)))]
    pub chain_secret: String,
    /// The key of the chain.
    #[cfg_attr(feature = "schemars", schemars(length(min = 1, max = 253)))]
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
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
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
    // A string, not an enum, so the planner reads any algorithm and refuses the others
    // itself with cfssl's reasons (`ed25519`, `dsa`, ...) when it would issue a set; the CRD
    // still allows rsa and ecdsa only.
    #[cfg_attr(feature = "schemars", schemars(extend("enum" = ["rsa", "ecdsa"])))]
    pub algorithm: String,
    /// rsa: 2048 to 8192 bits (default 2048); ecdsa: 256, 384 or 521 (default 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 256, max = 8192)))]
    pub key_size: Option<u32>,
}

impl GeneratorType {
    /// The type as the spec writes it, e.g. `sshHostKeys`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Random => "random",
            Self::Bytes => "bytes",
            Self::Static => "static",
            Self::Rsa => "rsa",
            Self::X509 => "x509",
            Self::SshHostKeys => "sshHostKeys",
            Self::RailsSecrets => "railsSecrets",
        }
    }
}

impl std::fmt::Display for GeneratorType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Charset {
    /// The characters of the charset.
    pub fn characters(self) -> &'static [u8] {
        match self {
            Self::Alphanumeric => b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            Self::Hex => b"abcdef0123456789",
            Self::LowerAlphanumeric => b"abcdefghijklmnopqrstuvwxyz0123456789",
        }
    }
}

impl Encoding {
    /// The encoding as the spec writes it, e.g. `base64-nowrap`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Base64 => "base64",
            Self::Base64NoWrap => "base64-nowrap",
            Self::Raw => "raw",
        }
    }
}
