use serde_json::{Value, json};

use super::*;
use crate::blocks::config::configmap::content_hash;
use crate::object::ObjectRef;
use crate::testing::{Call, FakeCluster, Op, owner};

fn data(entries: &[(&str, &[u8])]) -> BTreeMap<String, ByteString> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), ByteString(v.to_vec())))
        .collect()
}

fn domains() -> BTreeMap<String, ByteString> {
    data(&[("keystone.corp.conf", b"[ldap]\nurl = ldap://x\n")])
}

/// A Secret stored by someone else under `name`, holding `data`.
fn existing(
    name: &str,
    data: &BTreeMap<String, ByteString>,
    owner_uid: Option<&str>,
    controller: bool,
    immutable: bool,
) -> Value {
    let mut secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": "ns"},
        "data": serde_json::to_value(data).expect("encodes"), "immutable": immutable});
    if let Some(uid) = owner_uid {
        secret["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "Keystone",
            "name": "keystone", "uid": uid, "controller": controller}]);
    }
    secret
}

#[test]
fn the_secret_is_immutable_opaque_labelled_owned_and_named_base_dash_hash() {
    let cluster = FakeCluster::new();
    let name = create_immutable_secret(&cluster, &owner(), "keystone-domains", "ns", &domains())
        .expect("creates");
    assert_eq!(
        name,
        format!("keystone-domains-{}", secret_content_hash(&domains()))
    );
    let stored = cluster
        .object(&ObjectRef::of::<Secret>(Some("ns"), &name))
        .expect("stored");
    assert_eq!(stored["immutable"], true);
    assert_eq!(stored["type"], "Opaque");
    assert_eq!(
        stored["metadata"]["labels"]["cobaltcore.c5c3.io/config-base"],
        "keystone-domains"
    );
    assert_eq!(stored["metadata"]["ownerReferences"][0]["uid"], "owner-uid");
    assert_eq!(stored["metadata"]["ownerReferences"][0]["controller"], true);
    assert_eq!(
        cluster.secret_data(&name)["keystone.corp.conf"],
        b"[ldap]\nurl = ldap://x\n"
    );
}

#[test]
fn a_secret_is_hashed_as_a_config_map_of_the_same_entries_and_binary_values_count() {
    let text = BTreeMap::from([
        ("a".to_owned(), "1".to_owned()),
        ("b".to_owned(), "2".to_owned()),
    ]);
    assert_eq!(
        secret_content_hash(&data(&[("a", b"1"), ("b", b"2")])),
        content_hash(&text)
    );
    assert_ne!(
        secret_content_hash(&data(&[("k", &[0xff, 0x00])])),
        secret_content_hash(&data(&[("k", &[0xff, 0x01])])),
        "bytes that are not UTF-8 are hashed as they are"
    );
}

/// What creating over an existing Secret should give.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Want {
    Accepted,
    NotControlled,
    OtherContent,
}

#[test]
fn an_existing_secret_of_the_name_is_accepted_only_when_it_is_the_owners_immutable_secret_of_this_data()
 {
    let name = immutable_secret_name("keystone-domains", &domains());
    let other = data(&[("keystone.corp.conf", b"[ldap]\nurl = ldap://evil\n")]);
    let cases: Vec<(&str, Value, Want)> = vec![
        (
            "the owner's immutable Secret of this data is accepted",
            existing(&name, &domains(), Some("owner-uid"), true, true),
            Want::Accepted,
        ),
        (
            "a Secret without an owner reference is refused",
            existing(&name, &domains(), None, true, true),
            Want::NotControlled,
        ),
        (
            "a Secret controlled by another owner is refused",
            existing(&name, &domains(), Some("someone-else"), true, true),
            Want::NotControlled,
        ),
        (
            "a Secret the owner owns but does not control is refused",
            existing(&name, &domains(), Some("owner-uid"), false, true),
            Want::NotControlled,
        ),
        (
            "a Secret the owner controls holding other data is refused",
            existing(&name, &other, Some("owner-uid"), true, true),
            Want::OtherContent,
        ),
        (
            "a mutable Secret the owner controls is refused",
            existing(&name, &domains(), Some("owner-uid"), true, false),
            Want::OtherContent,
        ),
    ];
    for (case, stored, want) in cases {
        let cluster = FakeCluster::new().with(stored);
        let got = create_immutable_secret(&cluster, &owner(), "keystone-domains", "ns", &domains());
        match (&got, want) {
            (Ok(got), Want::Accepted) => assert_eq!(*got, name, "{case}"),
            (Err(err @ Error::NotControlled { owner, .. }), Want::NotControlled) => {
                assert_eq!(owner, "Keystone keystone", "{case}");
                assert_eq!(
                    err.to_string(),
                    format!(
                        "Secret ns/{name} already exists and is not controlled by Keystone keystone"
                    ),
                    "{case}"
                );
            }
            (Err(err @ Error::OtherContent { .. }), Want::OtherContent) => assert_eq!(
                err.to_string(),
                format!("Secret ns/{name} already exists but does not hold this data immutably"),
                "{case}"
            ),
            (got, want) => panic!("{case}: got {got:?}, want {want:?}"),
        }
        assert_eq!(
            cluster.names("Secret"),
            std::slice::from_ref(&name),
            "{case}: the existing Secret is left as it is"
        );
        let read_past_cache = cluster.calls().iter().any(|c| {
            matches!(c,
            Call::Get(r, crate::ReadFrom::Server) if r.name == name)
        });
        if matches!(want, Want::Accepted) {
            // The cache shows the owner's Secret of this data: no request at all.
            assert!(
                cluster.writes().is_empty(),
                "{case}: {:?}",
                cluster.writes()
            );
            assert!(!read_past_cache, "{case}");
        } else {
            assert!(
                read_past_cache,
                "{case}: the existing Secret is read past the cache"
            );
        }
    }
}

#[test]
fn creating_the_same_secret_twice_gives_the_same_name_and_one_secret() {
    let cluster = FakeCluster::new();
    let first = create_immutable_secret(&cluster, &owner(), "b", "ns", &domains()).expect("1");
    cluster.clear_calls();
    let second = create_immutable_secret(&cluster, &owner(), "b", "ns", &domains()).expect("2");
    assert_eq!(first, second);
    assert_eq!(cluster.names("Secret"), [first]);
    assert!(
        cluster.writes().is_empty(),
        "the second call finds it in the cache: {:?}",
        cluster.writes()
    );
}

#[test]
fn any_other_create_failure_is_an_error_naming_the_secret() {
    let name = immutable_secret_name("b", &domains());
    let cluster = FakeCluster::new().failing(Op::Create, &name, ApiError::Forbidden("no".into()));
    let err =
        create_immutable_secret(&cluster, &owner(), "b", "ns", &domains()).expect_err("forbidden");
    assert!(
        matches!(
            &err,
            Error::Create {
                source: crate::Error::Api(ApiError::Forbidden(_)),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("creating Secret ns/{name}: forbidden: no")
    );
}
