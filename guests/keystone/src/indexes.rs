//! The field indexes that map a change of an object the Keystone does not own back to the
//! Keystones using it (facts §2.21): its MariaDB, and its effective secret store.
//!
//! Keys are read off the JSON without decoding the whole spec, so a store or a MariaDB
//! still maps to a Keystone this version of the types would not decode.

use serde_json::Value;
use wasm_operator_sdk::blocks::secrets::store::CLUSTER_SECRET_STORE;
use wasm_operator_sdk::blocks::secrets::{SecretStoreRefSpec, effective_store_ref};
use wasm_operator_sdk::object::object_key;

/// `namespace/name` of the MariaDB `spec.database.clusterRef` names.
pub const MARIADB: &str = "mariadb";

/// The key of the effective store: `name` of a ClusterSecretStore, `namespace/name` of a
/// SecretStore.
pub const SECRET_STORE: &str = "secret-store";

/// The keys of index `name` for the Keystone `object`; none for another index.
pub fn keys(name: &str, object: &Value) -> Vec<String> {
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    match name {
        MARIADB => object
            .pointer("/spec/database/clusterRef/name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(|n| vec![object_key(namespace, n)])
            .unwrap_or_default(),
        SECRET_STORE => {
            let reference: Option<SecretStoreRefSpec> = object
                .pointer("/spec/secretStoreRef")
                .and_then(|r| serde_json::from_value(r.clone()).ok());
            let store = effective_store_ref(reference.as_ref());
            if store.kind == CLUSTER_SECRET_STORE {
                vec![store.name]
            } else {
                vec![object_key(namespace, &store.name)]
            }
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_keystone_is_indexed_by_its_mariadb_and_its_effective_store() {
        let keystone =
            |spec: Value| json!({"metadata": {"name": "ks", "namespace": "a"}, "spec": spec});
        // (spec, index, keys)
        let table = [
            (
                json!({"database": {"clusterRef": {"name": "maria"}}}),
                MARIADB,
                vec!["a/maria"],
            ),
            (
                json!({"database": {"host": "db.example.com"}}),
                MARIADB,
                vec![],
            ),
            (json!({}), SECRET_STORE, vec!["openbao-cluster-store"]),
            (
                json!({"secretStoreRef": {"kind": "SecretStore", "name": "vault"}}),
                SECRET_STORE,
                vec!["a/vault"],
            ),
            (
                json!({"secretStoreRef": {"kind": "ClusterSecretStore", "name": "shared"}}),
                SECRET_STORE,
                vec!["shared"],
            ),
            (
                json!({"database": {"clusterRef": {"name": "maria"}}}),
                "other",
                vec![],
            ),
        ];
        for (spec, index, want) in table {
            assert_eq!(keys(index, &keystone(spec.clone())), want, "{index} {spec}");
        }
    }
}
