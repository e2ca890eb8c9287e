//! [`RawObject`]: any object of any kind as the API server sent it, for every read and
//! write the host makes through kube-rs.
//!
//! kube-rs decodes a list or watch response into its item type in one go: with
//! `DynamicObject`, one object whose `metadata` does not decode (a Secret whose `labels` is a
//! list) fails the whole list, so the informer of that kind never syncs, and kube-rs logs the
//! whole response body at WARN on every retry: every Secret's data. A `RawObject` decodes
//! from any JSON object; its metadata is decoded on the side, and when that fails it carries
//! the object's name, namespace and resourceVersion read as plain strings, and
//! [`RawObject::malformed`] says why. Callers skip such an object and report it by name,
//! never by content.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::ApiResource;
use kube::core::DynamicResourceScope;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// An object as the server sent it.
#[derive(Debug, Clone)]
pub(crate) struct RawObject {
    metadata: ObjectMeta,
    value: Value,
    malformed: Option<String>,
}

impl RawObject {
    /// The object as JSON.
    pub(crate) fn into_value(self) -> Value {
        self.value
    }

    /// Why its metadata does not decode (a serde message: positions and expected types,
    /// never the object's content); `None` for a well-formed object.
    pub(crate) fn malformed(&self) -> Option<&str> {
        self.malformed.as_deref()
    }

    /// Its metadata; for a malformed object, only the name, namespace and resourceVersion.
    pub(crate) fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    /// `namespace/name` (or `name`) as read from the object: its cache key, and how
    /// reports name it.
    pub(crate) fn key(&self) -> String {
        let name = self.metadata.name.as_deref().unwrap_or_default();
        wasm_operator_types::object_key(self.metadata.namespace.as_deref(), name)
    }
}

impl From<Value> for RawObject {
    fn from(value: Value) -> Self {
        let text = |field: &str| {
            value
                .pointer(&format!("/metadata/{field}"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let decoded = value.get("metadata").cloned().map_or(
            Ok(ObjectMeta::default()),
            serde_json::from_value::<ObjectMeta>,
        );
        let (metadata, malformed) = match decoded {
            Ok(metadata) => (metadata, None),
            Err(error) => {
                let metadata = ObjectMeta {
                    name: text("name"),
                    namespace: text("namespace"),
                    resource_version: text("resourceVersion"),
                    uid: text("uid"),
                    ..ObjectMeta::default()
                };
                (metadata, Some(format!("metadata does not decode: {error}")))
            }
        };
        Self {
            metadata,
            value,
            malformed,
        }
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::from)
    }
}

impl Serialize for RawObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

impl kube::Resource for RawObject {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn kind(dt: &ApiResource) -> std::borrow::Cow<'_, str> {
        dt.kind.as_str().into()
    }

    fn group(dt: &ApiResource) -> std::borrow::Cow<'_, str> {
        dt.group.as_str().into()
    }

    fn version(dt: &ApiResource) -> std::borrow::Cow<'_, str> {
        dt.version.as_str().into()
    }

    fn api_version(dt: &ApiResource) -> std::borrow::Cow<'_, str> {
        dt.api_version.as_str().into()
    }

    fn plural(dt: &ApiResource) -> std::borrow::Cow<'_, str> {
        dt.plural.as_str().into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_object_whose_metadata_does_not_decode_keeps_its_name_and_says_why_without_content() {
        let object = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "bad", "namespace": "ns", "resourceVersion": "7",
                         "labels": ["leaky-label-value"]},
            "data": {"password": "c2VjcmV0LXZhbHVl"}});
        let raw: RawObject = serde_json::from_value(object.clone()).expect("any object decodes");
        assert_eq!(raw.key(), "ns/bad");
        assert_eq!(
            kube::ResourceExt::resource_version(&raw).as_deref(),
            Some("7")
        );
        let why = raw.malformed().expect("reported as malformed");
        assert!(
            why.starts_with("metadata does not decode: invalid type: sequence"),
            "{why}"
        );
        assert!(!why.contains("c2VjcmV0") && !why.contains("leaky"), "{why}");
        assert_eq!(raw.into_value(), object, "the object is kept as sent");
    }

    #[test]
    fn a_list_with_one_malformed_item_decodes_every_item() {
        let list = json!({"apiVersion": "v1", "kind": "SecretList", "metadata": {"resourceVersion": "9"},
        "items": [
            {"metadata": {"name": "good", "namespace": "ns", "labels": {"a": "b"}}},
            {"metadata": {"name": "bad", "namespace": "ns", "labels": ["x"]}},
        ]});
        let decoded: kube::core::ObjectList<RawObject> =
            serde_json::from_value(list).expect("the list decodes");
        let report: Vec<(String, bool)> = decoded
            .items
            .iter()
            .map(|o| (o.key(), o.malformed().is_some()))
            .collect();
        assert_eq!(
            report,
            [("ns/good".to_owned(), false), ("ns/bad".to_owned(), true)]
        );
    }
}
