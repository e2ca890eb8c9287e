//! The serde types of spec.secrets and spec.certificates entries, and their validation.
//!
//! Field names follow `gitlabsecrets-schema.md`. Unknown fields are ignored (the CRD prunes
//! them); a missing required field, an unknown generator type or an out-of-range number is an
//! [`EntryError`], which fails the plan of the Secret rather than being reported, because no
//! state of the Secret could satisfy it.

use serde::Deserialize;

use crate::keys::{MAX_RSA_BITS, MIN_RSA_BITS};

/// The largest `length` a generator may ask for: a value longer than a Secret holds could
/// never be stored (checked before anything is allocated).
pub(crate) const MAX_LENGTH: u32 = 1024 * 1024;

/// The longest `random` value `encoding: base64` takes. The Job's `base64` wraps its output
/// after 76 characters (57 input characters); from 58 its create path failed and its patch
/// path truncated, so no Job value exists to match (`gitlabsecrets-reconciler.txt`).
pub(crate) const MAX_BASE64_LENGTH: u32 = 57;

/// One entry of spec.secrets.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct SecretEntry {
    pub name: String,
    #[serde(rename = "type", default = "opaque")]
    pub secret_type: String,
    pub generators: Vec<Generator>,
}

fn opaque() -> String {
    "Opaque".to_owned()
}

/// A generator, discriminated by `type`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Generator {
    Random(Random),
    Bytes(Bytes),
    Static(Static),
    Rsa(Rsa),
    X509(X509),
    SshHostKeys(SshHostKeys),
    RailsSecrets(RailsSecrets),
}

/// `random`: `length` characters of `charset`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Random {
    pub key: String,
    pub charset: Charset,
    pub length: u32,
    #[serde(default)]
    pub encoding: RandomEncoding,
    #[serde(default)]
    pub wrap: Wrap,
}

/// The characters a random value is drawn from.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Charset {
    /// a-z, A-Z, 0-9.
    Alphanumeric,
    /// a-f, 0-9.
    Hex,
    /// a-z, 0-9.
    LowerAlphanumeric,
}

/// How a random value is encoded.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
pub enum RandomEncoding {
    #[default]
    #[serde(rename = "none")]
    None,
    #[serde(rename = "base64")]
    Base64,
    #[serde(rename = "base64-nowrap")]
    Base64NoWrap,
}

/// How an (encoded) random value is wrapped.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
pub enum Wrap {
    #[default]
    #[serde(rename = "none")]
    None,
    #[serde(rename = "jsonArray")]
    JsonArray,
}

/// `bytes`: `length` random bytes.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Bytes {
    pub key: String,
    pub length: u32,
    #[serde(default)]
    pub encoding: BytesEncoding,
}

/// How random bytes are stored.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum BytesEncoding {
    #[default]
    Raw,
    Base64,
}

/// `static`: the value as given.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Static {
    pub key: String,
    #[serde(default)]
    pub value: String,
}

/// `rsa`: a PKCS#8 PEM RSA private key.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Rsa {
    pub key: String,
    pub bits: u32,
}

/// `x509`: a self-signed certificate and its key.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct X509 {
    pub common_name: String,
    pub bits: u32,
    pub days: u32,
    pub cert_key: String,
    pub key_key: String,
}

/// `sshHostKeys`: the files of `ssh-keygen -A`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct SshHostKeys {}

/// `railsSecrets`: a YAML document `<env>: {<path>: value, ...}` under `key`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct RailsSecrets {
    #[serde(default = "secrets_yml")]
    pub key: String,
    pub env: String,
    pub fields: Vec<RailsField>,
}

fn secrets_yml() -> String {
    "secrets.yml".to_owned()
}

/// One field of a `railsSecrets` document: a key directly under `<env>`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct RailsField {
    pub path: String,
    pub shape: Shape,
    pub charset: Option<Charset>,
    pub length: Option<u32>,
    pub bits: Option<u32>,
}

/// The shape of a `railsSecrets` field.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Shape {
    /// A random string (charset, length).
    Scalar,
    /// A PKCS#8 PEM RSA key (bits), written as a `|` block.
    Pem,
    /// A one-element list of a random string (charset, length).
    List,
}

