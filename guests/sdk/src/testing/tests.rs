//! The contract of [`FakeCluster`], a test double: these tests check the fake, not the
//! platform's behaviour, and are named `fake_cluster_*` (no test here panics, so they all
//! run in wasm too).

use serde_json::{Value, json};

use super::*;
use crate::cluster::{Cluster, ListOptions, Patch, Propagation, ReadFrom};
use crate::error::ApiError;
use crate::object::{KindRef, ObjectRef};

fn config_map(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "labels": labels}, "data": {"a": "1"}})
}

fn cm(name: &str) -> ObjectRef {
    ObjectRef::of::<k8s_openapi::api::core::v1::ConfigMap>(Some("ns"), name)
}

fn version(object: &Value) -> &str {
    object["metadata"]["resourceVersion"]
        .as_str()
        .expect("a version")
}

#[test]
fn fake_cluster_gives_a_stored_object_server_fields_and_every_write_a_new_resource_version() {
    let cluster = FakeCluster::new();
    let stored = cluster.put(config_map("a", json!({})));
    assert!(stored["metadata"]["uid"].is_string());
    assert_eq!(stored["metadata"]["creationTimestamp"], CREATION_TIMESTAMP);
    let patched = cluster
        .patch(&cm("a"), &Patch::Merge(json!({"data": {"b": "2"}})), None)
        .expect("patches");
    assert_ne!(version(&patched), version(&stored));
    assert_eq!(patched["metadata"]["uid"], stored["metadata"]["uid"]);
}

#[test]
fn fake_cluster_merge_and_json_patches_follow_their_rfcs_and_a_stale_version_conflicts() {
    let cluster = FakeCluster::new().with(config_map("a", json!({})));
    let read = cluster.object(&cm("a")).expect("stored");
    // RFC 7386: null removes a member.
    let merged = cluster
        .patch(
            &cm("a"),
            &Patch::Merge(json!({"data": {"a": null, "b": "2"}})),
            Some(version(&read)),
        )
        .expect("current");
    assert_eq!(merged["data"], json!({"b": "2"}));
    // RFC 6902: operations in order; a failing test operation is invalid.
    let ops = json!([{"op": "add", "path": "/data/c", "value": "3"},
        {"op": "remove", "path": "/data/b"}]);
    let patched = cluster
        .patch(&cm("a"), &Patch::Json(ops), None)
        .expect("applies");
    assert_eq!(patched["data"], json!({"c": "3"}));
    let failing = json!([{"op": "test", "path": "/data/c", "value": "x"}]);
    let refused = cluster.patch(&cm("a"), &Patch::Json(failing), None);
    assert!(matches!(refused, Err(ApiError::Invalid(_))), "{refused:?}");
    // The version read before the first patch is stale now.
    let stale = cluster.patch(&cm("a"), &Patch::Merge(json!({})), Some(version(&read)));
    assert!(matches!(stale, Err(ApiError::Conflict(_))), "{stale:?}");
    assert_eq!(
        cluster.write_log(),
        ["patch ConfigMap ns/a", "patch ConfigMap ns/a"]
    );
    assert_eq!(cluster.calls().len(), 4, "failed calls are recorded too");
}

#[test]
fn fake_cluster_frozen_cache_lags_the_server_until_synced() {
    let cluster = FakeCluster::new().with(config_map("a", json!({})));
    cluster.freeze_cache();
    cluster.change("ConfigMap", "a", |o| o["data"]["a"] = json!("2"));
    let cached = cluster.get(&cm("a"), ReadFrom::Cache).expect("reads");
    let server = cluster.get(&cm("a"), ReadFrom::Server).expect("reads");
    assert_eq!(cached.expect("cached")["data"]["a"], "1");
    assert_eq!(server.expect("stored")["data"]["a"], "2");
    cluster.sync_cache();
    assert_eq!(cluster.cached(&cm("a")), cluster.object(&cm("a")));
}

