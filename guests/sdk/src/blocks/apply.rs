//! EnsureObject: the server-side apply every Ensure function goes through.
//!
//! The host's `apply` already does what CobaltCore's EnsureObject does by hand: it stamps
//! the GVK, sets the controller owner reference on every apply, forces ownership under the
//! plugin's field manager, retries on conflict and returns the server's response. What is
//! left here is the body: only the fields the builder set, never the server's.
//!
//! DECISION: the field manager is the plugin's, declared in its
//! [`Description`](crate::Description); plugins assembled from these blocks declare
//! [`FIELD_MANAGER`] so their field ownership matches CobaltCore's.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{Metadata, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::cluster::{Cluster, ClusterExt, Owner, ReadFrom};
use crate::error::{Error, Result};

/// The field manager shared by every Ensure function (`apply.FieldManager`).
pub const FIELD_MANAGER: &str = "cobaltcore-operator";

/// Metadata fields the server owns; an apply body never carries them.
const SERVER_METADATA: &[&str] = &[
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// The name and namespace of a typed object; an error naming the field when it has no
/// name.
pub fn name_of<K: Resource + Metadata<Ty = ObjectMeta>>(
    object: &K,
) -> Result<(Option<&str>, &str)> {
    let meta = object.metadata();
    let name = meta.name.as_deref().ok_or_else(|| Error::MissingField {
        what: format!("{} <unnamed>", K::KIND),
        field: "metadata.name",
    })?;
    Ok((meta.namespace.as_deref(), name))
}

/// The server-side apply body of `object`: its serialized fields without `status` and
/// without the metadata the server owns. Unset optional fields are not serialized, so the
/// field manager owns only what the builder set.
///
/// Fields k8s-openapi types mark required (a Deployment's `spec.selector` and
/// `spec.template`, a container's `name`) are always serialized, empty or not: pass whole
/// objects whose builder sets them. A partial body (one field of someone else's object)
/// is built as JSON and applied with [`ClusterExt::apply_typed`] instead.
pub fn apply_body<K: Resource + Serialize>(object: &K) -> Result<Value> {
    let mut body = serde_json::to_value(object).map_err(|source| Error::Encode {
        what: K::KIND.to_owned(),
        source,
    })?;
    if let Value::Object(map) = &mut body {
        map.remove("status");
        if let Some(Value::Object(meta)) = map.get_mut("metadata") {
            for field in SERVER_METADATA {
                meta.remove(*field);
            }
            // Owner references are the host's: it sets the controller reference itself.
            meta.remove("ownerReferences");
        }
    }
    Ok(body)
}

/// The annotation carrying the SHA-256 of the apply body an object was last applied with.
pub const APPLIED_ANNOTATION: &str = "wasm-operator.dev/applied-sha256";

/// Creates or updates `object` by server-side apply with `owner` as controller owner, and
/// returns the object as the server stored it (fresh status included).
///
/// A converged object is not applied at all: when the cached object carries
/// [`APPLIED_ANNOTATION`] with the hash of this very body (and owner) and still holds every
/// field of the body with its value, the cached object is returned and nothing is sent.
/// Any change of the body changes the hash, so a field the builder stopped setting is
/// released by the next apply; a field of the body someone else changed breaks the subset
/// and is applied back.
pub fn ensure_object<C, K>(cluster: &C, owner: &Owner, object: &K) -> Result<K>
where
    C: Cluster + ?Sized,
    K: Resource + Metadata<Ty = ObjectMeta> + Serialize + DeserializeOwned,
{
    let (namespace, name) = name_of(object)?;
    let mut body = apply_body(object)?;
    let hash = applied_hash(&body, owner);
    let target = crate::object::ObjectRef::of::<K>(namespace, name);
    if let Some(cached) = cluster.get(&target, ReadFrom::Cache).ok().flatten()
        && cached.pointer(&format!(
            "/metadata/annotations/{}",
            APPLIED_ANNOTATION.replace('/', "~1")
        )) == Some(&Value::String(hash.clone()))
        && holds(&cached, &body)
    {
        return serde_json::from_value(cached).map_err(|source| Error::Decode {
            what: target.to_string(),
            source,
        });
    }
    if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Value::Object(annotations) = annotations {
            annotations.insert(APPLIED_ANNOTATION.to_owned(), Value::String(hash));
        }
    }
    cluster.apply_typed::<K>(namespace, name, body, Some(owner))
}

/// SHA-256 hex of `body` and the owner's uid.
fn applied_hash(body: &Value, owner: &Owner) -> String {
    use sha2::{Digest, Sha256};
    let mut digest = Sha256::new();
    digest.update(body.to_string().as_bytes());
    digest.update(b"\n");
    digest.update(owner.uid.as_bytes());
    hex::encode(digest.finalize())
}

