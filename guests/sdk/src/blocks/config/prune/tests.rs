use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use super::*;
use crate::error::ApiError;
use crate::testing::{Call, FakeCluster, Op, owner};

const UID: &str = "owner-uid";

/// A ConfigMap named `name`, created at second `created`, controlled by `owner_uid`.
fn cm(name: &str, created: i64, owner_uid: Option<&str>) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            creation_timestamp: Some(Time(Timestamp::from_second(created).expect("time"))),
            owner_references: owner_uid.map(|uid| {
                vec![OwnerReference {
                    api_version: "v1".into(),
                    kind: "Keystone".into(),
                    name: "keystone".into(),
                    uid: uid.into(),
                    controller: Some(true),
                    block_owner_deletion: None,
                }]
            }),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn history(count: i64) -> Vec<ConfigMap> {
    (1..=count)
        .map(|i| cm(&format!("cfg-{i}"), i * 100, Some(UID)))
        .collect()
}

#[test]
fn filtering_rules_decide_which_config_maps_are_candidates() {
    // One row per row of the spec's filtering table; retain 0 prunes every candidate.
    let cases: &[(&str, ConfigMap, bool)] = &[
        (
            "a name matching the prefix owned by the owner is a candidate",
            cm("cfg-aaaa", 1, Some(UID)),
            true,
        ),
        (
            "the current ConfigMap is always excluded",
            cm("cfg-current", 1, Some(UID)),
            false,
        ),
        (
            "a name not matching the prefix is excluded",
            cm("other-aaaa", 1, Some(UID)),
            false,
        ),
        (
            "a ConfigMap without an owner reference is excluded",
            cm("cfg-aaaa", 1, None),
            false,
        ),
        (
            "a ConfigMap owned by another UID is excluded",
            cm("cfg-aaaa", 1, Some("someone-else")),
            false,
        ),
    ];
    for (case, config_map, candidate) in cases {
        let selected = select_for_pruning(
            std::slice::from_ref(config_map),
            UID,
            "cfg",
            "cfg-current",
            0,
        );
        assert_eq!(!selected.is_empty(), *candidate, "{case}");
    }
}

#[test]
fn an_owner_reference_that_is_not_the_controller_does_not_make_a_candidate() {
    let mut config_map = cm("cfg-aaaa", 1, Some(UID));
    if let Some(refs) = config_map.metadata.owner_references.as_mut() {
        refs[0].controller = Some(false);
    }
    assert!(select_for_pruning(&[config_map], UID, "cfg", "cfg-current", 0).is_empty());
}

#[test]
fn edge_cases_of_the_selection() {
    struct Case {
        name: &'static str,
        listed: Vec<ConfigMap>,
        retain: usize,
        deleted: &'static [&'static str],
    }
    let cases = [
        Case {
            name: "no historical ConfigMaps is a no-op",
            listed: vec![cm("cfg-current", 1, Some(UID))],
            retain: 3,
            deleted: &[],
        },
        Case {
            name: "fewer historical ConfigMaps than retain is a no-op",
            listed: history(2),
            retain: 3,
            deleted: &[],
        },
        Case {
            name: "exactly retain historical ConfigMaps is a no-op",
            listed: history(3),
            retain: 3,
            deleted: &[],
        },
        Case {
            name: "retain 0 deletes every historical ConfigMap and only the current survives",
            listed: [history(3), vec![cm("cfg-current", 1, Some(UID))]].concat(),
            retain: 0,
            deleted: &["cfg-3", "cfg-2", "cfg-1"],
        },
        Case {
            name: "five historical with retain 3 deletes the two oldest",
            listed: history(5),
            retain: 3,
            deleted: &["cfg-2", "cfg-1"],
        },
        Case {
            name: "an overlapping prefix does not match: cfg-extra- is not cfg-",
            listed: vec![cm("cfg-1", 100, Some(UID)), cm("cfgextra-1", 50, Some(UID))],
            retain: 0,
            deleted: &["cfg-1"],
        },
        Case {
            name: "equal creation times are ordered by name, newest name kept",
            listed: vec![cm("cfg-a", 100, Some(UID)), cm("cfg-b", 100, Some(UID))],
            retain: 1,
            deleted: &["cfg-a"],
        },
    ];
    for case in cases {
        let got = select_for_pruning(&case.listed, UID, "cfg", "cfg-current", case.retain);
        assert_eq!(got, case.deleted, "{}", case.name);
    }
}

