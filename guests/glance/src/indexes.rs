//! The field indexes that map a change of an object the Glance does not own back to the
//! Glances using it: its MariaDB, its credentials Secrets, and — through the
//! GlanceBackends naming it — the S3 credentials Secrets those backends name.

use serde_json::Value;
use wasm_operator_sdk::object::object_key;

/// On Glances: `namespace/name` of the MariaDB `spec.database.clusterRef` names.
pub const MARIADB: &str = "mariadb";
/// On Glances: `namespace/name` of the database and service-user Secrets.
pub const SECRET_REFS: &str = "secret-refs";
/// On GlanceBackends: `namespace/name` of the S3 credentials Secret.
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
        BACKEND_SECRETS => named_at(object, &["/spec/s3/credentialsSecretRef/name"]),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_glance_is_indexed_by_its_mariadb_and_secrets_and_a_backend_by_its_s3_secret() {
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
                object(json!({"s3": {"credentialsSecretRef": {"name": "s3-creds"}}})),
                BACKEND_SECRETS,
                vec!["a/s3-creds"],
            ),
            (object(json!({"s3": {}})), "unknown", vec![]),
        ];
        for (object, index, want) in table {
            assert_eq!(keys(index, &object), want, "{index} of {object}");
        }
    }
}