/// Whether `object` holds every field of `body` with its value: maps by key, lists item by
/// item (same length), anything else equal.
pub(crate) fn holds(object: &Value, body: &Value) -> bool {
    match (object, body) {
        (Value::Object(o), Value::Object(b)) => b
            .iter()
            .all(|(k, v)| o.get(k).is_some_and(|ov| holds(ov, v))),
        (Value::Array(o), Value::Array(b)) => {
            o.len() == b.len() && o.iter().zip(b).all(|(ov, bv)| holds(ov, bv))
        }
        (o, b) => o == b,
    }
}

/// The controller owner reference of `owner`, for objects created rather than applied.
pub fn controller_reference(
    owner: &Owner,
) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
    k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        api_version: owner.api_version.clone(),
        kind: owner.kind.clone(),
        name: owner.name.clone(),
        uid: owner.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Whether `meta` names `owner_uid` as its controller.
pub fn is_controlled_by(meta: &ObjectMeta, owner_uid: &str) -> bool {
    meta.owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && r.uid == owner_uid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeCluster, owner};
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn config_map() -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("cm".into()),
                namespace: Some("ns".into()),
                resource_version: Some("7".into()),
                uid: Some("u".into()),
                ..Default::default()
            },
            data: Some(BTreeMap::from([("a".into(), "1".into())])),
            ..Default::default()
        }
    }

    #[test]
    fn a_converged_object_is_not_sent_again_and_a_changed_or_drifted_one_is() {
        let cluster = FakeCluster::new();
        ensure_object(&cluster, &owner(), &config_map()).expect("applies");
        let stored = cluster.server("ConfigMap", "cm").expect("stored");
        assert_eq!(
            stored["metadata"]["annotations"][APPLIED_ANNOTATION]
                .as_str()
                .map(str::len),
            Some(64)
        );
        cluster.clear_calls();
        ensure_object(&cluster, &owner(), &config_map()).expect("converged");
        assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
        // Someone else changes a field the body sets: it is applied back.
        cluster.change("ConfigMap", "cm", |c| c["data"]["a"] = json!("2"));
        ensure_object(&cluster, &owner(), &config_map()).expect("applies");
        assert_eq!(
            cluster.server("ConfigMap", "cm").expect("stored")["data"]["a"],
            "1"
        );
        // A body without a field it had is applied, so the field is released.
        cluster.clear_calls();
        let mut fewer = config_map();
        fewer.data = None;
        ensure_object(&cluster, &owner(), &fewer).expect("applies");
        assert_eq!(cluster.writes().len(), 1, "{:?}", cluster.write_log());
    }

    #[test]
    fn holding_a_body_is_a_subset_check_with_lists_item_by_item() {
        let table = [
            (
                json!({"a": 1, "b": {"c": 2, "d": 3}}),
                json!({"b": {"c": 2}}),
                true,
            ),
            (
                json!({"l": [{"x": 1, "y": 2}]}),
                json!({"l": [{"x": 1}]}),
                true,
            ),
            (
                json!({"l": [{"x": 1}, {"x": 2}]}),
                json!({"l": [{"x": 1}]}),
                false,
            ),
            (json!({"a": 1}), json!({"a": 2}), false),
            (json!({"a": 1}), json!({"b": 1}), false),
        ];
        for (object, body, expected) in table {
            assert_eq!(holds(&object, &body), expected, "{object} ⊇ {body}");
        }
    }

    #[test]
    fn the_shared_field_manager_is_cobaltcore_operator() {
        assert_eq!(FIELD_MANAGER, "cobaltcore-operator");
    }

    #[test]
    fn an_apply_body_carries_only_the_fields_the_builder_set() {
        let body = apply_body(&config_map()).expect("encodes");
        assert_eq!(
            body,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cm", "namespace": "ns"}, "data": {"a": "1"}})
        );
    }

    #[test]
    fn ensure_object_applies_once_with_the_owner_and_returns_the_stored_object() {
        let cluster = FakeCluster::new();
        let stored = ensure_object(&cluster, &owner(), &config_map()).expect("applies");
        assert!(stored.metadata.uid.is_some());
        assert!(is_controlled_by(&stored.metadata, &owner().uid));
        assert_eq!(cluster.writes().len(), 1);
    }

    #[test]
    fn a_converged_object_is_applied_without_a_write() {
        let cluster = FakeCluster::new();
        ensure_object(&cluster, &owner(), &config_map()).expect("applies");
        ensure_object(&cluster, &owner(), &config_map()).expect("applies again");
        assert_eq!(cluster.writes().len(), 1, "{:?}", cluster.calls());
    }

    #[test]
    fn an_object_without_a_name_is_refused_naming_the_field() {
        let err = ensure_object(&FakeCluster::new(), &owner(), &ConfigMap::default())
            .expect_err("no name");
        assert_eq!(err.to_string(), "ConfigMap <unnamed> has no metadata.name");
    }
}
