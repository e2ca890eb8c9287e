//! An existing Secret, as far as the planner reads it: its type, whether it is immutable, and
//! its data decoded from base64. Only what the API server returns is read (`data`, never
//! `stringData`, which it does not store).

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

/// The most bytes the API server stores in one Secret's data (`core.MaxSecretSize`, summed
/// over the decoded values).
pub const MAX_SECRET_BYTES: usize = 1024 * 1024;

/// The Secret type Kubernetes defaults to.
pub(crate) const OPAQUE: &str = "Opaque";

/// The fields of a Secret's JSON the planner reads.
#[derive(Deserialize)]
struct SecretJson {
    #[serde(rename = "type")]
    secret_type: Option<String>,
    immutable: Option<bool>,
    #[serde(default)]
    data: Option<BTreeMap<String, String>>,
}

/// An existing Secret.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ExistingSecret {
    /// The type; `Opaque` when the JSON has none.
    pub(crate) secret_type: String,
    pub(crate) immutable: bool,
    /// The decoded data.
    pub(crate) data: BTreeMap<String, Vec<u8>>,
}

/// Why an existing Secret's JSON could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// The JSON is not a Secret.
    #[error("the existing Secret does not decode: {0}")]
    Decode(#[from] serde_json::Error),
    /// A data value is not base64.
    #[error("the existing Secret's key {key:?} is not base64: {source}")]
    Base64 {
        key: String,
        #[source]
        source: base64::DecodeError,
    },
}

impl ExistingSecret {
    /// Reads the JSON of a Secret as the API server returns it.
    pub(crate) fn from_json(json: &str) -> Result<Self, SecretError> {
        let secret: SecretJson = serde_json::from_str(json)?;
        let mut data = BTreeMap::new();
        for (key, value) in secret.data.unwrap_or_default() {
            let decoded =
                STANDARD
                    .decode(value.as_bytes())
                    .map_err(|source| SecretError::Base64 {
                        key: key.clone(),
                        source,
                    })?;
            data.insert(key, decoded);
        }
        Ok(Self {
            secret_type: secret.secret_type.unwrap_or_else(|| OPAQUE.to_owned()),
            immutable: secret.immutable.unwrap_or(false),
            data,
        })
    }

    /// Reads an optional Secret.
    pub(crate) fn from_optional(json: Option<&str>) -> Result<Option<Self>, SecretError> {
        json.map(Self::from_json).transpose()
    }

    /// Whether the Secret holds `key` (an empty value counts).
    pub(crate) fn has(&self, key: &str) -> bool {
        self.data.contains_key(key)
    }

    /// The value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&[u8]> {
        self.data.get(key).map(Vec::as_slice)
    }

    /// The size the API server counts: the sum of the decoded values.
    pub(crate) fn size(&self) -> usize {
        self.data.values().map(Vec::len).sum()
    }
}

/// The size of `existing` once `add` is written over it (a key in both counts once, with its
/// new value).
pub(crate) fn size_after(existing: Option<&ExistingSecret>, add: &[crate::Entry]) -> usize {
    let mut size = existing.map_or(0, ExistingSecret::size);
    for entry in add {
        if let Some(old) = existing.and_then(|s| s.get(&entry.key)) {
            size -= old.len();
        }
        size += entry.value.len();
    }
    size
}

/// The Secret type to plan with, and the `type-kept` note when an existing Secret has
/// another type than the declared one (it keeps its own).
pub(crate) fn planned_type(
    existing: Option<&ExistingSecret>,
    declared: &str,
) -> (String, Option<(String, String)>) {
    match existing {
        Some(secret) if secret.secret_type != declared => (
            secret.secret_type.clone(),
            Some((secret.secret_type.clone(), declared.to_owned())),
        ),
        _ => (declared.to_owned(), None),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Builds Secret JSON for tests.

    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde_json::{Map, Value, json};

    /// A Secret under construction.
    #[derive(Clone, Debug)]
    pub(crate) struct SecretBuilder {
        name: String,
        secret_type: String,
        immutable: bool,
        data: Map<String, Value>,
    }

    impl SecretBuilder {
        /// An Opaque Secret with no data.
        pub(crate) fn new(name: &str) -> Self {
            Self {
                name: name.to_owned(),
                secret_type: "Opaque".to_owned(),
                immutable: false,
                data: Map::new(),
            }
        }

        pub(crate) fn typed(mut self, secret_type: &str) -> Self {
            self.secret_type = secret_type.to_owned();
            self
        }

        pub(crate) fn immutable(mut self) -> Self {
            self.immutable = true;
            self
        }

        pub(crate) fn with(mut self, key: &str, value: impl AsRef<[u8]>) -> Self {
            self.data
                .insert(key.to_owned(), Value::String(STANDARD.encode(value)));
            self
        }

        pub(crate) fn json(&self) -> String {
            json!({
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": self.name, "namespace": "gitlab", "resourceVersion": "7"},
                "type": self.secret_type,
                "immutable": self.immutable,
                "data": self.data,
            })
            .to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::SecretBuilder;
    use super::*;

    #[test]
    fn a_secret_reads_with_its_type_immutability_and_decoded_data() {
        let json = SecretBuilder::new("s")
            .typed("kubernetes.io/tls")
            .immutable()
            .with("a", "xyz")
            .json();
        let secret = ExistingSecret::from_json(&json).expect("reads");
        assert_eq!(secret.secret_type, "kubernetes.io/tls");
        assert!(secret.immutable);
        assert_eq!(secret.get("a"), Some(&b"xyz"[..]));
        assert_eq!(secret.size(), 3);
    }

    #[test]
    fn a_secret_without_type_or_data_is_an_empty_opaque_one() {
        let secret = ExistingSecret::from_json(r#"{"kind":"Secret"}"#).expect("reads");
        assert_eq!(secret.secret_type, "Opaque");
        assert!(!secret.immutable);
        assert!(secret.data.is_empty());
    }

    #[test]
    fn a_value_that_is_not_base64_fails() {
        let json = r#"{"data":{"a":"***"}}"#;
        assert!(matches!(
            ExistingSecret::from_json(json),
            Err(SecretError::Base64 { .. })
        ));
    }
}
