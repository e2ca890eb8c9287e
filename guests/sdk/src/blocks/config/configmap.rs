//! Immutable ConfigMaps named by a hash of their content (CreateImmutableConfigMap).
//!
//! A change of content is a change of name, so a Deployment that mounts the ConfigMap by
//! name rolls its pods. Each ConfigMap carries the [`CONFIG_BASE_LABEL`] with its base name,
//! which is how [`super::prune`] finds its history.
//!
//! DECISION: a ConfigMap that already exists under the computed name is success, whoever
//! owns it — the common-packages spec's rule. (Newer CobaltCore also checks that the
//! existing one is controlled by the same owner; the spec does not ask for that.)

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;

use super::immutable;
pub use super::immutable::CONFIG_BASE_LABEL;
use crate::cluster::{Cluster, ClusterExt, Owner};
use crate::error::ApiError;

/// Why creating an immutable ConfigMap failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API server refused the create for a reason other than AlreadyExists.
    #[error("creating ConfigMap {namespace}/{name}: {source}")]
    Create {
        namespace: String,
        name: String,
        #[source]
        source: crate::Error,
    },
}

/// The first 8 hex characters of the SHA-256 over `data`, keys sorted, each entry written
/// as `<len(key)>:<key>=<len(value)>:<value>\n` so that entries delimit themselves whatever
/// they contain (see [`super::immutable`]).
pub fn content_hash(data: &BTreeMap<String, String>) -> String {
    immutable::hash_entries(data.iter().map(|(k, v)| (k.as_str(), v.as_bytes())))
}

/// The name of the immutable ConfigMap for `data`: `<base_name>-<hash>`.
pub fn immutable_name(base_name: &str, data: &BTreeMap<String, String>) -> String {
    immutable::name_for(base_name, &content_hash(data))
}

/// The ConfigMap [`create_immutable_config_map`] creates.
pub fn immutable_config_map(
    owner: &Owner,
    base_name: &str,
    namespace: &str,
    data: &BTreeMap<String, String>,
) -> ConfigMap {
    ConfigMap {
        metadata: immutable::metadata(owner, base_name, immutable_name(base_name, data), namespace),
        data: Some(data.clone()),
        immutable: Some(true),
        ..Default::default()
    }
}

/// Creates the immutable ConfigMap `<base_name>-<hash>` holding `data`, controlled by
/// `owner` and labelled with its base name, and returns its name. One that already exists
/// (AlreadyExists, or already in the cache, when nothing is sent) is success: the same
/// data always gives the same name.
pub fn create_immutable_config_map<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    base_name: &str,
    namespace: &str,
    data: &BTreeMap<String, String>,
) -> Result<String, Error> {
    let config_map = immutable_config_map(owner, base_name, namespace, data);
    let name = immutable_name(base_name, data);
    // One in the cache is there already: no request at all.
    let cached = crate::object::ObjectRef::of::<ConfigMap>(Some(namespace), &name);
    if matches!(
        cluster.get(&cached, crate::cluster::ReadFrom::Cache),
        Ok(Some(_))
    ) {
        return Ok(name);
    }
    match cluster.create_typed(&config_map) {
        Ok(_) | Err(crate::Error::Api(ApiError::Conflict(_))) => Ok(name),
        Err(source) => Err(Error::Create {
            namespace: namespace.to_owned(),
            name,
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::ObjectRef;
    use crate::testing::{Call, FakeCluster, Op, owner};
    use sha2::{Digest, Sha256};

    fn data(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_hash_is_eight_hex_characters_of_the_sha256_over_sorted_entries() {
        // SHA-256 of "1:a=1:1\n1:b=1:2\n".
        let expected = {
            let digest = Sha256::digest(b"1:a=1:1\n1:b=1:2\n");
            hex::encode(digest)[..8].to_owned()
        };
        let hash = content_hash(&data(&[("b", "2"), ("a", "1")]));
        assert_eq!(hash, expected);
        assert_eq!(hash.len(), 8);
        assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn the_same_data_always_gives_the_same_hash() {
        let a = data(&[("keystone.conf", "[DEFAULT]\n"), ("policy.yaml", "{}")]);
        assert_eq!(content_hash(&a), content_hash(&a.clone()));
    }

    #[test]
    fn different_data_gives_a_different_hash() {
        let cases = [
            ("a changed value", data(&[("k", "v2")])),
            ("a changed key", data(&[("k2", "v")])),
            ("an added key", data(&[("k", "v"), ("x", "")])),
            (
                "a boundary shifted between key and value",
                data(&[("k=", "v")]),
            ),
        ];
        let base = content_hash(&data(&[("k", "v")]));
        for (case, other) in cases {
            assert_ne!(content_hash(&other), base, "{case}");
        }
    }

    #[test]
    fn the_config_map_is_immutable_labelled_owned_and_named_base_dash_hash() {
        let d = data(&[("keystone.conf", "x")]);
        let cluster = FakeCluster::new();
        let name = create_immutable_config_map(&cluster, &owner(), "keystone-config", "ns", &d)
            .expect("creates");
        assert_eq!(name, format!("keystone-config-{}", content_hash(&d)));
        let stored = cluster
            .object(&ObjectRef::of::<ConfigMap>(Some("ns"), &name))
            .expect("stored");
        assert_eq!(stored["immutable"], true);
        assert_eq!(
            stored["metadata"]["labels"][CONFIG_BASE_LABEL],
            "keystone-config"
        );
        assert_eq!(stored["metadata"]["ownerReferences"][0]["uid"], "owner-uid");
        assert_eq!(stored["metadata"]["ownerReferences"][0]["controller"], true);
        assert_eq!(stored["data"]["keystone.conf"], "x");
    }

    #[test]
    fn an_existing_config_map_of_the_same_name_is_success() {
        let d = data(&[("k", "v")]);
        let cluster = FakeCluster::new();
        let first = create_immutable_config_map(&cluster, &owner(), "b", "ns", &d).expect("1");
        let second = create_immutable_config_map(&cluster, &owner(), "b", "ns", &d).expect("2");
        assert_eq!(first, second);
        assert_eq!(cluster.names("ConfigMap"), [first]);
    }

    #[test]
    fn any_other_create_failure_is_an_error_naming_the_config_map() {
        let d = data(&[("k", "v")]);
        let name = immutable_name("b", &d);
        let cluster =
            FakeCluster::new().failing(Op::Create, &name, ApiError::Forbidden("no".into()));
        let err =
            create_immutable_config_map(&cluster, &owner(), "b", "ns", &d).expect_err("forbidden");
        assert_eq!(
            err.to_string(),
            format!("creating ConfigMap ns/{name}: forbidden: no")
        );
        assert!(cluster.calls().iter().any(|c| matches!(c, Call::Create(_))));
    }

    #[test]
    fn a_config_map_already_in_the_cache_is_not_created_again() {
        let d = data(&[("k", "v")]);
        let cluster = FakeCluster::new();
        let name = create_immutable_config_map(&cluster, &owner(), "b", "ns", &d).expect("created");
        cluster.clear_calls();
        assert_eq!(
            create_immutable_config_map(&cluster, &owner(), "b", "ns", &d).expect("there"),
            name
        );
        assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
        assert!(!cluster.calls().is_empty(), "the cache was read");
    }
}