/// One entry of spec.certificates.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CertificateEntry {
    pub authority: Authority,
    pub domain: String,
    /// Declared by the schema but not applied: see `certificates` (the Job's script never
    /// read the expiry either).
    #[serde(default)]
    pub ca_days: Option<u32>,
    /// Declared by the schema but not applied: see `certificates`.
    #[serde(default)]
    pub cert_days: Option<u32>,
    pub tls_secret: String,
    pub ca_secret: String,
    pub ca_key: String,
    pub chain_secret: String,
    pub chain_key: String,
}

/// The CA of a certificate set.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Authority {
    #[serde(default)]
    pub common_name: String,
    /// The namespace.
    #[serde(default)]
    pub organization: String,
    /// The release.
    #[serde(default)]
    pub organizational_unit: String,
    pub algorithm: String,
    pub key_size: Option<u32>,
}

/// Why entries are invalid.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    /// The JSON does not decode as entries.
    #[error("the entries do not decode: {0}")]
    Decode(#[from] serde_json::Error),
    /// An entry names another Secret than the one planned.
    #[error("an entry names Secret {0:?}")]
    OtherSecret(String),
    /// No entry names the Secret.
    #[error("no entry declares the Secret")]
    NoEntries,
    /// Two entries declare different types.
    #[error("the entries declare types {0:?} and {1:?}")]
    ConflictingTypes(String, String),
    /// An entry has no generator.
    #[error("an entry has no generator")]
    NoGenerators,
    /// A railsSecrets generator shares its entry.
    #[error("a railsSecrets generator must be the only generator of its entry")]
    RailsNotAlone,
    /// Two different generators write the same key.
    #[error("key {0:?} is declared twice, differently")]
    DuplicateKey(String),
    /// A key is not a valid Secret key.
    #[error("key {0:?} is not a valid Secret key (alphanumerics, '-', '_' or '.')")]
    InvalidKey(String),
    /// A number or string is out of range.
    #[error("{what}: {why}")]
    Invalid { what: String, why: String },
}

impl EntryError {
    pub(crate) fn invalid(what: impl Into<String>, why: impl Into<String>) -> Self {
        Self::Invalid {
            what: what.into(),
            why: why.into(),
        }
    }
}

/// Checks a Secret key as the API server does: 1 to 253 of `[-._a-zA-Z0-9]`, not `.` or `..`.
pub(crate) fn check_key(key: &str) -> Result<(), EntryError> {
    let valid = !key.is_empty()
        && key.len() <= 253
        && key != "."
        && key != ".."
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if valid {
        Ok(())
    } else {
        Err(EntryError::InvalidKey(key.to_owned()))
    }
}

/// Checks a length: 1 to [`MAX_LENGTH`].
pub(crate) fn check_length(what: &str, length: u32) -> Result<(), EntryError> {
    if length == 0 || length > MAX_LENGTH {
        return Err(EntryError::invalid(
            what,
            format!("length {length} is outside 1 to {MAX_LENGTH}"),
        ));
    }
    Ok(())
}

/// Checks an RSA size: [`MIN_RSA_BITS`] to [`MAX_RSA_BITS`].
pub(crate) fn check_bits(what: &str, bits: u32) -> Result<(), EntryError> {
    if !(MIN_RSA_BITS..=MAX_RSA_BITS).contains(&bits) {
        return Err(EntryError::invalid(
            what,
            format!("bits {bits} is outside {MIN_RSA_BITS} to {MAX_RSA_BITS}"),
        ));
    }
    Ok(())
}

impl Generator {
    /// Checks the generator's own fields (keys, lengths, sizes).
    pub(crate) fn validate(&self) -> Result<(), EntryError> {
        match self {
            Self::Random(r) => {
                check_key(&r.key)?;
                check_length(&r.key, r.length)?;
                if r.encoding == RandomEncoding::Base64 && r.length > MAX_BASE64_LENGTH {
                    return Err(EntryError::invalid(
                        &r.key,
                        format!(
                            "encoding base64 takes at most {MAX_BASE64_LENGTH} characters, as the \
                             Job did; use base64-nowrap"
                        ),
                    ));
                }
                Ok(())
            }
            Self::Bytes(b) => {
                check_key(&b.key)?;
                check_length(&b.key, b.length)
            }
            Self::Static(s) => check_key(&s.key),
            Self::Rsa(r) => {
                check_key(&r.key)?;
                check_bits(&r.key, r.bits)
            }
            Self::X509(x) => {
                check_key(&x.cert_key)?;
                check_key(&x.key_key)?;
                if x.cert_key == x.key_key {
                    return Err(EntryError::DuplicateKey(x.cert_key.clone()));
                }
                check_bits(&x.cert_key, x.bits)?;
                if x.days == 0 {
                    return Err(EntryError::invalid(&x.cert_key, "days must be at least 1"));
                }
                Ok(())
            }
            Self::SshHostKeys(_) => Ok(()),
            Self::RailsSecrets(r) => r.validate(),
        }
    }
}

