//! The cluster as a reconciler sees it.
//!
//! [`Cluster`] is the WIT `cluster` interface in Rust types, with objects as
//! [`serde_json::Value`]; inside wasm the host implements it across the component boundary,
//! natively the host implements it directly. [`ClusterExt`] adds typed helpers over
//! k8s-openapi and serde types, so reconciler code never handles JSON by hand.

use k8s_openapi::Resource;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{ApiError, Error, Result};
use crate::json::{Head, Json};
use crate::object::{KindRef, ObjectRef};

pub use wasm_operator_types::call::{
    DeleteOptions, Event, EventType, ListOptions, Owner, Patch, Preconditions, Propagation,
    ReadFrom,
};

/// The cluster: the WIT `cluster` interface in Rust types.
///
/// Every call is checked by the host against the verbs and kinds the plugin declared, and
/// fails with [`ApiError::Forbidden`] otherwise.
pub trait Cluster {
    /// Reads one object; `None` when it does not exist.
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError>;
    /// Lists a kind in one namespace, or in all with `None`.
    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError>;
    /// [`get`](Self::get), the object as the host passed it: decode it with
    /// [`Json::decode`] into a struct of the fields wanted.
    fn get_json(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Json>, ApiError> {
        Ok(self.get(object, from)?.map(Json::Value))
    }
    /// [`list`](Self::list), each object as the host passed it.
    fn list_json(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Json>, ApiError> {
        Ok(self
            .list(kind, namespace, options)?
            .into_iter()
            .map(Json::Value)
            .collect())
    }
    /// Server-side applies `object` (only the fields the caller owns) with force under the
    /// plugin's field manager; sets `owner` as controller owner reference.
    fn apply(&self, object: &Value, owner: Option<&Owner>) -> Result<Value, ApiError>;
    /// Creates `object`.
    fn create(&self, object: &Value) -> Result<Value, ApiError>;
    /// Patches one object, optionally only if it still has `resource_version`.
    fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError>;
    /// Deletes one object, under `options.preconditions`: the server refuses with
    /// [`ApiError::Conflict`] when the object's uid or resourceVersion is not the one given.
    fn delete_with(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError>;
    /// Deletes one object, unconditionally.
    fn delete(&self, object: &ObjectRef, propagation: Propagation) -> Result<(), ApiError> {
        self.delete_with(object, &propagation.into())
    }
    /// Replaces the status subresource of `object`.
    fn update_status(&self, object: &Value) -> Result<Value, ApiError>;
    /// Records an event about `regarding`.
    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError>;
    /// Whether the cluster serves `kind` (a kind the plugin declared), from the host's
    /// discovery cache. A call on a kind that is not served fails
    /// [`ApiError::NotServed`].
    fn served(&self, kind: &KindRef) -> Result<bool, ApiError>;
    /// Creates `body` on subresource `subresource` of `object` (declared in
    /// [`Description::subresources`](crate::plugin::Description)), e.g. a TokenRequest on a
    /// ServiceAccount's `token`; returns the server's answer.
    fn create_subresource(
        &self,
        object: &ObjectRef,
        subresource: &str,
        body: &Value,
    ) -> Result<Value, ApiError>;

    /// The target cluster registered as `name` (contract 1.3), for the rest of the pass: the
    /// cluster the primary's children are written to when the primary names one (CobaltCore's
    /// `spec.targetClusterRef`). Reads, writes and kind probes go to the target, checked as
    /// calls here are; an apply's `owner` (and a body's owner reference to the primary)
    /// becomes the owner labels the plugin declared
    /// ([`Description::targets`](crate::plugin::Description)), since an owner reference
    /// cannot cross clusters. The primary stays on this cluster: `update_status` and
    /// `record_event` on the target's handle are made here. A host (or a fake) that engages
    /// no targets answers [`TargetError::NotRegistered`].
    fn open_target(&self, name: &str) -> Result<Box<dyn Cluster + '_>, TargetError> {
        Err(TargetError::NotRegistered(format!(
            "target cluster {name:?} is not registered"
        )))
    }
}

/// Why [`Cluster::open_target`] failed; the message is the host's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// No registration of that name exists (never registered, or deregistered).
    #[error("{0}")]
    NotRegistered(String),
    /// Registered but not usable now (its kubeconfig does not load, it is not engaged yet,
    /// or the plugin declared no owner label prefix).
    #[error("{0}")]
    Unavailable(String),
}

/// Typed helpers over [`Cluster`] for k8s-openapi types and any serde type that implements
/// [`k8s_openapi::Resource`].
pub trait ClusterExt: Cluster {
    /// Reads the `K` named `name` from the cache.
    fn get_typed<K: Resource + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<K>> {
        self.get_typed_from(namespace, name, ReadFrom::Cache)
    }

