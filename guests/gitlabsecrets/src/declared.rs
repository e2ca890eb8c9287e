//! spec.secrets and spec.certificates as a pass reads them: each entry decoded on its own,
//! so one entry this version cannot decode (a `length` past u32, a generator type it does
//! not know) fails only the Secrets it names, with the field, while the others converge.
//!
//! An entry is attributed to its Secrets by the names read off its JSON (`name`, or
//! `caSecret`, `tlsSecret` and `chainSecret`), which the schema requires; an entry whose
//! names cannot be read fails the pass, naming the field.

use serde::de::DeserializeOwned;
use serde_json::Value;
use wasm_operator_sdk::Json;

use crate::types::{CertificateEntry, GitLabSecrets, SecretEntry};

/// Why an entry does not decode: the field (`spec.secrets[3].generators[0].length`) and
/// serde's reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct EntryError {
    pub field: String,
    pub message: String,
}

/// One entry of spec.secrets: the Secret it names, and the entry or why it does not decode.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredSecret {
    pub name: String,
    pub entry: Result<SecretEntry, EntryError>,
}

/// One entry of spec.certificates: its CA, TLS and chain Secrets, and the entry or why it
/// does not decode.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredCertificate {
    pub names: [String; 3],
    pub entry: Result<CertificateEntry, EntryError>,
}

/// The entries of a GitLabSecrets's spec.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeclaredSpec {
    pub secrets: Vec<DeclaredSecret>,
    pub certificates: Vec<DeclaredCertificate>,
}

/// The GitLabSecrets a read returned, with its spec's entries taken out as a pass reads
/// them; the message of why it does not decode otherwise.
///
/// A GitLabSecrets whose every entry decodes, and names its Secrets, is decoded in one go
/// from the read as it came (inside wasm, its text: no [`Value`] in between); any other is
/// read again through [`take`], entry by entry, so each failure names its field. Both give
/// the same result for an object the first accepts.
pub fn read(json: Json) -> Result<(GitLabSecrets, DeclaredSpec), String> {
    if let Ok(mut primary) = json.decode::<GitLabSecrets>()
        && let Some(spec) = take_decoded(&mut primary)
    {
        return Ok((primary, spec));
    }
    let mut value = json.into_value().map_err(|e| e.to_string())?;
    let spec = take(&mut value).map_err(|e| e.to_string())?;
    let primary = serde_json::from_value(value).map_err(|e| e.to_string())?;
    Ok((primary, spec))
}

/// Moves the entries out of a decoded GitLabSecrets, unless one names an empty Secret
/// (which [`take`] reports with its field).
fn take_decoded(primary: &mut GitLabSecrets) -> Option<DeclaredSpec> {
    let spec = &mut primary.spec;
    let named = spec.secrets.iter().all(|s| !s.name.is_empty())
        && spec
            .certificates
            .iter()
            .all(|c| c.secret_names().iter().all(|n| !n.is_empty()));
    if !named {
        return None;
    }
    Some(DeclaredSpec {
        secrets: std::mem::take(&mut spec.secrets)
            .into_iter()
            .map(|entry| DeclaredSecret {
                name: entry.name.clone(),
                entry: Ok(entry),
            })
            .collect(),
        certificates: std::mem::take(&mut spec.certificates)
            .into_iter()
            .map(|entry| DeclaredCertificate {
                names: entry.secret_names().map(str::to_owned),
                entry: Ok(entry),
            })
            .collect(),
    })
}

/// Takes spec.secrets and spec.certificates out of `object` and decodes them entry by
/// entry; the rest of `object` is left to decode as the GitLabSecrets.
///
/// Fails with the field when a list is not a list or an entry's names cannot be read.
pub fn take(object: &mut Value) -> Result<DeclaredSpec, EntryError> {
    let mut take_list = |field: &str| -> Result<Vec<Value>, EntryError> {
        match object.pointer_mut("/spec").and_then(|s| s.as_object_mut()) {
            None => Ok(Vec::new()),
            Some(spec) => match spec.remove(field) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(entries)) => Ok(entries),
                Some(_) => Err(EntryError {
                    field: format!("spec.{field}"),
                    message: "is not a list".into(),
                }),
            },
        }
    };
    let secrets = take_list("secrets")?;
    let certificates = take_list("certificates")?;
    let secrets = secrets
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            let field = format!("spec.secrets[{i}]");
            Ok(DeclaredSecret {
                name: name(raw, &field, "name")?,
                entry: decode(raw, &field),
            })
        })
        .collect::<Result<_, EntryError>>()?;
    let certificates = certificates
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            let field = format!("spec.certificates[{i}]");
            Ok(DeclaredCertificate {
                names: [
                    name(raw, &field, "caSecret")?,
                    name(raw, &field, "tlsSecret")?,
                    name(raw, &field, "chainSecret")?,
                ],
                entry: decode(raw, &field),
            })
        })
        .collect::<Result<_, EntryError>>()?;
    Ok(DeclaredSpec {
        secrets,
        certificates,
    })
}

