//! IsSecretReady and GetSecretValue.

use k8s_openapi::api::core::v1::Secret;

use super::Error;
use crate::cluster::{Cluster, ClusterExt};

fn get_secret<C: Cluster + ?Sized>(
    cluster: &C,
    namespace: &str,
    name: &str,
) -> Result<Option<Secret>, Error> {
    cluster
        .get_typed(Some(namespace), name)
        .map_err(|source| Error::Get {
            what: format!("Secret {namespace}/{name}"),
            source,
        })
}

/// Whether the Secret `namespace/name` exists and its `data` holds every one of
/// `expected_keys` (none: existence only). A missing Secret is `Ok(false)`.
pub fn is_secret_ready<C: Cluster + ?Sized>(
    cluster: &C,
    namespace: &str,
    name: &str,
    expected_keys: &[&str],
) -> Result<bool, Error> {
    let Some(secret) = get_secret(cluster, namespace, name)? else {
        return Ok(false);
    };
    let data = secret.data.unwrap_or_default();
    Ok(expected_keys.iter().all(|k| data.contains_key(*k)))
}

/// The decoded value of `data_key` in the Secret `namespace/name`.
///
/// A missing Secret is [`Error::SecretNotFound`]; a missing key is [`Error::KeyNotFound`]
/// (`key not found in Secret: key "<dataKey>" in Secret <namespace>/<name>`).
pub fn get_secret_value<C: Cluster + ?Sized>(
    cluster: &C,
    namespace: &str,
    name: &str,
    data_key: &str,
) -> Result<String, Error> {
    let secret = get_secret(cluster, namespace, name)?.ok_or_else(|| Error::SecretNotFound {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
    })?;
    let value = secret
        .data
        .and_then(|mut d| d.remove(data_key))
        .ok_or_else(|| Error::KeyNotFound {
            key: data_key.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        })?;
    String::from_utf8(value.0).map_err(|_| Error::NotText {
        key: data_key.to_owned(),
        namespace: namespace.to_owned(),
        name: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;
    use crate::testing::{FakeCluster, Op};
    use serde_json::json;

    /// A Secret `ns/db` with `username` = "keystone" (base64 `a2V5c3RvbmU=`).
    fn cluster() -> FakeCluster {
        FakeCluster::new().with(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "db", "namespace": "ns"},
            "data": {"username": "a2V5c3RvbmU=", "binary": "/w=="}}))
    }

    #[test]
    fn is_secret_ready_checks_existence_and_expected_keys() {
        let cases: &[(&str, &str, &[&str], bool)] = &[
            ("a missing Secret is not ready", "other", &[], false),
            (
                "an existing Secret without expected keys is ready",
                "db",
                &[],
                true,
            ),
            (
                "an existing Secret with every expected key is ready",
                "db",
                &["username"],
                true,
            ),
            (
                "an existing Secret missing one expected key is not ready",
                "db",
                &["username", "password"],
                false,
            ),
        ];
        for (case, name, keys, ready) in cases {
            assert_eq!(
                is_secret_ready(&cluster(), "ns", name, keys).expect(case),
                *ready,
                "{case}"
            );
        }
    }

    #[test]
    fn is_secret_ready_fails_on_an_unexpected_api_failure() {
        let c = cluster().failing(Op::Get, "db", ApiError::Unavailable("down".into()));
        let err = is_secret_ready(&c, "ns", "db", &[]).expect_err("fails");
        assert_eq!(err.to_string(), "getting Secret ns/db: unavailable: down");
    }

    #[test]
    fn get_secret_value_decodes_the_value_of_the_key() {
        let value = get_secret_value(&cluster(), "ns", "db", "username").expect("present");
        assert_eq!(value, "keystone");
    }

    #[test]
    fn get_secret_value_error_conditions() {
        let err = get_secret_value(&cluster(), "ns", "gone", "username").expect_err("missing");
        assert!(
            err.is_not_found(),
            "a missing Secret is a not-found error: {err}"
        );
        let err = get_secret_value(&cluster(), "ns", "db", "password").expect_err("no key");
        assert!(err.is_key_not_found());
        assert_eq!(
            err.to_string(),
            "key not found in Secret: key \"password\" in Secret ns/db"
        );
        let err = get_secret_value(&cluster(), "ns", "db", "binary").expect_err("not text");
        assert_eq!(
            err.to_string(),
            "key \"binary\" in Secret ns/db is not UTF-8 text"
        );
    }
}
