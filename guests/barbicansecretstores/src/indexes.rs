//! The field indexes that map a change of a Barbican (or its Deployment), or of an
//! OpenBaoCluster, back to the stores concerned (facts §4: `spec.barbicanRef.name`,
//! `spec.openBao.instanceRef.name`).
//!
//! The keys are read off the JSON, so a store this version of the types would not decode
//! is still found.

use serde_json::Value;
use wasm_operator_sdk::object::object_key;

/// On BarbicanSecretStores: `namespace/name` of the Barbican `spec.barbicanRef.name`
/// names. The Barbican's Deployment has the Barbican's name, so the same key finds the
/// stores a rollout concerns.
pub const BARBICAN_REF: &str = "barbican-ref";
/// On managed BarbicanSecretStores: `namespace/name` of the OpenBaoCluster
/// `spec.openBao.instanceRef.name` names (a brownfield store has no key).
pub const INSTANCE_REF: &str = "instance-ref";

/// The keys of index `name` for the store `object`; none for another index.
pub fn keys(name: &str, object: &Value) -> Vec<String> {
    let pointer = match name {
        BARBICAN_REF => "/spec/barbicanRef/name",
        INSTANCE_REF => "/spec/openBao/instanceRef/name",
        _ => return Vec::new(),
    };
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    object
        .pointer(pointer)
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
    fn a_store_is_indexed_by_its_barbican_and_a_managed_one_by_its_instance() {
        let store = |spec: Value| json!({"metadata": {"name": "vault", "namespace": "openstack"}, "spec": spec});
        let managed = json!({"barbicanRef": {"name": "barbican"}, "openBao": {"instanceRef": {"name": "bao"}}});
        let brownfield = json!({"barbicanRef": {"name": "barbican"},
                                "openBao": {"server": {"url": "https://bao.example.com:8200"}}});
        // (index, spec, keys)
        let table = [
            (BARBICAN_REF, managed.clone(), vec!["openstack/barbican"]),
            (INSTANCE_REF, managed.clone(), vec!["openstack/bao"]),
            (BARBICAN_REF, brownfield.clone(), vec!["openstack/barbican"]),
            (INSTANCE_REF, brownfield, vec![]),
            (BARBICAN_REF, json!({"barbicanRef": {"name": ""}}), vec![]),
            (
                INSTANCE_REF,
                json!({"openBao": {"instanceRef": {"name": ""}}}),
                vec![],
            ),
            (BARBICAN_REF, json!({}), vec![]),
            ("other", managed, vec![]),
        ];
        for (index, spec, expected) in table {
            assert_eq!(
                keys(index, &store(spec.clone())),
                expected,
                "{index} {spec}"
            );
        }
    }
}
