//! The per-type view of spec.secrets entries: each [`Generator`] with the fields of its
//! type, as the planner plans from it.
//!
//! [`TryFrom`] a wire [`entries::Generator`](super::Generator) checks what the flat object
//! cannot declare: that the generator has every field its type requires, and an encoding its
//! type takes (random: none, base64, base64-nowrap; bytes: raw, base64). Fields of other
//! types are ignored. Defaults are those of `gitlabsecrets-schema.md`: random encoding
//! `none` and wrap `none`, bytes encoding `raw`, static value empty, railsSecrets key
//! `secrets.yml`.
//!
//! Ranges (key syntax, lengths, RSA sizes) are the planner's to check: no state of a Secret
//! could satisfy an out-of-range value, so the planner fails that Secret's plan.

use super::{Charset, Encoding, GeneratorType, RailsField, Wrap};

/// Why a generator lacks what its type needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GeneratorError {
    /// A field its type requires is absent.
    #[error("missing field `{field}` of generator type {generator}")]
    Missing {
        generator: GeneratorType,
        field: &'static str,
    },
    /// The encoding is one of another type.
    #[error("unknown encoding `{found}` of generator type {generator}, expected one of {expected}")]
    Encoding {
        generator: GeneratorType,
        found: &'static str,
        expected: &'static str,
    },
}

/// One entry of spec.secrets, its generators typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretEntry {
    pub name: String,
    pub secret_type: String,
    pub generators: Vec<Generator>,
}

/// A generator with the fields of its type.
#[derive(Clone, Debug, PartialEq, Eq)]
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Random {
    pub key: String,
    pub charset: Charset,
    pub length: u32,
    pub encoding: RandomEncoding,
    pub wrap: Wrap,
}

/// How a random value is encoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RandomEncoding {
    #[default]
    None,
    Base64,
    Base64NoWrap,
}

/// `bytes`: `length` random bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bytes {
    pub key: String,
    pub length: u32,
    pub encoding: BytesEncoding,
}

/// How random bytes are stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BytesEncoding {
    #[default]
    Raw,
    Base64,
}

/// `static`: the value as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Static {
    pub key: String,
    pub value: String,
}

/// `rsa`: a PKCS#8 PEM RSA private key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rsa {
    pub key: String,
    pub bits: u32,
}

/// `x509`: a self-signed certificate and its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct X509 {
    pub common_name: String,
    pub bits: u32,
    pub days: u32,
    pub cert_key: String,
    pub key_key: String,
}

/// `sshHostKeys`: the files of `ssh-keygen -A`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SshHostKeys {}

/// `railsSecrets`: a YAML document `<env>: {<path>: value, ...}` under `key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RailsSecrets {
    pub key: String,
    pub env: String,
    pub fields: Vec<RailsField>,
}

/// The key of a railsSecrets generator that names none.
pub const SECRETS_YML: &str = "secrets.yml";

impl TryFrom<&super::SecretEntry> for SecretEntry {
    type Error = GeneratorError;

    fn try_from(entry: &super::SecretEntry) -> Result<Self, GeneratorError> {
        Ok(Self {
            name: entry.name.clone(),
            secret_type: entry.secret_type.clone(),
            generators: entry
                .generators
                .iter()
                .map(Generator::try_from)
                .collect::<Result<_, _>>()?,
        })
    }
}

impl TryFrom<&super::Generator> for Generator {
    type Error = GeneratorError;