/// The Secret name under `key` of the entry at `field`.
fn name(raw: &Value, field: &str, key: &str) -> Result<String, EntryError> {
    match raw.get(key).and_then(Value::as_str) {
        Some(name) if !name.is_empty() => Ok(name.to_owned()),
        _ => Err(EntryError {
            field: format!("{field}.{key}"),
            message: "a Secret name is required".into(),
        }),
    }
}

/// Decodes the entry at `field`, naming the innermost field that failed.
fn decode<T: DeserializeOwned>(raw: &Value, field: &str) -> Result<T, EntryError> {
    serde_path_to_error::deserialize(raw).map_err(|e| {
        let path = e.path().to_string();
        EntryError {
            field: if path == "." {
                field.to_owned()
            } else {
                format!("{field}.{path}")
            },
            message: e.into_inner().to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_entry_that_does_not_decode_is_named_by_its_field_and_the_others_decode() {
        let mut object = json!({"spec": {
            "secrets": [
                {"name": "good", "generators": [{"type": "random", "key": "k", "length": 16}]},
                {"name": "bad", "generators": [{"type": "random", "key": "k", "length": 1_000_000_000_000u64}]},
            ],
            "certificates": [{"caSecret": "ca", "tlsSecret": "tls", "chainSecret": "chain",
                "caKey": "ca.crt", "chainKey": "chain.crt", "domain": "example.com",
                "authority": {"keySize": "big"}}],
        }});
        let spec = take(&mut object).expect("the names are readable");
        assert_eq!(object, json!({"spec": {}}), "the lists are taken out");
        assert!(spec.secrets[0].entry.is_ok());
        assert_eq!(spec.secrets[1].name, "bad");
        let error = spec.secrets[1].entry.clone().expect_err("length past u32");
        assert_eq!(error.field, "spec.secrets[1].generators[0].length");
        assert!(error.message.contains("1000000000000"), "{error}");
        assert_eq!(spec.certificates[0].names, ["ca", "tls", "chain"]);
        let error = spec.certificates[0].entry.clone().expect_err("keySize");
        assert_eq!(error.field, "spec.certificates[0].authority.keySize");
    }

    #[test]
    fn reading_a_primary_in_one_go_or_entry_by_entry_gives_the_same() {
        let good = json!({"apiVersion": "apps.gitlab.com/v2alpha1", "kind": "GitLabSecrets",
            "metadata": {"name": "g", "namespace": "ns", "resourceVersion": "7"},
            "spec": {
                "secrets": [{"name": "s", "generators": [{"type": "random", "key": "k", "length": 16}]}],
                "certificates": [{"caSecret": "ca", "tlsSecret": "tls", "chainSecret": "chain",
                    "caKey": "ca.crt", "chainKey": "chain.crt", "domain": "example.com",
                    "authority": {"commonName": "CA"}}],
            },
            "status": {"conditions": []}});
        let bad_entry = {
            let mut bad = good.clone();
            bad["spec"]["secrets"][0]["generators"][0]["length"] = json!(1_000_000_000_000u64);
            bad
        };
        let empty_name = {
            let mut bad = good.clone();
            bad["spec"]["certificates"][0]["tlsSecret"] = json!("");
            bad
        };
        for object in [good, bad_entry] {
            let mut value = object.clone();
            let spec = take(&mut value).expect("names");
            let primary: GitLabSecrets = serde_json::from_value(value).expect("decodes");
            for json in [Json::Text(object.to_string()), Json::Value(object.clone())] {
                assert_eq!(read(json), Ok((primary.clone(), spec.clone())), "{object}");
            }
        }
        for json in [Json::Text(empty_name.to_string()), Json::Value(empty_name)] {
            let error = read(json).expect_err("an empty Secret name");
            assert!(
                error.starts_with("spec.certificates[0].tlsSecret:"),
                "{error}"
            );
        }
        assert!(read(Json::Text("{".into())).is_err());
    }

    #[test]
    fn unreadable_names_and_lists_fail_with_their_field() {
        let cases = [
            (json!({"spec": {"secrets": {}}}), Some("spec.secrets")),
            (
                json!({"spec": {"secrets": [{"generators": []}]}}),
                Some("spec.secrets[0].name"),
            ),
            (
                json!({"spec": {"certificates": [{"caSecret": "ca", "tlsSecret": 1}]}}),
                Some("spec.certificates[0].tlsSecret"),
            ),
            (json!({"spec": {"secrets": [{"name": "s"}]}}), None),
        ];
        for (mut object, field) in cases {
            let result = take(&mut object);
            assert_eq!(
                result.as_ref().err().map(|e| e.field.as_str()),
                field,
                "{result:?}"
            );
        }
    }
}