#[test]
fn fake_cluster_lists_filter_by_namespace_label_selector_and_field_index() {
    let cluster = FakeCluster::new()
        .with_indexer(|index, object| match index {
            "name" => vec![object["metadata"]["name"].as_str().unwrap_or("").to_owned()],
            _ => vec![],
        })
        .with(config_map("a", json!({"app": "x", "tier": "db"})))
        .with(config_map("b", json!({"app": "y"})));
    let kind = KindRef::of::<k8s_openapi::api::core::v1::ConfigMap>();
    let names = |options: ListOptions| -> Vec<String> {
        cluster
            .list(&kind, Some("ns"), &options)
            .expect("lists")
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    let selector = |s: &str| ListOptions {
        label_selector: Some(s.into()),
        ..Default::default()
    };
    assert_eq!(names(ListOptions::default()), ["a", "b"]);
    assert_eq!(names(selector("app=x")), ["a"]);
    assert_eq!(names(selector("app!=x")), ["b"]);
    assert_eq!(names(selector("tier")), ["a"]);
    assert_eq!(names(selector("app in (x,y),!tier")), ["b"]);
    let by_index = ListOptions {
        field_index: Some(("name".into(), "b".into())),
        ..Default::default()
    };
    assert_eq!(names(by_index), ["b"]);
    assert!(
        cluster
            .list(&kind, Some("other"), &ListOptions::default())
            .expect("lists")
            .is_empty()
    );
}

#[test]
fn fake_cluster_apply_merges_sets_the_owner_and_writes_only_a_change() {
    let cluster = FakeCluster::new();
    let body = config_map("a", json!({}));
    let first = cluster.apply(&body, Some(&owner())).expect("applies");
    assert_eq!(first["metadata"]["ownerReferences"][0]["uid"], "owner-uid");
    let again = cluster.apply(&body, Some(&owner())).expect("applies");
    assert_eq!(again, first);
    assert_eq!(cluster.write_log(), ["apply ConfigMap ns/a"]);
    assert!(matches!(
        &cluster.calls()[..],
        [
            Call::Apply { wrote: true, .. },
            Call::Apply { wrote: false, .. }
        ]
    ));
    assert_eq!(cluster.applied(), [body.clone(), body]);
}

#[test]
fn fake_cluster_injected_failures_fire_in_order_as_many_times_as_asked() {
    let cluster = FakeCluster::new().with(config_map("a", json!({})));
    cluster.fail(Op::GetServer, "a", ApiError::Unavailable("1".into()), 2);
    cluster.fail(Op::Get, "a", ApiError::Forbidden("2".into()), 1);
    let get = |from| cluster.get(&cm("a"), from);
    assert!(matches!(get(ReadFrom::Cache), Err(ApiError::Forbidden(_))));
    assert!(matches!(
        get(ReadFrom::Server),
        Err(ApiError::Unavailable(_))
    ));
    assert!(matches!(
        get(ReadFrom::Server),
        Err(ApiError::Unavailable(_))
    ));
    assert!(matches!(get(ReadFrom::Server), Ok(Some(_))));
    let failing = FakeCluster::new().with(config_map("a", json!({}))).failing(
        Op::Delete,
        "a",
        ApiError::Conflict("x".into()),
    );
    assert!(failing.delete(&cm("a"), Propagation::Background).is_err());
    assert!(failing.writes().is_empty(), "a failed delete wrote nothing");
    failing
        .delete(&cm("a"), Propagation::Background)
        .expect("deletes");
    assert!(matches!(
        failing.delete(&cm("a"), Propagation::Background),
        Err(ApiError::NotFound(_))
    ));
    assert_eq!(failing.write_log(), ["delete ConfigMap ns/a"]);
}

#[test]
fn fake_cluster_tracked_generation_counts_changes_outside_metadata_and_status() {
    let cluster = FakeCluster::new().tracking_generation("ConfigMap");
    let stored = cluster.put(config_map("a", json!({})));
    assert_eq!(stored["metadata"]["generation"], 1);
    cluster.change("ConfigMap", "a", |o| {
        o["metadata"]["labels"]["l"] = json!("v")
    });
    cluster
        .update_status(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "ns"}, "status": {"ok": true}}))
        .expect("updates");
    assert_eq!(
        cluster.object(&cm("a")).expect("stored")["metadata"]["generation"],
        1
    );
    cluster.change("ConfigMap", "a", |o| o["data"]["a"] = json!("2"));
    let current = cluster.object(&cm("a")).expect("stored");
    assert_eq!(current["metadata"]["generation"], 2);
    assert_eq!(current["status"], json!({"ok": true}));
    let untracked = FakeCluster::new().put(config_map("a", json!({})));
    assert!(untracked["metadata"].get("generation").is_none());
}

#[test]
fn fake_cluster_read_past_the_cache_can_be_followed_by_another_clients_change() {
    let cluster = FakeCluster::new().with(config_map("a", json!({})));
    cluster.after_server_read("a", |o| o["data"]["theirs"] = json!("x"));
    let read = cluster
        .get(&cm("a"), ReadFrom::Server)
        .expect("reads")
        .expect("there");
    assert!(read["data"].get("theirs").is_none());
    let stale = cluster.patch(&cm("a"), &Patch::Merge(json!({})), Some(version(&read)));
    assert!(matches!(stale, Err(ApiError::Conflict(_))), "{stale:?}");
    assert_eq!(
        cluster.object(&cm("a")).expect("there")["data"]["theirs"],
        "x"
    );
    assert!(
        cluster.cached(&cm("a")).expect("there")["data"]
            .get("theirs")
            .is_none()
    );
}

