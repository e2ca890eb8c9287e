use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator_types::ObjectRef;

use super::MutationCache;

fn keystone(version: &str, domain_id: Option<&str>) -> Value {
    json!({"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
        "metadata": {"name": "ks", "namespace": "ns", "resourceVersion": version},
        "status": {"domainID": domain_id}})
}

fn ks() -> ObjectRef {
    ObjectRef::from_object(&keystone("1", None)).expect("complete")
}

fn read(cache: &MutationCache, cached: Option<Value>) -> Option<Value> {
    cache
        .read(&ks(), cached.map(Arc::new))
        .map(Arc::unwrap_or_clone)
}

/// The table of the module doc: what the informer holds, what a read answers.
#[test]
fn a_cache_read_answers_the_plugins_own_write_until_the_informer_holds_it() {
    let written = keystone("12", Some("d-1"));
    let cases = [
        (
            "the informer holds an older version: the written object",
            Some(keystone("11", None)),
            Some(written.clone()),
        ),
        (
            "the informer holds the written version: its object",
            Some(keystone("12", Some("d-1"))),
            Some(keystone("12", Some("d-1"))),
        ),
        (
            "the informer holds a later version: its object",
            Some(keystone("13", Some("d-2"))),
            Some(keystone("13", Some("d-2"))),
        ),
        (
            "the informer holds no object: nothing, a write never resurrects one",
            None,
            None,
        ),
        (
            "the informer's resourceVersion is no number: its object",
            Some(keystone("abc", None)),
            Some(keystone("abc", None)),
        ),
    ];
    for (case, cached, answer) in cases {
        let cache = MutationCache::default();
        cache.record(&written);
        assert_eq!(read(&cache, cached), answer, "{case}");
    }
}

#[test]
fn an_entry_goes_once_the_informer_caught_up() {
    let cache = MutationCache::default();
    cache.record(&keystone("12", Some("d-1")));
    assert_eq!(
        read(&cache, Some(keystone("12", Some("d-1")))),
        Some(keystone("12", Some("d-1")))
    );
    assert_eq!(cache.len(), 0);
    // An older object a relist delivers afterwards is served as the informer has it.
    assert_eq!(
        read(&cache, Some(keystone("11", None))),
        Some(keystone("11", None))
    );
}

#[test]
fn a_later_write_replaces_an_earlier_one_and_an_earlier_answer_never_replaces_a_later() {
    let cache = MutationCache::default();
    cache.record(&keystone("12", Some("d-1")));
    cache.record(&keystone("14", Some("d-2")));
    cache.record(&keystone("13", Some("d-3")));
    assert_eq!(
        read(&cache, Some(keystone("11", None))),
        Some(keystone("14", Some("d-2")))
    );
}

#[test]
fn a_deleted_object_is_forgotten_and_an_expired_entry_is_not_served() {
    let cache = MutationCache::default();
    cache.record(&keystone("12", Some("d-1")));
    cache.forget(&ks());
    assert_eq!(
        read(&cache, Some(keystone("11", None))),
        Some(keystone("11", None))
    );

    let expired = MutationCache::with_ttl(Duration::ZERO);
    expired.record(&keystone("12", Some("d-1")));
    assert_eq!(
        read(&expired, Some(keystone("11", None))),
        Some(keystone("11", None))
    );
    assert_eq!(expired.len(), 0);
}

#[test]
fn an_answer_without_a_numeric_resource_version_or_a_name_is_not_kept() {
    let cache = MutationCache::default();
    cache.record(&keystone("v12", Some("d-1")));
    cache.record(
        &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"resourceVersion": "3"}}),
    );
    assert_eq!(cache.len(), 0);
}

#[test]
fn a_kept_object_carries_no_managed_fields_as_the_informers() {
    let cache = MutationCache::default();
    let mut written = keystone("12", Some("d-1"));
    written["metadata"]["managedFields"] = json!([{"manager": "keystone", "operation": "Update"}]);
    cache.record(&written);
    let served = read(&cache, Some(keystone("11", None))).expect("served");
    assert!(
        served["metadata"].get("managedFields").is_none(),
        "{served}"
    );
    assert_eq!(served["status"]["domainID"], "d-1");
}

#[test]
fn a_list_answers_each_object_as_a_read_does_and_a_kind_without_writes_as_the_informer() {
    let cache = MutationCache::default();
    cache.record(&keystone("12", Some("d-1")));
    let mut other = keystone("5", None);
    other["metadata"]["name"] = json!("other");
    let listed = cache.read_all(
        "keystone.openstack.c5c3.io/v1alpha1",
        "Keystone",
        vec![Arc::new(keystone("11", None)), Arc::new(other.clone())],
    );
    let listed: Vec<Value> = listed.into_iter().map(Arc::unwrap_or_clone).collect();
    assert_eq!(listed, [keystone("12", Some("d-1")), other]);
    let secrets = cache.read_all("v1", "Secret", vec![Arc::new(keystone("11", None))]);
    assert_eq!(*secrets[0], keystone("11", None));
}
