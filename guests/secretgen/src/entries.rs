//! The spec.secrets and spec.certificates entries the planner is handed, and their
//! validation.
//!
//! The types are `wasm_operator_planner::entries`, declared once for the reconciler (whose
//! CRD is generated from them) and the planner: entries decode as the flat objects the CRD
//! declares, then each generator is read as its `typed` view, which checks that it has the
//! fields of its type. Field names follow `gitlabsecrets-schema.md`. Unknown fields are
//! ignored (the CRD prunes them) and `null` reads as absent; a missing required field, an
//! unknown generator type or encoding, or an out-of-range number is an [`EntryError`], which
//! fails the plan of the Secret rather than being reported, because no state of the Secret
//! could satisfy it.

pub(crate) use wasm_operator_planner::entries::typed::{
    Bytes, BytesEncoding, Generator, GeneratorError, RailsSecrets, Random, RandomEncoding, Rsa,
    SecretEntry, Static, X509,
};
pub(crate) use wasm_operator_planner::entries::{
    Authority, CertificateEntry, Charset, RailsField, Shape, Wrap,
};

use crate::keys::{MAX_RSA_BITS, MIN_RSA_BITS};

/// The largest `length` a generator may ask for: a value longer than a Secret holds could
/// never be stored (checked before anything is allocated).
pub(crate) const MAX_LENGTH: u32 = 1024 * 1024;

/// The longest `random` value `encoding: base64` takes. The Job's `base64` wraps its output
/// after 76 characters (57 input characters); from 58 its create path failed and its patch
/// path truncated, so no Job value exists to match (`gitlabsecrets-reconciler.txt`).
pub(crate) const MAX_BASE64_LENGTH: u32 = 57;

/// Decodes the JSON array of spec.secrets entries of one Secret, each generator typed.
pub(crate) fn decode_secret_entries(json: &str) -> Result<Vec<SecretEntry>, EntryError> {
    let entries: Vec<wasm_operator_planner::entries::SecretEntry> = serde_json::from_str(json)?;
    Ok(entries
        .iter()
        .map(SecretEntry::try_from)
        .collect::<Result<_, _>>()?)
}

/// Decodes one spec.certificates entry.
pub(crate) fn decode_certificate_entry(json: &str) -> Result<CertificateEntry, EntryError> {
    Ok(serde_json::from_str(json)?)
}

/// Why entries are invalid.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    /// The JSON does not decode as entries.
    #[error("the entries do not decode: {0}")]
    Decode(#[from] serde_json::Error),
    /// A generator lacks a field of its type, or has an encoding of another type.
    #[error("the entries do not decode: {0}")]
    Generator(#[from] GeneratorError),
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

/// Checks a generator's own fields (keys, lengths, sizes).
pub(crate) fn validate(generator: &Generator) -> Result<(), EntryError> {
    match generator {
        Generator::Random(r) => {
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
        Generator::Bytes(b) => {
            check_key(&b.key)?;
            check_length(&b.key, b.length)
        }
        Generator::Static(s) => check_key(&s.key),
        Generator::Rsa(r) => {
            check_key(&r.key)?;
            check_bits(&r.key, r.bits)
        }
        Generator::X509(x) => {
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
        Generator::SshHostKeys(_) => Ok(()),
        Generator::RailsSecrets(r) => validate_rails(r),
    }
}

fn validate_rails(rails: &RailsSecrets) -> Result<(), EntryError> {
    check_key(&rails.key)?;
    if rails.env.is_empty() {
        return Err(EntryError::invalid(&rails.key, "env is empty"));
    }
    for (i, field) in rails.fields.iter().enumerate() {
        let what = format!("{} field {:?}", rails.key, field.path);
        if field.path.is_empty() {
            return Err(EntryError::invalid(what, "path is empty"));
        }
        if rails.fields[..i].iter().any(|f| f.path == field.path) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One generator, decoded as the planner decodes entries.
    fn decode_generator(json: &str) -> Result<Generator, EntryError> {
        let wire: wasm_operator_planner::entries::Generator = serde_json::from_str(json)?;
        Ok(Generator::try_from(&wire)?)
    }

    #[test]
    fn the_chart_defaults_decode() {
        let json = include_str!("../tests/data/chart-defaults-secrets.json");
        let entries = decode_secret_entries(json).expect("decodes");
        assert_eq!(entries.len(), 13);
        for entry in &entries {
            for generator in &entry.generators {
                validate(generator).expect("valid");
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
            let generator = decode_generator(json).expect(name);
            assert!(validate(&generator).is_err(), "{name}");
        }
    }

    #[test]
    fn base64_of_57_characters_is_accepted() {
        let json = r#"{"type":"random","key":"a","charset":"hex","length":57,"encoding":"base64"}"#;
        let generator = decode_generator(json).expect("decodes");
        validate(&generator).expect("valid");
    }

    #[test]
    fn unknown_generator_types_do_not_decode() {
        let json = r#"{"type":"dsa","key":"a"}"#;
        assert!(decode_generator(json).is_err());
    }
}