#[test]
fn fake_cluster_records_events_and_displays_calls_as_one_line() {
    let cluster = FakeCluster::new();
    let event = crate::cluster::Event {
        event_type: crate::cluster::EventType::Warning,
        reason: "Odd".into(),
        action: "Reconcile".into(),
        note: "n".into(),
    };
    cluster.record_event(&cm("a"), &event).expect("records");
    assert_eq!(cluster.event_reasons(), ["Odd"]);
    assert_eq!(cluster.events()[0].0, cm("a"));
    assert_eq!(cluster.calls()[0].to_string(), "event Odd ConfigMap ns/a");
    assert!(cluster.writes().is_empty());
    cluster.clear_calls();
    assert!(cluster.calls().is_empty());
}

/// A plugin admitting ConfigMaps: `data.size` defaults to `1`; a `data.size` other than
/// 1-9 is invalid; `data.mode: write` tries a write during admission; a ConfigMap labelled
/// `protected` may not be deleted.
struct Admitting;

impl crate::Reconciler for Admitting {
    fn describe() -> crate::Description {
        let config_map = KindRef::of::<k8s_openapi::api::core::v1::ConfigMap>();
        crate::Description {
            name: "admitting".into(),
            version: "0.1.0".into(),
            field_manager: "admitting".into(),
            primary: config_map.clone(),
            primary_predicates: vec![],
            watches: vec![],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![crate::admission::AdmittedKind {
                kind: config_map,
                default_on: vec![crate::admission::Operation::Create],
                validate_on: vec![
                    crate::admission::Operation::Create,
                    crate::admission::Operation::Update,
                    crate::admission::Operation::Delete,
                ],
                failure_policy: crate::admission::FailurePolicy::Fail,
            }],
            egress: vec![],
            indexes: vec![],
            permissions: vec![],
            targets: Default::default(),
            primary_selector: None,
        }
    }

    fn reconcile(
        _: &dyn Cluster,
        _: &crate::Request,
    ) -> Result<crate::Outcome, crate::ReconcileError> {
        Ok(crate::Outcome::done())
    }

    fn default_object(
        _: &dyn Cluster,
        request: &crate::admission::AdmissionRequest,
    ) -> Result<crate::admission::Defaulted, crate::admission::Denial> {
        let mut defaulted = crate::admission::unchanged(request);
        if defaulted.object.pointer("/data/size").is_none() {
            defaulted.object["data"]["size"] = json!("1");
        }
        Ok(defaulted)
    }

    fn validate_object(
        cluster: &dyn Cluster,
        request: &crate::admission::AdmissionRequest,
    ) -> crate::admission::Validated {
        let mut validated = crate::admission::Validated::default();
        if request.operation == crate::admission::Operation::Delete {
            if request
                .old_object
                .as_ref()
                .and_then(|o| o.pointer("/metadata/labels/protected"))
                .is_some()
            {
                validated.denial = Some(crate::admission::Denial {
                    message: "protected".into(),
                    fields: vec![],
                });
            }
            return validated;
        }
        let object = request.object.clone().unwrap_or_default();
        if object.pointer("/data/mode") == Some(&json!("write")) {
            let written = cluster.create(&config_map("side-effect", json!({})));
            validated.denial = Some(crate::admission::Denial {
                message: format!("{written:?}"),
                fields: vec![],
            });
            return validated;
        }
        let size = object.pointer("/data/size").cloned().unwrap_or_default();
        let mut errors = crate::admission::FieldErrors::new();
        if !matches!(
            size.as_str(),
            Some("1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9")
        ) {
            errors.invalid("data.size", &size, "must be 1-9");
        }
        validated.denial = errors.into_result(request).err();
        validated
    }
}

