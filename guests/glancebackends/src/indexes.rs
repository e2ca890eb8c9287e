//! The field index that maps a change of a Glance, or of its Deployment, back to the
//! backends attached to it (facts §3.0: "parent lists satellites via field index
//! `spec.<parent>Ref.name`", here `spec.glanceRef.name`).
//!
//! The key is read off the JSON, so a backend this version of the types would not decode
//! is still found by its Glance.

use serde_json::Value;
use wasm_operator_sdk::object::object_key;

/// On GlanceBackends: `namespace/name` of the Glance `spec.glanceRef.name` names. The
/// Glance's Deployment has the Glance's name, so the same key finds the backends a
/// rollout concerns.
pub const GLANCE_REF: &str = "glance-ref";

/// The keys of index `name` for the backend `object`; none for another index.
pub fn keys(name: &str, object: &Value) -> Vec<String> {
    if name != GLANCE_REF {
        return Vec::new();
    }
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    object
        .pointer("/spec/glanceRef/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(|n| vec![object_key(namespace, n)])
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_backend_is_indexed_by_the_glance_it_names_in_its_namespace() {
        let backend = |spec: Value| json!({"metadata": {"name": "images", "namespace": "openstack"}, "spec": spec});
        // (index, spec, keys)
        let table = [
            (
                GLANCE_REF,
                json!({"glanceRef": {"name": "glance"}}),
                vec!["openstack/glance"],
            ),
            (GLANCE_REF, json!({"glanceRef": {"name": ""}}), vec![]),
            (GLANCE_REF, json!({}), vec![]),
            ("other", json!({"glanceRef": {"name": "glance"}}), vec![]),
        ];
        for (index, spec, expected) in table {
            assert_eq!(
                keys(index, &backend(spec.clone())),
                expected,
                "{index} {spec}"
            );
        }
    }
}