fn stored(name: &str, base: Option<&str>, created: &str) -> serde_json::Value {
    let mut labels = BTreeMap::new();
    if let Some(base) = base {
        labels.insert(CONFIG_BASE_LABEL, base);
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": name, "namespace": "ns", "labels": labels, "creationTimestamp": created,
        "ownerReferences": [{"apiVersion": "v1", "kind": "Keystone", "name": "keystone",
            "uid": UID, "controller": true}]}})
}

fn cluster_with_history() -> FakeCluster {
    FakeCluster::new()
        .with(stored("cfg-1", Some("cfg"), "2026-01-01T00:00:01Z"))
        .with(stored("cfg-2", Some("cfg"), "2026-01-01T00:00:02Z"))
        .with(stored("cfg-3", Some("cfg"), "2026-01-01T00:00:03Z"))
        .with(stored("cfg-current", Some("cfg"), "2026-01-01T00:00:04Z"))
        .with(stored("cfg-unlabelled", None, "2026-01-01T00:00:00Z"))
}

#[test]
fn pruning_lists_by_the_base_label_and_deletes_the_oldest_beyond_retain() {
    let cluster = cluster_with_history();
    prune_immutable_config_maps(&cluster, &owner(), "cfg", "ns", "cfg-current", 1).expect("prunes");
    assert_eq!(
        cluster.names("ConfigMap"),
        ["cfg-3", "cfg-current", "cfg-unlabelled"]
    );
    match &cluster.calls()[0] {
        Call::List(kind, ns, options) => {
            assert_eq!(kind, "ConfigMap");
            assert_eq!(ns.as_deref(), Some("ns"));
            assert_eq!(
                options.label_selector.as_deref(),
                Some("cobaltcore.c5c3.io/config-base=cfg")
            );
        }
        other => panic!("first call {other:?}"),
    }
}

#[test]
fn a_config_map_without_the_base_label_is_invisible_and_not_pruned() {
    let cluster = cluster_with_history();
    prune_immutable_config_maps(&cluster, &owner(), "cfg", "ns", "cfg-current", 0).expect("prunes");
    assert_eq!(
        cluster.names("ConfigMap"),
        ["cfg-current", "cfg-unlabelled"]
    );
}

#[test]
fn pruning_twice_gives_the_same_result_and_the_second_pass_deletes_nothing() {
    let cluster = cluster_with_history();
    prune_immutable_config_maps(&cluster, &owner(), "cfg", "ns", "cfg-current", 1).expect("1");
    let writes = cluster.writes().len();
    prune_immutable_config_maps(&cluster, &owner(), "cfg", "ns", "cfg-current", 1).expect("2");
    assert_eq!(cluster.writes().len(), writes);
}

#[test]
fn a_config_map_deleted_between_list_and_delete_is_not_an_error() {
    // cfg-2 is deleted by someone else after the list: its delete answers NotFound.
    let cluster = cluster_with_history().failing(
        Op::Delete,
        "cfg-2",
        ApiError::NotFound("already gone".into()),
    );
    prune_immutable_config_maps(&cluster, &owner(), "cfg", "ns", "cfg-current", 0)
        .expect("NotFound is ignored");
    let deletes: Vec<String> = cluster
        .calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::Delete(object, _) => Some(object.name),
            _ => None,
        })
        .collect();
    assert_eq!(
        deletes,
        ["cfg-3", "cfg-2", "cfg-1"],
        "cfg-2's delete was tried, and pruning went on past its NotFound"
    );
    assert_eq!(
        cluster.names("ConfigMap"),
        ["cfg-2", "cfg-current", "cfg-unlabelled"],
        "only the ConfigMap whose delete answered NotFound is left (the fake deletes nothing then)"
    );
}

