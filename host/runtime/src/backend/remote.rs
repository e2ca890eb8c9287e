//! Target clusters (contract 1.3): where a plugin's children go when its primary names a
//! cluster other than the host's own.
//!
//! The operator registers targets ([`TargetClusters`]); a pass opens one by name and gets a
//! [`Checked`](super::checked::Checked) view of it with a [`Remote`] scope. The primary lives
//! on the host's own cluster, so an owner reference cannot name it on the target: the owner
//! of an apply, and a body's or merge patch's owner reference to the primary, are written as
//! the three owner labels the plugin declared instead, and a body may set those labels only
//! to its own primary. A JSON patch may not touch either. Read the other way, an object on
//! the target whose owner labels name the pass's primary is answered with the controller
//! owner reference to the primary the labels stand for, so code that checks "is this mine"
//! by owner reference works on a target as on the primary's cluster.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use wasm_operator_types::{ApiError, ObjectRef, Patch};

use super::ClusterBackend;

/// A registered target cluster as a pass reaches it.
#[derive(Clone)]
pub struct Target {
    /// The target's cluster: its caches and API server, under its own credentials.
    pub backend: Arc<dyn ClusterBackend>,
    /// The namespaces its registration scopes it to; `None`: every namespace.
    pub namespaces: Option<Vec<String>>,
    /// Resolves the target's Services for a pass's HTTP requests once it opened the target;
    /// `None` keeps the runtime's resolver.
    pub services: Option<Arc<dyn crate::ServiceResolver>>,
}

/// Why a target cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// No registration of that name exists.
    #[error("target cluster {0:?} is not registered")]
    NotRegistered(String),
    /// Registered, but not usable now (its kubeconfig does not load, or it is not engaged).
    #[error("target cluster {name:?} is unavailable: {reason}")]
    Unavailable { name: String, reason: String },
}

/// The target clusters a host has engaged.
#[async_trait]
pub trait TargetClusters: Send + Sync {
    /// The target registered as `name`.
    async fn open(&self, name: &str) -> Result<Target, TargetError>;
}

/// What a view of a target adds to the plugin's checks.
#[derive(Debug, Clone)]
pub(crate) struct Remote {
    /// The target's registered name (for messages).
    pub(crate) name: String,
    /// The owner label keys: kind, name, namespace.
    pub(crate) labels: [String; 3],
    /// The primary's values of those labels.
    pub(crate) values: [String; 3],
    /// The owner reference those labels stand for (`None` when the primary has no uid).
    reference: Option<Value>,
    /// The namespaces the registration scopes the target to.
    pub(crate) namespaces: Option<Vec<String>>,
}

fn forbidden(plugin: &str, message: String) -> ApiError {
    tracing::warn!(plugin, %message, "refused a call on a target cluster");
    ApiError::Forbidden(format!("plugin {plugin}: {message}"))
}

impl Remote {
    /// The scope of target `name` for a pass over `primary`, with owner labels under `prefix`.
    pub(crate) fn new(
        name: &str,
        owner_labels: [String; 3],
        primary: &ObjectRef,
        uid: Option<&str>,
        namespaces: Option<Vec<String>>,
    ) -> Self {
        let reference = uid.map(|uid| {
            serde_json::json!({
                "apiVersion": primary.api_version,
                "kind": primary.kind,
                "name": primary.name,
                "uid": uid,
                "controller": true,
                "blockOwnerDeletion": true,
            })
        });
        Self {
            reference,
            name: name.to_owned(),
            labels: owner_labels,
            values: [
                primary.kind.clone(),
                primary.name.clone(),
                primary.namespace.clone().unwrap_or_default(),
            ],
            namespaces,
        }
    }

    /// Whether `object`'s owner labels name the pass's primary.
    fn owned(&self, object: &Value) -> bool {
        let Some(labels) = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
        else {
            return false;
        };
        self.labels
            .iter()
            .zip(&self.values)
            .all(|(key, value)| labels.get(key).and_then(Value::as_str) == Some(value))
    }

