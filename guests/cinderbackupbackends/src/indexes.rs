//! The field index that maps a change of a Cinder, or of its backup Deployment, back to
//! the backup targets attached to it (facts §3.0: "parent lists satellites via field
//! index `spec.<parent>Ref.name`", here `spec.cinderRef.name`).
//!
//! A target has two keys: `namespace/{cinder}` (the Cinder it names) and
//! `namespace/{cinder}-backup` (the Cinder's backup Deployment), since the host maps a
//! watched object by its own key. The keys are read off the JSON, so a target this
//! version of the types would not decode is still found.

use serde_json::Value;
use wasm_operator_sdk::object::object_key;

/// On CinderBackupBackends: `namespace/name` of the Cinder `spec.cinderRef.name` names,
/// and of its backup Deployment `{cinder}-backup`.
pub const CINDER_REF: &str = "cinder-ref";

/// The name of the backup Deployment of Cinder `cinder`.
pub(crate) fn backup_deployment_name(cinder: &str) -> String {
    format!("{cinder}-backup")
}

/// The keys of index `name` for the target `object`; none for another index.
pub fn keys(name: &str, object: &Value) -> Vec<String> {
    if name != CINDER_REF {
        return Vec::new();
    }
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    object
        .pointer("/spec/cinderRef/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(|cinder| {
            vec![
                object_key(namespace, cinder),
                object_key(namespace, &backup_deployment_name(cinder)),
            ]
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_target_is_indexed_by_its_cinder_and_the_cinder_s_backup_deployment() {
        let target = |spec: Value| json!({"metadata": {"name": "nfsbk", "namespace": "openstack"}, "spec": spec});
        // (index, spec, keys)
        let table = [
            (
                CINDER_REF,
                json!({"cinderRef": {"name": "cinder"}}),
                vec!["openstack/cinder", "openstack/cinder-backup"],
            ),
            (CINDER_REF, json!({"cinderRef": {"name": ""}}), vec![]),
            (CINDER_REF, json!({}), vec![]),
            ("other", json!({"cinderRef": {"name": "cinder"}}), vec![]),
        ];
        for (index, spec, expected) in table {
            assert_eq!(
                keys(index, &target(spec.clone())),
                expected,
                "{index} {spec}"
            );
        }
    }
}