    /// Reads the `K` named `name` from the cache or past it.
    fn get_typed_from<K: Resource + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
        from: ReadFrom,
    ) -> Result<Option<K>> {
        let object = ObjectRef::of::<K>(namespace, name);
        self.get_json(&object, from)?
            .map(|json| decode_json(&object.to_string(), &json))
            .transpose()
    }

    /// Lists the `K`s of a namespace (or of all namespaces).
    fn list_typed<K: Resource + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<K>>
    where
        K::Scope: 'static,
    {
        self.list_json(&KindRef::of::<K>(), namespace, options)?
            .iter()
            .map(|json| decode_json(K::KIND, json))
            .collect()
    }

    /// Server-side applies `body` as a `K` named `name`: `body` holds only the fields the
    /// caller owns; apiVersion, kind, metadata.name and metadata.namespace are stamped.
    fn apply_typed<K: Resource + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
        mut body: Value,
        owner: Option<&Owner>,
    ) -> Result<K> {
        stamp::<K>(&mut body, namespace, name);
        let stored = self.apply(&body, owner)?;
        decode(&ObjectRef::of::<K>(namespace, name).to_string(), stored)
    }

    /// [`apply`](Cluster::apply), and whether the server stored a change, so a pass can
    /// record an event only when it wrote something. Reads the object from the cache
    /// first (so it needs `get` on the kind besides `patch`): the apply changed nothing
    /// when the server returned the cached resourceVersion. A cache behind the server
    /// reports a change that was not this apply's; a change this apply made is never
    /// reported as none.
    fn apply_with_change(&self, object: &Value, owner: Option<&Owner>) -> Result<Applied> {
        let target = ObjectRef::from_object(object)?;
        let before = self.get_json(&target, ReadFrom::Cache)?;
        let before = before
            .map(|json| decode_json::<Head>(&target.to_string(), &json))
            .transpose()?
            .and_then(|head| head.metadata.resource_version);
        let stored = self.apply(object, owner)?;
        let after = stored
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str);
        Ok(Applied {
            changed: before.is_none() || before.as_deref() != after,
            object: stored,
        })
    }

    /// Creates `object`.
    fn create_typed<K: Resource + Serialize + DeserializeOwned>(&self, object: &K) -> Result<K> {
        let mut body = encode(K::KIND, object)?;
        stamp_kind::<K>(&mut body);
        let stored = self.create(&body)?;
        decode(K::KIND, stored)
    }

    /// JSON-merge-patches the `K` named `name`, only if it still has `resource_version` when
    /// given.
    fn merge_patch<K: Resource + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch: Value,
        resource_version: Option<&str>,
    ) -> Result<K> {
        let object = ObjectRef::of::<K>(namespace, name);
        let stored = self.patch(&object, &Patch::Merge(patch), resource_version)?;
        decode(&object.to_string(), stored)
    }

    /// Sets the finalizers of `object` to `finalizers` (an empty list removes the field):
    /// a merge patch that only applies while the object still has the resourceVersion it
    /// was read at. On success `object`'s finalizers and resourceVersion are the stored
    /// ones; without a resourceVersion nothing is sent.
    fn write_finalizers<K>(&self, object: &mut K, finalizers: Vec<String>) -> Result<()>
    where
        K: Resource + DeserializeOwned + k8s_openapi::Metadata<Ty = ObjectMeta>,
    {
        let metadata = object.metadata();
        let namespace = metadata.namespace.clone();
        let name = metadata.name.clone().unwrap_or_default();
        let Some(version) = metadata.resource_version.clone() else {
            let key = ObjectRef::of::<K>(namespace.as_deref(), &name);
            return Err(Error::MissingField {
                what: key.to_string(),
                field: "metadata.resourceVersion",
            });
        };
        let list = if finalizers.is_empty() {
            Value::Null
        } else {
            serde_json::json!(finalizers)
        };
        let stored: K = self.merge_patch(
            namespace.as_deref(),
            &name,
            serde_json::json!({"metadata": {"finalizers": list}}),
            Some(&version),
        )?;
        let stored = stored.metadata();
        let metadata = object.metadata_mut();
        metadata.finalizers = stored.finalizers.clone();
        metadata.resource_version = stored.resource_version.clone();
        Ok(())
    }

    /// Adds `finalizer` to `object`'s finalizers, unless it carries it already; `Ok(true)`
    /// when it was written. See [`write_finalizers`](Self::write_finalizers).
    fn add_finalizer<K>(&self, object: &mut K, finalizer: &str) -> Result<bool>
    where
        K: Resource + DeserializeOwned + k8s_openapi::Metadata<Ty = ObjectMeta>,
    {
        if has_finalizer(object.metadata(), finalizer) {
            return Ok(false);
        }
        let mut list = object.metadata().finalizers.clone().unwrap_or_default();
        list.push(finalizer.to_owned());
        self.write_finalizers(object, list).map(|()| true)
    }

    /// Removes `finalizer` from `object`'s finalizers, when it carries it; `Ok(true)` when
    /// it was written. See [`write_finalizers`](Self::write_finalizers).
    fn remove_finalizer<K>(&self, object: &mut K, finalizer: &str) -> Result<bool>
    where
        K: Resource + DeserializeOwned + k8s_openapi::Metadata<Ty = ObjectMeta>,
    {
        if !has_finalizer(object.metadata(), finalizer) {
            return Ok(false);
        }
        let list = object
            .metadata()
            .finalizers
            .iter()
            .flatten()
            .filter(|f| *f != finalizer)
            .cloned()
            .collect();
        self.write_finalizers(object, list).map(|()| true)
    }

    /// Deletes the `K` named `name`; `Ok(false)` when it did not exist.
    fn delete_typed<K: Resource>(
        &self,
        namespace: Option<&str>,
        name: &str,
        propagation: Propagation,
    ) -> Result<bool> {
        match self.delete(&ObjectRef::of::<K>(namespace, name), propagation) {
            Ok(()) => Ok(true),
            Err(ApiError::NotFound(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes `object` only if the server still holds that very object: the delete carries
    /// `object`'s uid and resourceVersion as preconditions, so an object re-created or
    /// changed since `object` was read is refused with [`ApiError::Conflict`] instead of
    /// deleted. Pass an object read past the cache ([`ReadFrom::Server`]). `Ok(false)` when
    /// the object is gone; an `object` without uid or resourceVersion is
    /// [`Error::MissingField`].
    fn delete_unchanged<K: Resource + k8s_openapi::Metadata<Ty = ObjectMeta>>(
        &self,
        object: &K,
        propagation: Propagation,
    ) -> Result<bool> {
        let meta = object.metadata();
        let name = meta.name.as_deref().unwrap_or("<unnamed>");
        let what = format!(
            "{} {}",
            K::KIND,
            crate::object::object_key(meta.namespace.as_deref(), name)
        );
        let field = |value: &Option<String>, field: &'static str| {
            value.clone().ok_or_else(|| Error::MissingField {
                what: what.clone(),
                field,
            })
        };
        let options = DeleteOptions {
            propagation,
            preconditions: Preconditions {
                uid: Some(field(&meta.uid, "metadata.uid")?),
                resource_version: Some(field(&meta.resource_version, "metadata.resourceVersion")?),
            },
        };
        let target = ObjectRef::of::<K>(meta.namespace.as_deref(), name);
        match self.delete_with(&target, &options) {
            Ok(()) => Ok(true),
            Err(ApiError::NotFound(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes the status subresource of `object`.
    fn update_status_typed<K: Resource + Serialize + DeserializeOwned>(
        &self,
        object: &K,
    ) -> Result<K> {
        let mut body = encode(K::KIND, object)?;
        stamp_kind::<K>(&mut body);
        let stored = self.update_status(&body)?;
        decode(K::KIND, stored)
    }
}

impl<C: Cluster + ?Sized> ClusterExt for C {}

/// What [`ClusterExt::apply_with_change`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The object as the server stored it.
    pub object: Value,
    /// Whether the apply stored a change (created the object or changed a field).
    pub changed: bool,
}

/// Whether `metadata` carries `finalizer`.
pub fn has_finalizer(metadata: &ObjectMeta, finalizer: &str) -> bool {
    metadata.finalizers.iter().flatten().any(|f| f == finalizer)
}

/// A shared reference to a cluster is a cluster, so a borrowed one can be boxed as
/// `Box<dyn Cluster + '_>` (e.g. by a resolver handing out a cluster it keeps).
impl<C: Cluster + ?Sized> Cluster for &C {
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        (**self).get(object, from)
    }
    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        (**self).list(kind, namespace, options)
    }
    fn get_json(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Json>, ApiError> {
        (**self).get_json(object, from)
    }
    fn list_json(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Json>, ApiError> {
        (**self).list_json(kind, namespace, options)
    }
    fn apply(&self, object: &Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        (**self).apply(object, owner)
    }
    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        (**self).create(object)
    }
    fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        (**self).patch(object, patch, resource_version)
    }
    fn delete_with(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError> {
        (**self).delete_with(object, options)
    }
    fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        (**self).served(kind)
    }
    fn create_subresource(
        &self,
        object: &ObjectRef,
        subresource: &str,
        body: &Value,
    ) -> Result<Value, ApiError> {
        (**self).create_subresource(object, subresource, body)
    }
    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        (**self).update_status(object)
    }
    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        (**self).record_event(regarding, event)
    }
    fn open_target(&self, name: &str) -> Result<Box<dyn Cluster + '_>, TargetError> {
        (**self).open_target(name)
    }
}