    fn try_from(g: &super::Generator) -> Result<Self, GeneratorError> {
        let generator = g.generator_type;
        let required = |value: Option<&String>, field| {
            value
                .cloned()
                .ok_or(GeneratorError::Missing { generator, field })
        };
        let number =
            |value: Option<u32>, field| value.ok_or(GeneratorError::Missing { generator, field });
        Ok(match generator {
            GeneratorType::Random => Self::Random(Random {
                key: required(g.key.as_ref(), "key")?,
                charset: g.charset.ok_or(GeneratorError::Missing {
                    generator,
                    field: "charset",
                })?,
                length: number(g.length, "length")?,
                encoding: match g.encoding {
                    None | Some(Encoding::None) => RandomEncoding::None,
                    Some(Encoding::Base64) => RandomEncoding::Base64,
                    Some(Encoding::Base64NoWrap) => RandomEncoding::Base64NoWrap,
                    Some(other @ Encoding::Raw) => {
                        return Err(GeneratorError::Encoding {
                            generator,
                            found: other.as_str(),
                            expected: "`none`, `base64`, `base64-nowrap`",
                        });
                    }
                },
                wrap: g.wrap.unwrap_or(Wrap::None),
            }),
            GeneratorType::Bytes => Self::Bytes(Bytes {
                key: required(g.key.as_ref(), "key")?,
                length: number(g.length, "length")?,
                encoding: match g.encoding {
                    None | Some(Encoding::Raw) => BytesEncoding::Raw,
                    Some(Encoding::Base64) => BytesEncoding::Base64,
                    Some(other @ (Encoding::None | Encoding::Base64NoWrap)) => {
                        return Err(GeneratorError::Encoding {
                            generator,
                            found: other.as_str(),
                            expected: "`raw`, `base64`",
                        });
                    }
                },
            }),
            GeneratorType::Static => Self::Static(Static {
                key: required(g.key.as_ref(), "key")?,
                value: g.value.clone().unwrap_or_default(),
            }),
            GeneratorType::Rsa => Self::Rsa(Rsa {
                key: required(g.key.as_ref(), "key")?,
                bits: number(g.bits, "bits")?,
            }),
            GeneratorType::X509 => Self::X509(X509 {
                common_name: required(g.common_name.as_ref(), "commonName")?,
                bits: number(g.bits, "bits")?,
                days: number(g.days, "days")?,
                cert_key: required(g.cert_key.as_ref(), "certKey")?,
                key_key: required(g.key_key.as_ref(), "keyKey")?,
            }),
            GeneratorType::SshHostKeys => Self::SshHostKeys(SshHostKeys {}),
            GeneratorType::RailsSecrets => Self::RailsSecrets(RailsSecrets {
                key: g.key.clone().unwrap_or_else(|| SECRETS_YML.to_owned()),
                env: required(g.env.as_ref(), "env")?,
                fields: required_fields(g.fields.as_ref())?,
            }),
        })
    }
}

fn required_fields(fields: Option<&Vec<RailsField>>) -> Result<Vec<RailsField>, GeneratorError> {
    fields.cloned().ok_or(GeneratorError::Missing {
        generator: GeneratorType::RailsSecrets,
        field: "fields",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(json: &str) -> Result<Generator, GeneratorError> {
        let wire: super::super::Generator = serde_json::from_str(json).expect("decodes");
        Generator::try_from(&wire)
    }

    #[test]
    fn each_type_takes_its_fields_with_the_schemas_defaults() {
        assert_eq!(
            typed(r#"{"type":"random","key":"k","charset":"hex","length":4,"bits":9}"#),
            Ok(Generator::Random(Random {
                key: "k".into(),
                charset: Charset::Hex,
                length: 4,
                encoding: RandomEncoding::None,
                wrap: Wrap::None,
            }))
        );
        assert_eq!(
            typed(r#"{"type":"bytes","key":"k","length":4}"#),
            Ok(Generator::Bytes(Bytes {
                key: "k".into(),
                length: 4,
                encoding: BytesEncoding::Raw,
            }))
        );
        assert_eq!(
            typed(r#"{"type":"static","key":"k","value":null}"#),
            Ok(Generator::Static(Static {
                key: "k".into(),
                value: String::new(),
            }))
        );
        assert_eq!(
            typed(r#"{"type":"railsSecrets","env":"production","fields":[]}"#),
            Ok(Generator::RailsSecrets(RailsSecrets {
                key: SECRETS_YML.into(),
                env: "production".into(),
                fields: vec![],
            }))
        );
    }

    #[test]
    fn a_missing_field_or_another_types_encoding_is_refused_naming_it() {
        let cases = [
            (
                r#"{"type":"random","key":"k","charset":"hex"}"#,
                "missing field `length` of generator type random",
            ),
            (
                r#"{"type":"x509","commonName":"c","bits":2048,"days":1,"certKey":"c"}"#,
                "missing field `keyKey` of generator type x509",
            ),
            (
                r#"{"type":"random","key":"k","charset":"hex","length":4,"encoding":"raw"}"#,
                "unknown encoding `raw` of generator type random, expected one of `none`, \
                 `base64`, `base64-nowrap`",
            ),
            (
                r#"{"type":"bytes","key":"k","length":4,"encoding":"base64-nowrap"}"#,
                "unknown encoding `base64-nowrap` of generator type bytes, expected one of \
                 `raw`, `base64`",
            ),
        ];
        for (json, message) in cases {
            let error = typed(json).expect_err(json);
            assert_eq!(error.to_string(), message, "{json}");
        }
    }

    #[test]
    fn a_wire_generator_serializes_back_as_it_was_decoded() {
        let json = r#"{"type":"random","key":"k","charset":"hex","length":4}"#;
        let wire: super::super::Generator = serde_json::from_str(json).expect("decodes");
        assert_eq!(serde_json::to_string(&wire).expect("encodes"), json);
    }
}
