//! The field index that maps a change of a Cinder, or of a backend's cinder-volume
//! Deployment, back to the backends it concerns (facts §3.0: "parent lists satellites via
//! field index `spec.<parent>Ref.name`", here `spec.cinderRef.name`).
//!
//! A backend has two keys: `namespace/{cinder}` (the Cinder it names) and
//! `namespace/{cinder}-volume-{name}` (its own Deployment), since the host maps a watched
//! object by its own key. The keys are read off the JSON, so a backend this version of the
//! types would not decode is still found.

use serde_json::Value;
use wasm_operator_sdk::object::object_key;

/// On CinderBackends: `namespace/name` of the Cinder `spec.cinderRef.name` names, and of
/// the backend's Deployment `{cinder}-volume-{name}`.
pub const CINDER_REF: &str = "cinder-ref";

/// The name of the cinder-volume Deployment of backend `backend` of Cinder `cinder`.
pub(crate) fn volume_deployment_name(cinder: &str, backend: &str) -> String {
    format!("{cinder}-volume-{backend}")
}

/// The keys of index `name` for the backend `object`; none for another index.
pub fn keys(name: &str, object: &Value) -> Vec<String> {
    if name != CINDER_REF {
        return Vec::new();
    }
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
    };
    let namespace = text("/metadata/namespace");
    let Some(cinder) = text("/spec/cinderRef/name") else {
        return Vec::new();
    };
    let mut keys = vec![object_key(namespace, cinder)];
    if let Some(backend) = text("/metadata/name") {
        let deployment = volume_deployment_name(cinder, backend);
        keys.push(object_key(namespace, &deployment));
    }
    keys
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_backend_is_indexed_by_its_cinder_and_its_volume_deployment() {
        let backend = |name: Value, spec: Value| json!({"metadata": {"name": name, "namespace": "openstack"}, "spec": spec});
        // (index, name, spec, keys)
        let table = [
            (
                CINDER_REF,
                json!("nfs-a"),
                json!({"cinderRef": {"name": "cinder"}}),
                vec!["openstack/cinder", "openstack/cinder-volume-nfs-a"],
            ),
            (
                CINDER_REF,
                json!("nfs-a"),
                json!({"cinderRef": {"name": ""}}),
                vec![],
            ),
            (CINDER_REF, json!("nfs-a"), json!({}), vec![]),
            (
                CINDER_REF,
                json!(null),
                json!({"cinderRef": {"name": "cinder"}}),
                vec!["openstack/cinder"],
            ),
            (
                "other",
                json!("nfs-a"),
                json!({"cinderRef": {"name": "cinder"}}),
                vec![],
            ),
        ];
        for (index, name, spec, expected) in table {
            assert_eq!(
                keys(index, &backend(name.clone(), spec.clone())),
                expected,
                "{index} {name} {spec}"
            );
        }
    }
}
