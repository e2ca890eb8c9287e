//! The field indexes that map a change of an object the Cinder does not own back to the
//! Cinders using it: its MariaDB, its credentials Secrets, and — through the
//! CinderBackends naming it — the RBD key Secrets those backends name.

use serde_json::Value;
use wasm_operator_sdk::object::object_key;

/// On Cinders: `namespace/name` of the MariaDB `spec.database.clusterRef` names.
pub const MARIADB: &str = "mariadb";
/// On Cinders: `namespace/name` of the database and service-user Secrets.
pub const SECRET_REFS: &str = "secret-refs";
/// On CinderBackends: `namespace/name` of the RBD key Secret.
pub const BACKEND_SECRETS: &str = "backend-secrets";

/// `namespace/name` of each non-empty string at `paths` of `object`, sorted, once each.
fn named_at(object: &Value, paths: &[&str]) -> Vec<String> {
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    let mut keys: Vec<String> = paths
        .iter()
        .filter_map(|path| object.pointer(path).and_then(Value::as_str))
        .filter(|n| !n.is_empty())
        .map(|n| object_key(namespace, n))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The keys of index `name` for `object`; none for another index.
pub fn keys(name: &str, object: &Value) -> Vec<String> {
    match name {
        MARIADB => named_at(object, &["/spec/database/clusterRef/name"]),
        SECRET_REFS => named_at(
            object,
            &[
                "/spec/database/secretRef/name",
                "/spec/serviceUser/secretRef/name",
            ],
        ),
        BACKEND_SECRETS => named_at(object, &["/spec/rbd/keySecretRef/name"]),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_cinder_is_indexed_by_its_mariadb_and_secrets_and_a_backend_by_its_rbd_key() {
        let object = |spec: Value| json!({"metadata": {"namespace": "a"}, "spec": spec});
        // (object, index, keys)
        let table = [
            (
                object(json!({"database": {"clusterRef": {"name": "maria"}}})),
                MARIADB,
                vec!["a/maria"],
            ),
            (
                object(json!({"database": {"host": "db.example.com"}})),
                MARIADB,
                vec![],
            ),
            (
                object(json!({"database": {"secretRef": {"name": "db"}},
                              "serviceUser": {"secretRef": {"name": "svc"}}})),
                SECRET_REFS,
                vec!["a/db", "a/svc"],
            ),
            (
                object(json!({"database": {"secretRef": {"name": "same"}},
                              "serviceUser": {"secretRef": {"name": "same"}}})),
                SECRET_REFS,
                vec!["a/same"],
            ),
            (
                object(json!({"rbd": {"keySecretRef": {"name": "ceph-key"}}})),
                BACKEND_SECRETS,
                vec!["a/ceph-key"],
            ),
            (object(json!({"nfs": {}})), "unknown", vec![]),
        ];
        for (object, index, want) in table {
            assert_eq!(keys(index, &object), want, "{index} of {object}");
        }
    }
}
