//! An object as a read returned it: JSON text when it crossed the component boundary, a
//! value when the host handed it over natively. Decoding either into a typed struct needs
//! no [`Value`] in between, so a reader that wants a few fields of a large object (a
//! Secret's resourceVersion, not its data) pays for those fields alone.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One object read from the cluster, as the host passed it.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// The object's JSON text (inside wasm).
    Text(String),
    /// The object (natively).
    Value(Value),
}

impl Json {
    /// Decodes the object into `T`, reading only the fields `T` has.
    pub fn decode<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        match self {
            Self::Text(text) => serde_json::from_str(text),
            Self::Value(value) => T::deserialize(value),
        }
    }

    /// The object as a value.
    pub fn into_value(self) -> serde_json::Result<Value> {
        match self {
            Self::Text(text) => serde_json::from_str(&text),
            Self::Value(value) => Ok(value),
        }
    }

    /// The object's JSON text.
    pub fn to_text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Value(value) => value.to_string(),
        }
    }
}

/// The part of an object's metadata a pass compares between reads, decoded alone (with
/// [`Json::decode`]) so the rest of the object (a Secret's data) is only scanned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Head {
    #[serde(default)]
    pub metadata: HeadMetadata,
}

/// See [`Head`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeadMetadata {
    pub resource_version: Option<String>,
    pub labels: Option<BTreeMap<String, String>>,
}

impl Head {
    /// The metadata.resourceVersion.
    pub fn resource_version(&self) -> Option<&str> {
        self.metadata.resource_version.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Head {
        metadata: Metadata,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Metadata {
        resource_version: String,
    }

    #[test]
    fn text_and_value_decode_into_the_same_fields_and_the_same_text() {
        let value = json!({"metadata": {"resourceVersion": "7"}, "data": {"a": "YQ=="}});
        let text = Json::Text(value.to_string());
        let native = Json::Value(value.clone());
        let head = Head {
            metadata: Metadata {
                resource_version: "7".into(),
            },
        };
        assert_eq!(text.decode::<Head>().expect("text decodes"), head);
        assert_eq!(native.decode::<Head>().expect("value decodes"), head);
        assert_eq!(text.to_text(), native.to_text());
        assert_eq!(text.into_value().expect("text is JSON"), value);
    }

    #[test]
    fn text_that_is_not_the_struct_fails_with_the_field() {
        let text = Json::Text(r#"{"metadata": {"resourceVersion": 7}}"#.into());
        let error = text.decode::<Head>().expect_err("a number is not a string");
        assert!(
            error.to_string().contains("invalid type: integer `7`"),
            "{error}"
        );
    }
}