    /// `object` as the plugin reads it: with the controller owner reference to the primary
    /// when its owner labels name the primary (and it has no owner reference of that uid).
    pub(crate) fn present(&self, object: Arc<Value>) -> Arc<Value> {
        let Some(reference) = &self.reference else {
            return object;
        };
        if !self.owned(&object) {
            return object;
        }
        let mut object = Arc::unwrap_or_clone(object);
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            let refs = metadata
                .entry("ownerReferences")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Some(refs) = refs.as_array_mut()
                && !refs.iter().any(|r| r.get("uid") == reference.get("uid"))
            {
                refs.push(reference.clone());
            }
        }
        Arc::new(object)
    }

    /// Refuses a namespace (or a cluster-scoped call) outside the registration's scope.
    pub(crate) fn check_namespace(
        &self,
        plugin: &str,
        namespace: Option<&str>,
    ) -> Result<(), ApiError> {
        let Some(scope) = &self.namespaces else {
            return Ok(());
        };
        match namespace {
            Some(ns) if scope.iter().any(|s| s == ns) => Ok(()),
            Some(ns) => Err(forbidden(
                plugin,
                format!(
                    "target cluster {:?} is registered for namespaces {} only, not {ns:?}",
                    self.name,
                    scope.join(",")
                ),
            )),
            None => Err(forbidden(
                plugin,
                format!(
                    "target cluster {:?} is registered for namespaces {} only: no cluster-wide calls",
                    self.name,
                    scope.join(",")
                ),
            )),
        }
    }

    /// Writes `body`'s owner (`owner`, or its owner references, which the plugin's checks
    /// already limited to the primary) as the owner labels; refuses owner labels that name
    /// another object.
    pub(crate) fn ownerize(
        &self,
        plugin: &str,
        body: &mut Value,
        owner: bool,
    ) -> Result<(), ApiError> {
        let Some(metadata) = body.get_mut("metadata").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        let referenced = match metadata.remove("ownerReferences") {
            Some(Value::Array(refs)) => !refs.is_empty(),
            _ => false,
        };
        self.check_labels(plugin, metadata)?;
        if owner || referenced {
            let labels = metadata
                .entry("labels")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(labels) = labels.as_object_mut() {
                for (key, value) in self.labels.iter().zip(&self.values) {
                    labels.insert(key.clone(), Value::String(value.clone()));
                }
            }
        }
        Ok(())
    }

    fn check_labels(&self, plugin: &str, metadata: &Map<String, Value>) -> Result<(), ApiError> {
        let Some(labels) = metadata.get("labels").and_then(Value::as_object) else {
            return Ok(());
        };
        for (key, value) in self.labels.iter().zip(&self.values) {
            match labels.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::String(v)) if v == value => {}
                Some(other) => {
                    return Err(forbidden(
                        plugin,
                        format!(
                            "label {key}={other} on target cluster {:?} names another owner than the pass's primary ({value:?})",
                            self.name
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `patch` with a merge patch's owner references written as owner labels; a JSON patch
    /// that touches owner references or owner labels is refused.
    pub(crate) fn ownerize_patch(&self, plugin: &str, patch: &Patch) -> Result<Patch, ApiError> {
        match patch {
            Patch::Merge(body) => {
                let mut body = body.clone();
                self.ownerize(plugin, &mut body, false)?;
                Ok(Patch::Merge(body))
            }
            Patch::Json(ops) => {
                let touches = ops.as_array().into_iter().flatten().any(|op| {
                    let path = op.get("path").and_then(Value::as_str).unwrap_or_default();
                    path.starts_with("/metadata/ownerReferences")
                        || path == "/metadata/labels"
                        || self.labels.iter().any(|key| {
                            path == format!("/metadata/labels/{}", key.replace('/', "~1"))
                        })
                });
                if touches {
                    return Err(forbidden(
                        plugin,
                        format!(
                            "a JSON patch on target cluster {:?} may not touch owner references or owner labels; use a merge patch",
                            self.name
                        ),
                    ));
                }
                Ok(patch.clone())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn remote(namespaces: Option<Vec<String>>) -> Remote {
        let primary = ObjectRef {
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            namespace: Some("ns".into()),
            name: "w".into(),
        };
        let labels =
            ["x.io/owner-kind", "x.io/owner-name", "x.io/owner-namespace"].map(String::from);
        Remote::new("edge", labels, &primary, Some("uid-1"), namespaces)
    }

    #[test]
    fn a_child_whose_owner_labels_name_the_primary_reads_with_its_owner_reference() {
        let r = remote(None);
        let child = json!({"metadata": {"name": "c", "labels": owner_labels()}});
        let read = r.present(Arc::new(child));
        assert_eq!(
            read["metadata"]["ownerReferences"],
            json!([{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w",
                "uid": "uid-1", "controller": true, "blockOwnerDeletion": true}])
        );
        let mut other_labels = owner_labels();
        other_labels["x.io/owner-name"] = json!("v");
        let other = json!({"metadata": {"name": "c", "labels": other_labels}});
        assert_eq!(r.present(Arc::new(other.clone())).as_ref(), &other);
        // Written back, the reference becomes the labels again.
        let mut body = Arc::unwrap_or_clone(read);
        r.ownerize("p", &mut body, false).unwrap();
        assert_eq!(
            body,
            json!({"metadata": {"name": "c", "labels": owner_labels()}})
        );
    }

    fn owner_labels() -> Value {
        json!({"x.io/owner-kind": "Widget", "x.io/owner-name": "w", "x.io/owner-namespace": "ns"})
    }

    #[test]
    fn an_owner_reference_to_the_primary_becomes_the_owner_labels() {
        let mut body = json!({"metadata": {"name": "c", "labels": {"app": "a"},
            "ownerReferences": [{"kind": "Widget", "name": "w", "uid": "u"}]}});
        remote(None).ownerize("p", &mut body, false).unwrap();
        assert_eq!(body["metadata"].get("ownerReferences"), None);
        let mut expected = owner_labels();
        expected["app"] = json!("a");
        assert_eq!(body["metadata"]["labels"], expected);
    }

    #[test]
    fn an_apply_owner_becomes_the_owner_labels_on_a_body_without_labels() {
        let mut body = json!({"metadata": {"name": "c"}});
        remote(None).ownerize("p", &mut body, true).unwrap();
        assert_eq!(body["metadata"]["labels"], owner_labels());
    }

    #[test]
    fn a_body_without_an_owner_gets_no_owner_labels() {
        let mut body = json!({"metadata": {"name": "c"}});
        remote(None).ownerize("p", &mut body, false).unwrap();
        assert_eq!(body["metadata"].get("labels"), None);
    }

    #[test]
    fn owner_labels_naming_another_object_are_refused() {
        let mut body = json!({"metadata": {"name": "c", "labels": {"x.io/owner-name": "other"}}});
        let err = remote(None).ownerize("p", &mut body, true).unwrap_err();
        assert!(
            matches!(&err, ApiError::Forbidden(m) if m.contains("x.io/owner-name=\"other\"") && m.contains("another owner")),
            "{err:?}"
        );
    }

    #[test]
    fn a_json_patch_touching_owner_labels_or_references_is_refused_and_others_pass() {
        let r = remote(None);
        for (path, refused) in [
            ("/metadata/labels/x.io~1owner-name", true),
            ("/metadata/ownerReferences/0", true),
            ("/metadata/labels", true),
            ("/spec/replicas", false),
        ] {
            let patch = Patch::Json(json!([{"op": "replace", "path": path, "value": 1}]));
            let result = r.ownerize_patch("p", &patch);
            assert_eq!(
                matches!(result, Err(ApiError::Forbidden(ref m)) if m.contains("merge patch")),
                refused,
                "{path}"
            );
        }
    }

    #[test]
    fn a_scoped_target_refuses_other_namespaces_and_cluster_wide_calls() {
        let r = remote(Some(vec!["ns".into(), "ops".into()]));
        assert_eq!(r.check_namespace("p", Some("ops")), Ok(()));
        let other = r.check_namespace("p", Some("kube-system")).unwrap_err();
        assert!(
            matches!(&other, ApiError::Forbidden(m) if m.contains("for namespaces ns,ops only, not \"kube-system\"")),
            "{other:?}"
        );
        let wide = r.check_namespace("p", None).unwrap_err();
        assert!(
            matches!(&wide, ApiError::Forbidden(m) if m.contains("no cluster-wide calls")),
            "{wide:?}"
        );
        assert_eq!(remote(None).check_namespace("p", None), Ok(()));
    }
}
