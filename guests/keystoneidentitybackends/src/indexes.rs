//! The field index that maps a change of a Keystone, or of its Deployment, back to the
//! backends attached to it (facts §3.0: "parent lists satellites via field index
//! `spec.<parent>Ref.name`").
//!
//! The key is read off the JSON, so a backend this version of the types would not decode
//! is still found by its Keystone.

use serde_json::Value;
use wasm_operator_sdk::object::object_key;

/// On KeystoneIdentityBackends: `namespace/name` of the Keystone `spec.keystoneRef.name`
/// names. The Keystone's Deployment has the Keystone's name, so the same key finds the
/// backends a rollout concerns.
pub const KEYSTONE_REF: &str = "keystone-ref";

/// The keys of index `name` for the backend `object`; none for another index.
pub fn keys(name: &str, object: &Value) -> Vec<String> {
    if name != KEYSTONE_REF {
        return Vec::new();
    }
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    object
        .pointer("/spec/keystoneRef/name")
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
    fn a_backend_is_indexed_by_the_keystone_it_names_in_its_namespace() {
        let backend = |spec: Value| json!({"metadata": {"name": "corp", "namespace": "openstack"}, "spec": spec});
        // (index, spec, keys)
        let table = [
            (
                KEYSTONE_REF,
                json!({"keystoneRef": {"name": "keystone"}}),
                vec!["openstack/keystone"],
            ),
            (KEYSTONE_REF, json!({"keystoneRef": {"name": ""}}), vec![]),
            (KEYSTONE_REF, json!({}), vec![]),
            (
                "other",
                json!({"keystoneRef": {"name": "keystone"}}),
                vec![],
            ),
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