impl RailsSecrets {
    fn validate(&self) -> Result<(), EntryError> {
        check_key(&self.key)?;
        if self.env.is_empty() {
            return Err(EntryError::invalid(&self.key, "env is empty"));
        }
        for (i, field) in self.fields.iter().enumerate() {
            let what = format!("{} field {:?}", self.key, field.path);
            if field.path.is_empty() {
                return Err(EntryError::invalid(what, "path is empty"));
            }
            if self.fields[..i].iter().any(|f| f.path == field.path) {
                return Err(EntryError::invalid(what, "declared twice"));
            }
            match field.shape {
                Shape::Scalar | Shape::List => {
                    if field.charset.is_none() {
                        return Err(EntryError::invalid(what, "charset is missing"));
                    }
                    check_length(&what, field.length.unwrap_or(0))?;
                }
                Shape::Pem => check_bits(&what, field.bits.unwrap_or(0))?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_defaults_decode() {
        let json = include_str!("../tests/data/chart-defaults-secrets.json");
        let entries: Vec<SecretEntry> = serde_json::from_str(json).expect("decodes");
        assert_eq!(entries.len(), 13);
        for entry in &entries {
            for generator in &entry.generators {
                generator.validate().expect("valid");
            }
        }
    }

    #[test]
    fn invalid_generators_are_refused() {
        let cases = [
            ("empty key", r#"{"type":"static","key":""}"#),
            ("slash in key", r#"{"type":"static","key":"a/b"}"#),
            ("dot key", r#"{"type":"static","key":".."}"#),
            (
                "zero length",
                r#"{"type":"random","key":"a","charset":"hex","length":0}"#,
            ),
            (
                "huge length",
                r#"{"type":"bytes","key":"a","length":4294967295}"#,
            ),
            (
                "base64 of 58",
                r#"{"type":"random","key":"a","charset":"hex","length":58,"encoding":"base64"}"#,
            ),
            ("weak rsa", r#"{"type":"rsa","key":"a","bits":1024}"#),
            (
                "x509 of zero days",
                r#"{"type":"x509","commonName":"a","bits":2048,"days":0,"certKey":"c","keyKey":"k"}"#,
            ),
            (
                "x509 with one key twice",
                r#"{"type":"x509","commonName":"a","bits":2048,"days":1,"certKey":"c","keyKey":"c"}"#,
            ),
            (
                "rails field without charset",
                r#"{"type":"railsSecrets","env":"production","fields":[{"path":"a","shape":"scalar","length":3}]}"#,
            ),
            (
                "rails pem without bits",
                r#"{"type":"railsSecrets","env":"production","fields":[{"path":"a","shape":"pem"}]}"#,
            ),
            (
                "rails field twice",
                r#"{"type":"railsSecrets","env":"p","fields":[{"path":"a","shape":"pem","bits":2048},{"path":"a","shape":"pem","bits":2048}]}"#,
            ),
        ];
        for (name, json) in cases {
            let generator: Generator = serde_json::from_str(json).expect(name);
            assert!(generator.validate().is_err(), "{name}");
        }
    }

    #[test]
    fn base64_of_57_characters_is_accepted() {
        let json = r#"{"type":"random","key":"a","charset":"hex","length":57,"encoding":"base64"}"#;
        let generator: Generator = serde_json::from_str(json).expect("decodes");
        generator.validate().expect("valid");
    }

    #[test]
    fn unknown_generator_types_do_not_decode() {
        let json = r#"{"type":"dsa","key":"a"}"#;
        assert!(serde_json::from_str::<Generator>(json).is_err());
    }
}