#[test]
fn fake_cluster_runs_a_plugins_admission_before_it_stores() {
    let cluster = FakeCluster::new().admitting::<Admitting>();
    // Defaulted on create.
    let stored = cluster
        .create(&config_map("a", json!({})))
        .expect("created");
    assert_eq!(stored["data"], json!({"a": "1", "size": "1"}));
    // Refused on update, naming the field; nothing stored.
    let patch = Patch::Merge(json!({"data": {"size": "10"}}));
    assert_eq!(
        cluster.patch(&cm("a"), &patch, None),
        Err(ApiError::Invalid(
            "ConfigMap \"a\" is invalid: data.size: Invalid value: \"10\": must be 1-9".into()
        ))
    );
    assert_eq!(cluster.object(&cm("a")).expect("kept")["data"]["size"], "1");
    let mut applied = config_map("a", json!({}));
    applied["data"]["size"] = json!("11");
    assert!(matches!(
        cluster.apply(&applied, None),
        Err(ApiError::Invalid(_))
    ));
    // The valid row: an allowed update is stored.
    let patch = Patch::Merge(json!({"data": {"size": "2"}}));
    assert_eq!(
        cluster.patch(&cm("a"), &patch, None).expect("patched")["data"]["size"],
        "2"
    );
    // Writes during admission are refused.
    let mut writing = config_map("w", json!({}));
    writing["data"]["mode"] = json!("write");
    assert_eq!(
        cluster.create(&writing),
        Err(ApiError::Forbidden(
            "Err(Forbidden(\"admission may not write to the cluster (a create)\"))".into()
        ))
    );
    assert!(cluster.object(&cm("side-effect")).is_none());
    // Deletes see the stored object.
    cluster
        .create(&config_map("p", json!({"protected": "yes"})))
        .expect("created");
    assert_eq!(
        cluster.delete(&cm("p"), Propagation::Background),
        Err(ApiError::Forbidden("protected".into()))
    );
    assert!(cluster.object(&cm("p")).is_some());
    cluster
        .delete(&cm("a"), Propagation::Background)
        .expect("an unprotected delete");
}

#[test]
fn fake_cluster_cache_reads_carry_no_managed_fields_as_the_hosts_cache() {
    let mut object = config_map("a", json!({}));
    object["metadata"]["managedFields"] =
        json!([{"manager": "m", "operation": "Apply", "fieldsV1": {"f:data": {}}}]);
    let cluster = FakeCluster::new().with(object);
    let cached = cluster
        .get(&cm("a"), ReadFrom::Cache)
        .expect("reads")
        .expect("cached");
    assert!(
        cached["metadata"].get("managedFields").is_none(),
        "{cached}"
    );
    let listed = cluster
        .list(
            &KindRef::of::<k8s_openapi::api::core::v1::ConfigMap>(),
            Some("ns"),
            &ListOptions::default(),
        )
        .expect("lists");
    assert!(listed[0]["metadata"].get("managedFields").is_none());
    let server = cluster
        .get(&cm("a"), ReadFrom::Server)
        .expect("reads")
        .expect("stored");
    assert_eq!(server["metadata"]["managedFields"][0]["manager"], "m");
}

#[test]
fn fake_cluster_target_writes_owners_as_owner_labels_and_keeps_events_on_the_primarys_cluster() {
    use std::rc::Rc;
    let target = Rc::new(FakeCluster::new());
    let own = FakeCluster::new().with_target("edge", "x.io", target.clone());
    let opened = own.open_target("edge").unwrap();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "ns"}, "data": {"a": "1"}});
    opened.apply(&body, Some(&crate::testing::owner())).unwrap();
    let stored = target.server("ConfigMap", "c").unwrap();
    assert_eq!(stored["metadata"].get("ownerReferences"), None);
    assert_eq!(
        stored["metadata"]["labels"],
        json!({"x.io/owner-kind": "Keystone", "x.io/owner-name": "keystone", "x.io/owner-namespace": "ns"})
    );
    assert_eq!(own.server("ConfigMap", "c"), None);
    let event = crate::Event {
        event_type: crate::EventType::Normal,
        reason: "R".into(),
        action: "A".into(),
        note: "n".into(),
    };
    let primary = cm("c");
    opened.record_event(&primary, &event).unwrap();
    assert_eq!(own.event_reasons(), ["R"]);
    assert!(target.event_reasons().is_empty());
    let index = ListOptions {
        field_index: Some(("i".into(), "k".into())),
        ..Default::default()
    };
    let refused = opened.list(
        &KindRef::of::<k8s_openapi::api::core::v1::ConfigMap>(),
        Some("ns"),
        &index,
    );
    assert!(
        matches!(&refused, Err(ApiError::Forbidden(m)) if m.contains("field index \"i\"")),
        "{refused:?}"
    );
    own.deregister_target("edge");
    assert!(
        matches!(own.open_target("edge"), Err(crate::TargetError::NotRegistered(m)) if m.contains("\"edge\""))
    );
}
