//! The field indexes that map a change of an object the Barbican does not own back to the
//! Barbicans using it: its MariaDB, its credentials Secrets, and — through the
//! BarbicanSecretStores naming it — the credentials and CA Secrets those stores name.

use serde_json::Value;
use wasm_operator_sdk::object::object_key;

/// On Barbicans: `namespace/name` of the MariaDB `spec.database.clusterRef` names.
pub const MARIADB: &str = "mariadb";
/// On Barbicans: `namespace/name` of the database and service-user Secrets.
pub const SECRET_REFS: &str = "secret-refs";
/// On BarbicanSecretStores: `namespace/name` of the credentials and CA Secrets (a managed
/// store's `{store}-approle`; a brownfield store's named Secrets).
pub const STORE_SECRETS: &str = "store-secrets";

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
        STORE_SECRETS => {
            let mut keys = named_at(
                object,
                &[
                    "/spec/openBao/server/credentialsSecretRef/name",
                    "/spec/openBao/server/caBundleSecretRef/name",
                ],
            );
            let namespace = object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str);
            if object.pointer("/spec/openBao/instanceRef").is_some()
                && let Some(store) = object.pointer("/metadata/name").and_then(Value::as_str)
            {
                keys.push(object_key(namespace, &format!("{store}-approle")));
            }
            keys
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_barbican_is_indexed_by_its_mariadb_and_secrets_and_a_store_by_its_secrets() {
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
                object(
                    json!({"openBao": {"server": {"credentialsSecretRef": {"name": "creds"},
                                                     "caBundleSecretRef": {"name": "ca"}}}}),
                ),
                STORE_SECRETS,
                vec!["a/ca", "a/creds"],
            ),
            (
                json!({"metadata": {"namespace": "a", "name": "vault"},
                       "spec": {"openBao": {"instanceRef": {"name": "bao"}}}}),
                STORE_SECRETS,
                vec!["a/vault-approle"],
            ),
            (object(json!({"openBao": {}})), "unknown", vec![]),
        ];
        for (object, index, want) in table {
            assert_eq!(keys(index, &object), want, "{index} of {object}");
        }
    }
}
