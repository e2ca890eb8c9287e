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

    /// The object's [`Head`]. From text, the fields are read only up to `metadata`: the
    /// host writes it before the rest of the object (as kube-apiserver does), so a Secret's
    /// data is never scanned. Text laid out otherwise is decoded whole, with the same result
    /// and the same errors as [`decode`](Self::decode).
    pub fn head(&self) -> serde_json::Result<Head> {
        self.metadata().map(|metadata| Head { metadata })
    }

    /// The object's `metadata` decoded into `M` (its default when the object has none),
    /// read the way [`head`](Self::head) reads it: from text, no further than `metadata`.
    pub fn metadata<M: DeserializeOwned + Default>(&self) -> serde_json::Result<M> {
        /// An object with nothing decoded but its metadata.
        #[derive(Deserialize)]
        struct Metadata<M> {
            #[serde(default)]
            metadata: M,
        }
        match self {
            Self::Text(text) => match metadata_first(text) {
                Some(metadata) => Ok(metadata),
                None => serde_json::from_str::<Metadata<M>>(text).map(|o| o.metadata),
            },
            Self::Value(value) => Metadata::<M>::deserialize(value).map(|o| o.metadata),
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

/// The `metadata` of the object `text`, read from the start and no further, when the text
/// is an object whose top-level fields parse up to a `metadata` that decodes; `None`
/// otherwise (no metadata, or anything unexpected: the caller decodes the whole text).
fn metadata_first<M: DeserializeOwned>(text: &str) -> Option<M> {
    let bytes = text.as_bytes();
    let mut at = skip_whitespace(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_whitespace(bytes, at);
        let (key, after_key) = value_at::<String>(text, at)?;
        at = skip_whitespace(bytes, after_key);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at += 1;
        if key == "metadata" {
            return value_at::<M>(text, at).map(|(metadata, _)| metadata);
        }
        let (_, after_value) = value_at::<serde::de::IgnoredAny>(text, at)?;
        at = skip_whitespace(bytes, after_value);
        if bytes.get(at) != Some(&b',') {
            return None;
        }
        at += 1;
    }
}

/// One JSON value of type `T` at byte `at` of `text`, and the byte after it.
fn value_at<'de, T: Deserialize<'de>>(text: &'de str, at: usize) -> Option<(T, usize)> {
    let mut stream = serde_json::Deserializer::from_str(text.get(at..)?).into_iter::<T>();
    let value = stream.next()?.ok()?;
    Some((value, at + stream.byte_offset()))
}

fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\n' | b'\t' | b'\r'))
    {
        at += 1;
    }
    at
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
    fn a_head_is_read_from_metadata_written_first_without_the_rest_of_the_object() {
        let metadata = super::HeadMetadata {
            resource_version: Some("7".into()),
            labels: Some(BTreeMap::from([("app".into(), "gitlab".into())])),
        };
        let expected = super::Head {
            metadata: metadata.clone(),
        };
        // Broken JSON after metadata shows that the data is not read.
        let first = r#" { "kind" : "Secret", "apiVersion":"v1", "metadata": {"resourceVersion":"7","labels":{"app":"gitlab"}}, "data": {"a": BROKEN"#;
        assert_eq!(Json::Text(first.into()).head().expect("a head"), expected);
        // Laid out otherwise: decoded whole, with the same result or error as `decode`.
        let value = json!({"data": {"a": "YQ=="}, "metadata": {"resourceVersion": "7", "labels": {"app": "gitlab"}}});
        for json in [Json::Text(value.to_string()), Json::Value(value)] {
            assert_eq!(json.head().expect("a head"), expected);
        }
        assert_eq!(
            Json::Text(r#"{"kind":"Secret"}"#.into())
                .head()
                .expect("a head"),
            super::Head::default(),
            "no metadata"
        );
        let wrong = Json::Text(r#"{"kind":"Secret","metadata":{"resourceVersion":7}}"#.into());
        let error = wrong.head().expect_err("a number is not a string");
        assert!(
            error.to_string().contains("invalid type: integer `7`"),
            "{error}"
        );
        let error = Json::Text("[1]".into()).head().expect_err("not an object");
        assert!(error.to_string().contains("invalid type"), "{error}");
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
