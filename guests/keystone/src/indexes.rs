//! The field indexes that map a change of an object the Keystone does not own back to the
//! Keystones using it (facts §2.21): its MariaDB, its effective secret store, its database
//! and admin Secrets, and — through the KeystoneIdentityBackends that reference it — the
//! Secrets those backends read.
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

/// `namespace/name` of the database Secret (`spec.database.secretRef`) and the admin
/// Secret (`spec.bootstrap.adminPasswordSecretRef`): Secrets External Secrets writes, which
/// the Keystone reads but does not own.
pub const SECRET_REFS: &str = "secret-refs";

/// On KeystoneIdentityBackends: `namespace/name` of every Secret a backend reads (LDAP bind
/// credentials and CA bundle, OIDC client secret, SAML IdP metadata and SP certificate). A
/// change of such a Secret reaches the Keystone the backend's `spec.keystoneRef` names.
pub const IDENTITY_BACKEND_SECRETS: &str = "identity-backend-secrets";

/// The paths of the Secret names a KeystoneIdentityBackend reads (facts §3.2).
const IDENTITY_BACKEND_SECRET_PATHS: &[&str] = &[
    "/spec/ldap/bindCredentialsSecretRef/name",
    "/spec/ldap/tls/caBundleSecretRef/name",
    "/spec/oidc/clientSecretRef/name",
    "/spec/saml/idpMetadata/secretRef/name",
    "/spec/saml/sp/certificateSecretRef/name",
];

/// `namespace/name` of each non-empty string at `paths` of `object`, sorted, once each.
fn named_at(object: &Value, namespace: Option<&str>, paths: &[&str]) -> Vec<String> {
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

/// The keys of index `name` for `object` (a Keystone, or a KeystoneIdentityBackend for
/// [`IDENTITY_BACKEND_SECRETS`]); none for another index.
pub fn keys(name: &str, object: &Value) -> Vec<String> {
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    match name {
        SECRET_REFS => named_at(
            object,
            namespace,
            &[
                "/spec/database/secretRef/name",
                "/spec/bootstrap/adminPasswordSecretRef/name",
            ],
        ),
        IDENTITY_BACKEND_SECRETS => named_at(object, namespace, IDENTITY_BACKEND_SECRET_PATHS),
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

    #[test]
    fn a_keystone_is_indexed_by_its_database_and_admin_secrets() {
        let keystone =
            |spec: Value| json!({"metadata": {"name": "ks", "namespace": "a"}, "spec": spec});
        // (spec, keys)
        let table = [
            (
                json!({"database": {"secretRef": {"name": "db"}},
                       "bootstrap": {"adminPasswordSecretRef": {"name": "admin"}}}),
                vec!["a/admin", "a/db"],
            ),
            (
                json!({"database": {"secretRef": {"name": "shared"}},
                       "bootstrap": {"adminPasswordSecretRef": {"name": "shared"}}}),
                vec!["a/shared"],
            ),
            (
                json!({"database": {"secretRef": {"name": ""}},
                       "bootstrap": {"adminPasswordSecretRef": {"name": "admin"}}}),
                vec!["a/admin"],
            ),
            (json!({}), vec![]),
        ];
        for (spec, want) in table {
            assert_eq!(keys(SECRET_REFS, &keystone(spec.clone())), want, "{spec}");
        }
    }

    #[test]
    fn an_identity_backend_is_indexed_by_every_secret_it_reads() {
        let backend = |spec: Value| {
            json!({"kind": "KeystoneIdentityBackend",
                   "metadata": {"name": "corp", "namespace": "a"}, "spec": spec})
        };
        // (spec, keys)
        let table = [
            (
                json!({"type": "LDAP", "ldap": {
                    "bindCredentialsSecretRef": {"name": "bind"},
                    "tls": {"caBundleSecretRef": {"name": "ca"}}}}),
                vec!["a/bind", "a/ca"],
            ),
            (
                json!({"type": "OIDC", "oidc": {"clientSecretRef": {"name": "client"}}}),
                vec!["a/client"],
            ),
            (
                json!({"type": "SAML", "saml": {
                    "idpMetadata": {"secretRef": {"name": "idp"}},
                    "sp": {"certificateSecretRef": {"name": "sp"}}}}),
                vec!["a/idp", "a/sp"],
            ),
            (
                json!({"type": "SAML", "saml": {"idpMetadata": {"url": "https://idp"}}}),
                vec![],
            ),
        ];
        for (spec, want) in table {
            assert_eq!(
                keys(IDENTITY_BACKEND_SECRETS, &backend(spec.clone())),
                want,
                "{spec}"
            );
        }
    }
}
