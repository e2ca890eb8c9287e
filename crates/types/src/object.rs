//! References to objects and kinds, and how to read them off objects.

use serde_json::Value;

use crate::error::MissingField;

/// Names one Kubernetes object.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    /// `group/version`, or `version` for the core group.
    pub api_version: String,
    /// The kind.
    pub kind: String,
    /// The namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

impl ObjectRef {
    /// A reference to the object of type `K` named `name` in `namespace`.
    pub fn of<K: k8s_openapi::Resource>(namespace: Option<&str>, name: &str) -> Self {
        Self {
            api_version: K::API_VERSION.to_owned(),
            kind: K::KIND.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        }
    }

    /// Reads apiVersion, kind, metadata.namespace and metadata.name off an object.
    pub fn from_object(object: &Value) -> Result<Self, MissingField> {
        let field = |path: &[&str], name: &'static str| -> Result<String, MissingField> {
            let mut v = object;
            for p in path {
                v = v.get(p).ok_or_else(|| missing(object, name))?;
            }
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| missing(object, name))
        };
        Ok(Self {
            api_version: field(&["apiVersion"], "apiVersion")?,
            kind: field(&["kind"], "kind")?,
            namespace: object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .filter(|ns| !ns.is_empty())
                .map(str::to_owned),
            name: field(&["metadata", "name"], "metadata.name")?,
        })
    }

    /// `namespace/name`, or `name` for a cluster-scoped object: the key of work queues, caches
    /// and field indexes.
    pub fn key(&self) -> String {
        object_key(self.namespace.as_deref(), &self.name)
    }
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind, self.key())
    }
}

/// `namespace/name`, or `name` without a namespace.
pub fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}

fn missing(object: &Value, field: &'static str) -> MissingField {
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("object");
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("<unnamed>");
    MissingField {
        what: format!("{kind} {name}"),
        field,
    }
}

/// Names a kind and the resource that serves it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KindRef {
    /// `group/version`, or `version` for the core group.
    pub api_version: String,
    /// The kind.
    pub kind: String,
    /// The lower-case plural resource, e.g. `secrets`.
    pub plural: String,
    /// Whether its objects live in a namespace.
    pub namespaced: bool,
}

impl KindRef {
    /// The kind of the k8s-openapi (or k8s-openapi-like) type `K`.
    pub fn of<K: k8s_openapi::Resource>() -> Self
    where
        K::Scope: 'static,
    {
        use std::any::TypeId;
        Self {
            api_version: K::API_VERSION.to_owned(),
            kind: K::KIND.to_owned(),
            plural: K::URL_PATH_SEGMENT.to_owned(),
            namespaced: TypeId::of::<K::Scope>()
                == TypeId::of::<k8s_openapi::NamespaceResourceScope>(),
        }
    }

    /// The API group: empty for the core group.
    pub fn group(&self) -> &str {
        split_api_version(&self.api_version).0
    }

    /// The API version within the group, e.g. `v1`.
    pub fn version(&self) -> &str {
        split_api_version(&self.api_version).1
    }

    /// Whether `object` is of this kind.
    pub fn matches(&self, object: &ObjectRef) -> bool {
        self.api_version == object.api_version && self.kind == object.kind
    }
}

impl std::fmt::Display for KindRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.api_version, self.kind)
    }
}

/// Splits `group/version` into its group and version; the core group's `v1` has group "".
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{Namespace, Secret};
    use serde_json::json;

    #[test]
    fn a_kind_ref_of_a_k8s_openapi_type_names_its_resource_and_scope() {
        let secret = KindRef::of::<Secret>();
        assert_eq!(secret.api_version, "v1");
        assert_eq!(secret.plural, "secrets");
        assert!(secret.namespaced);
        assert_eq!(secret.group(), "");
        let deployment = KindRef::of::<Deployment>();
        assert_eq!((deployment.group(), deployment.version()), ("apps", "v1"));
        assert!(!KindRef::of::<Namespace>().namespaced);
    }

    #[test]
    fn an_object_ref_is_read_off_an_object() {
        let object = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "a", "namespace": "ns"}});
        let r = ObjectRef::from_object(&object).expect("complete object");
        assert_eq!(r, ObjectRef::of::<Secret>(Some("ns"), "a"));
        assert_eq!(r.key(), "ns/a");
        assert_eq!(r.to_string(), "Secret ns/a");
    }

    #[test]
    fn an_object_without_a_name_is_an_error_naming_the_field() {
        let object = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {}});
        let err = ObjectRef::from_object(&object).expect_err("no name");
        assert_eq!(err.to_string(), "Secret <unnamed> has no metadata.name");
    }

    #[test]
    fn a_cluster_scoped_key_is_the_bare_name() {
        assert_eq!(object_key(None, "n"), "n");
        assert_eq!(object_key(Some(""), "n"), "n");
        assert_eq!(object_key(Some("ns"), "n"), "ns/n");
    }
}