#[test]
fn a_list_or_delete_failure_is_an_error_naming_what_failed() {
    let cluster =
        cluster_with_history().failing(Op::List, "ConfigMap", ApiError::Unavailable("x".into()));
    let err = prune_immutable_config_maps(&cluster, &owner(), "cfg", "ns", "cfg-current", 0)
        .expect_err("list fails");
    assert_eq!(
        err.to_string(),
        "listing ConfigMaps cfg-* in namespace ns: unavailable: x"
    );
    let cluster =
        cluster_with_history().failing(Op::Delete, "cfg-2", ApiError::Forbidden("no".into()));
    let err = prune_immutable_config_maps(&cluster, &owner(), "cfg", "ns", "cfg-current", 0)
        .expect_err("delete fails");
    assert_eq!(
        err.to_string(),
        "deleting stale ConfigMap ns/cfg-2: forbidden: no"
    );
}

#[test]
fn an_overlapping_base_name_is_never_pruned_for_the_shorter_one() {
    let cluster = FakeCluster::new()
        .with(stored(
            "test-config-aaaa",
            Some("test-config"),
            "2026-01-01T00:00:01Z",
        ))
        .with(stored(
            "test-config-extra-bbbb",
            Some("test-config-extra"),
            "2026-01-01T00:00:02Z",
        ));
    prune_immutable_config_maps(&cluster, &owner(), "test-config", "ns", "none", 0)
        .expect("prunes");
    assert_eq!(cluster.names("ConfigMap"), ["test-config-extra-bbbb"]);
}

// --- Secrets ---

fn stored_secret(name: &str, base: &str, created: &str, owner_uid: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": name, "namespace": "ns", "labels": {CONFIG_BASE_LABEL: base},
        "creationTimestamp": created,
        "ownerReferences": [{"apiVersion": "v1", "kind": "Keystone", "name": "keystone",
            "uid": owner_uid, "controller": true}]}})
}

#[test]
fn pruning_secrets_keeps_the_current_and_the_newest_retained_ones_the_owner_controls() {
    let cluster = FakeCluster::new()
        .with(stored_secret("dom-1", "dom", "2026-01-01T00:00:01Z", UID))
        .with(stored_secret("dom-2", "dom", "2026-01-01T00:00:02Z", UID))
        .with(stored_secret("dom-3", "dom", "2026-01-01T00:00:03Z", UID))
        .with(stored_secret(
            "dom-foreign",
            "dom",
            "2026-01-01T00:00:00Z",
            "other",
        ))
        .with(stored_secret(
            "dom-current",
            "dom",
            "2026-01-01T00:00:04Z",
            UID,
        ))
        .with(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "dom-cm", "namespace": "ns", "labels": {CONFIG_BASE_LABEL: "dom"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Keystone", "name": "keystone",
                "uid": UID, "controller": true}]}}),
        );
    prune_immutable_secrets(&cluster, &owner(), "dom", "ns", "dom-current", 1).expect("prunes");
    assert_eq!(
        cluster.names("Secret"),
        ["dom-3", "dom-current", "dom-foreign"]
    );
    assert_eq!(
        cluster.names("ConfigMap"),
        ["dom-cm"],
        "ConfigMaps are not touched"
    );
    match &cluster.calls()[0] {
        Call::List(kind, _, options) => {
            assert_eq!(kind, "Secret");
            assert_eq!(
                options.label_selector.as_deref(),
                Some("cobaltcore.c5c3.io/config-base=dom")
            );
        }
        other => panic!("first call {other:?}"),
    }
}

#[test]
fn a_secret_list_or_delete_failure_is_an_error_naming_the_secrets() {
    let cluster = FakeCluster::new()
        .with(stored_secret("dom-1", "dom", "2026-01-01T00:00:01Z", UID))
        .failing(Op::List, "Secret", ApiError::Unavailable("x".into()));
    let err = prune_immutable_secrets(&cluster, &owner(), "dom", "ns", "dom-current", 0)
        .expect_err("list fails");
    assert!(
        matches!(err, PruneError::List { kind: "Secret", .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "listing Secrets dom-* in namespace ns: unavailable: x"
    );
    let cluster = FakeCluster::new()
        .with(stored_secret("dom-1", "dom", "2026-01-01T00:00:01Z", UID))
        .failing(Op::Delete, "dom-1", ApiError::Forbidden("no".into()));
    let err = prune_immutable_secrets(&cluster, &owner(), "dom", "ns", "dom-current", 0)
        .expect_err("delete fails");
    assert!(
        matches!(err, PruneError::Delete { kind: "Secret", .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "deleting stale Secret ns/dom-1: forbidden: no"
    );
}