fn stamp_kind<K: Resource>(body: &mut Value) {
    if let Value::Object(map) = body {
        map.insert("apiVersion".into(), Value::String(K::API_VERSION.into()));
        map.insert("kind".into(), Value::String(K::KIND.into()));
    }
}

fn stamp<K: Resource>(body: &mut Value, namespace: Option<&str>, name: &str) {
    if !body.is_object() {
        *body = Value::Object(Default::default());
    }
    stamp_kind::<K>(body);
    if let Value::Object(map) = body {
        let metadata = map
            .entry("metadata")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Value::Object(meta) = metadata {
            meta.insert("name".into(), Value::String(name.into()));
            if let Some(ns) = namespace {
                meta.insert("namespace".into(), Value::String(ns.into()));
            }
        }
    }
}

fn decode<K: DeserializeOwned>(what: &str, value: Value) -> Result<K> {
    serde_json::from_value(value).map_err(|source| Error::Decode {
        what: what.to_owned(),
        source,
    })
}

fn decode_json<K: DeserializeOwned>(what: &str, json: &Json) -> Result<K> {
    json.decode().map_err(|source| Error::Decode {
        what: what.to_owned(),
        source,
    })
}

fn encode<K: Serialize>(what: &str, value: &K) -> Result<Value> {
    serde_json::to_value(value).map_err(|source| Error::Encode {
        what: what.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    #[test]
    fn a_borrowed_cluster_opens_the_targets_of_the_cluster_it_borrows() {
        let target = std::rc::Rc::new(crate::testing::FakeCluster::new());
        let own = crate::testing::FakeCluster::new().with_target("edge", "x.io", target);
        let borrowed: &dyn Cluster = &own;
        let boxed: Box<dyn Cluster + '_> = Box::new(borrowed);
        assert!(boxed.open_target("edge").is_ok());
        let missing = boxed.open_target("nowhere").err().expect("not registered");
        assert!(
            matches!(missing, TargetError::NotRegistered(_)),
            "{missing}"
        );
    }

    #[test]
    fn apply_with_change_says_whether_the_server_stored_a_change() {
        let cluster = crate::testing::FakeCluster::new();
        let body = |value: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cm", "namespace": "ns"}, "data": {"a": value}})
        };
        let cases = [("1", true), ("1", false), ("2", true), ("2", false)];
        for (value, changed) in cases {
            let applied = cluster
                .apply_with_change(&body(value), None)
                .expect("applies");
            assert_eq!(applied.changed, changed, "apply of {value}");
            assert_eq!(applied.object["data"]["a"], value);
        }
        // A cache behind the server reports a change it cannot rule out.
        cluster.freeze_cache();
        cluster.apply(&body("3"), None).expect("applies");
        let applied = cluster
            .apply_with_change(&body("3"), None)
            .expect("applies");
        assert!(applied.changed, "the cache still holds 2");
    }

    #[test]
    fn apply_with_change_of_a_body_without_a_name_fails_naming_the_field() {
        let cluster = crate::testing::FakeCluster::new();
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
        let error = cluster.apply_with_change(&body, None).expect_err("no name");
        assert!(error.to_string().contains("metadata.name"), "{error}");
    }

    #[test]
    fn an_apply_body_is_stamped_with_kind_name_and_namespace() {
        let mut body = json!({"data": {"a": "1"}});
        stamp::<ConfigMap>(&mut body, Some("ns"), "cm");
        assert_eq!(
            body,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cm", "namespace": "ns"}, "data": {"a": "1"}})
        );
    }

    #[test]
    fn a_decode_failure_names_the_object() {
        let err = decode::<ConfigMap>("ConfigMap ns/cm", json!({"data": 3})).expect_err("bad data");
        assert!(
            err.to_string()
                .starts_with("cannot decode ConfigMap ns/cm:"),
            "{err}"
        );
    }
}
