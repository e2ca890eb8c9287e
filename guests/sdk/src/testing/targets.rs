//! Target clusters of the fake (contract 1.3): another [`FakeCluster`] registered under a
//! name, opened through [`Cluster::open_target`] as the host opens one: owners written as
//! the owner labels, JSON patches of them refused, field-index lists refused, the
//! primary's status and events kept on the cluster that opened it, and an object whose owner
//! labels name an object of that cluster read with the controller owner reference to it.

use std::rc::Rc;

use serde_json::{Map, Value};

use super::fake::FakeCluster;
use crate::cluster::{Cluster, DeleteOptions, Event, ListOptions, Owner, Patch, ReadFrom};
use crate::error::ApiError;
use crate::object::{KindRef, ObjectRef};

/// A target registered on a fake: the cluster and the owner label prefix.
#[derive(Clone)]
pub(super) struct Registered {
    pub(super) cluster: Rc<FakeCluster>,
    pub(super) prefix: String,
}

/// A target opened for a pass.
pub(super) struct FakeTarget<'a> {
    pub(super) own: &'a FakeCluster,
    pub(super) name: String,
    pub(super) target: Registered,
}

impl FakeTarget<'_> {
    fn labels(&self) -> [String; 3] {
        let p = &self.target.prefix;
        [
            format!("{p}/owner-kind"),
            format!("{p}/owner-name"),
            format!("{p}/owner-namespace"),
        ]
    }

    /// `body` with its owner (or its first owner reference) as the owner labels.
    fn ownerize(&self, body: &Value, owner: Option<&Owner>) -> Value {
        let mut body = body.clone();
        let namespace = body
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(metadata) = body.get_mut("metadata").and_then(Value::as_object_mut) else {
            return body;
        };
        let referenced = match metadata.remove("ownerReferences") {
            Some(Value::Array(refs)) => refs.first().map(|r| {
                let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
                (field("kind").to_owned(), field("name").to_owned())
            }),
            _ => None,
        };
        let named = owner
            .map(|o| (o.kind.clone(), o.name.clone()))
            .or(referenced);
        if let Some((kind, name)) = named {
            let labels = metadata
                .entry("labels")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(labels) = labels.as_object_mut() {
                for (key, value) in self.labels().into_iter().zip([kind, name, namespace]) {
                    labels.insert(key, Value::String(value));
                }
            }
        }
        body
    }

    /// `object` with the controller owner reference its owner labels stand for, when they
    /// name an object of the cluster that opened the target.
    fn present(&self, mut object: Value) -> Value {
        let [kind, name, namespace] = self.labels();
        let label = |key: &str| {
            object
                .pointer("/metadata/labels")
                .and_then(|l| l.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let (Some(kind), Some(name), Some(namespace)) =
            (label(&kind), label(&name), label(&namespace))
        else {
            return object;
        };
        let Some(primary) = self.own.server(&kind, &name) else {
            return object;
        };
        let field = |path: &str| {
            primary
                .pointer(path)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        if field("/metadata/namespace") != namespace {
            return object;
        }
        let reference = serde_json::json!({
            "apiVersion": field("/apiVersion"), "kind": kind, "name": name,
            "uid": field("/metadata/uid"), "controller": true, "blockOwnerDeletion": true,
        });
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            let refs = metadata
                .entry("ownerReferences")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Some(refs) = refs.as_array_mut()
                && !refs.iter().any(|r| r.get("uid") == reference.get("uid"))
            {
                refs.push(reference);
            }
        }
        object
    }

    fn forbidden(&self, what: String) -> ApiError {
        ApiError::Forbidden(format!("{what} on target cluster {:?}", self.name))
    }
}

impl Cluster for FakeTarget<'_> {
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        Ok(self
            .target
            .cluster
            .get(object, from)?
            .map(|o| self.present(o)))
    }

    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        if let Some((index, _)) = &options.field_index {
            return Err(self.forbidden(format!("field index {index:?} is not served")));
        }
        Ok(self
            .target
            .cluster
            .list(kind, namespace, options)?
            .into_iter()
            .map(|o| self.present(o))
            .collect())
    }

    fn apply(&self, object: &Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        let stored = self
            .target
            .cluster
            .apply(&self.ownerize(object, owner), None)?;
        Ok(self.present(stored))
    }

    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        let stored = self.target.cluster.create(&self.ownerize(object, None))?;
        Ok(self.present(stored))
    }

    fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        let patch = match patch {
            Patch::Merge(body) => Patch::Merge(self.ownerize(body, None)),
            Patch::Json(ops) => {
                let touches = ops.as_array().into_iter().flatten().any(|op| {
                    let path = op.get("path").and_then(Value::as_str).unwrap_or_default();
                    path.starts_with("/metadata/ownerReferences")
                        || path.starts_with("/metadata/labels")
                });
                if touches {
                    return Err(self.forbidden(
                        "a JSON patch of owner references or labels is refused".into(),
                    ));
                }
                patch.clone()
            }
        };
        let stored = self
            .target
            .cluster
            .patch(object, &patch, resource_version)?;
        Ok(self.present(stored))
    }

    fn delete_with(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError> {
        self.target.cluster.delete_with(object, options)
    }

    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        self.own.update_status(object)
    }

    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        self.own.record_event(regarding, event)
    }

    fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        self.target.cluster.served(kind)
    }

    fn create_subresource(
        &self,
        object: &ObjectRef,
        subresource: &str,
        body: &Value,
    ) -> Result<Value, ApiError> {
        self.target
            .cluster
            .create_subresource(object, subresource, body)
    }
}
