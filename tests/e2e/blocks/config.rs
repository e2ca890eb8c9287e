//! EnsureObject, CreateImmutableConfigMap, PruneImmutableConfigMaps and policy loading in
//! the real host.

use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator_runtime::backend::ClusterBackend;
use wasm_operator_sdk::{KindRef, ListOptions, Patch};

use crate::{Harness, in_ns, setup};

const CONFIG_BASE: &str = "cobaltcore.c5c3.io/config-base";

fn config_map(name: &str) -> wasm_operator_sdk::ObjectRef {
    in_ns("v1", "ConfigMap", name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_object_applies_an_owned_object_and_keeps_the_fields_of_other_managers() {
    let h = Harness::start().await;
    let cm = config_map("app-object");
    let scenario = h
        .scenario("app", "object", json!({"data": {"mine": "1"}}))
        .await;
    assert_eq!(
        h.first_outcome("app").await,
        json!({"applied": "app-object"})
    );
    let stored = h.must(&cm).await;
    assert_eq!(
        stored["metadata"]["ownerReferences"][0]["uid"],
        scenario["metadata"]["uid"]
    );
    h.cluster
        .backend
        .patch(
            &setup(),
            &cm,
            &Patch::Merge(json!({"data": {"theirs": "x"}})),
            None,
        )
        .await
        .expect("another manager adds a key");
    let generation = h
        .patch_spec("app", json!({"params": {"data": {"mine": "2"}}}))
        .await;
    h.outcome("app", generation, |_| true).await;
    assert_eq!(
        h.must(&cm).await["data"],
        json!({"mine": "2", "theirs": "x"})
    );
    h.assert_converged_pass_writes_nothing("app", &[("configmaps", cm)])
        .await;
}

async fn history(h: &Harness) -> Vec<Value> {
    let kind = KindRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
        namespaced: true,
    };
    let options = ListOptions {
        label_selector: Some(format!("{CONFIG_BASE}=app-config")),
        ..Default::default()
    };
    h.cluster
        .backend
        .list(&kind, Some("ns"), &options)
        .await
        .expect("listed")
}

fn names(objects: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = objects
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_immutable_config_map_names_it_by_content_and_the_server_keeps_it_immutable() {
    let h = Harness::start().await;
    let scenario = h
        .scenario(
            "app",
            "immutable-config",
            json!({"data": {"app.conf": "[DEFAULT]\n"}}),
        )
        .await;
    let outcome = h.first_outcome("app").await;
    let current = outcome["current"].as_str().expect("a name").to_owned();
    assert!(current.starts_with("app-config-") && current.len() == "app-config-".len() + 8);
    let stored = h.must(&config_map(&current)).await;
    assert_eq!(stored["immutable"], true);
    assert_eq!(stored["metadata"]["labels"][CONFIG_BASE], "app-config");
    assert_eq!(
        stored["metadata"]["ownerReferences"][0]["uid"],
        scenario["metadata"]["uid"]
    );
    let refused = h
        .cluster
        .backend
        .patch(
            &setup(),
            &config_map(&current),
            &Patch::Merge(json!({"data": {"app.conf": "changed"}})),
            None,
        )
        .await;
    match refused {
        Err(wasm_operator_sdk::ApiError::Invalid(message)) => assert!(
            message.contains("field is immutable"),
            "an immutable ConfigMap's data cannot change: {message}"
        ),
        other => panic!("an immutable ConfigMap's data cannot change: {other:?}"),
    }
    let generation = h.rerun("app").await;
    assert_eq!(
        h.outcome("app", generation, |_| true).await["current"],
        current.as_str(),
        "the same data gives the same ConfigMap"
    );
    assert_eq!(names(&history(&h).await), [current]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prune_with_five_historical_config_maps_and_retain_three_leaves_three_and_the_current() {
    let h = Harness::start().await;
    // Someone else's ConfigMap of the same base is never pruned.
    h.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app-config-foreign", "namespace": "ns",
            "labels": {CONFIG_BASE: "app-config"}},
        "data": {"n": "foreign"}}))
        .await;
    h.scenario(
        "app",
        "immutable-config",
        json!({"retain": 10, "data": {"n": "0"}}),
    )
    .await;
    let mut created = vec![h.first_outcome("app").await["current"].clone()];
    for n in 1..=5 {
        // creationTimestamps have one-second granularity: one ConfigMap per second.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let generation = h
            .patch_spec("app", json!({"params": {"data": {"n": n.to_string()}}}))
            .await;
        created.push(h.outcome("app", generation, |_| true).await["current"].clone());
    }
    assert_eq!(
        history(&h).await.len(),
        7,
        "5 historical, the current, the foreign one"
    );
    let generation = h.patch_spec("app", json!({"params": {"retain": 3}})).await;
    let current = h.outcome("app", generation, |_| true).await["current"].clone();
    assert_eq!(current, created[5]);
    let mut expected: Vec<String> = created[2..]
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    expected.push("app-config-foreign".into());
    expected.sort();
    assert_eq!(names(&history(&h).await), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_is_loaded_from_its_config_map_merged_and_rendered() {
    let h = Harness::start().await;
    h.scenario("keystone", "policy", json!({"configMap": "policy"}))
        .await;
    assert_eq!(h.first_outcome("keystone").await, json!({"notFound": true}));
    h.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "policy", "namespace": "ns"},
        "data": {"policy.yaml": "identity:get_user: rule:admin\nidentity:list_users: rule:admin\n"}}))
        .await;
    let generation = h
        .patch_spec(
            "keystone",
            json!({"params": {"rules": {"identity:list_users": "", "identity:get_user": "rule:owner"}}}),
        )
        .await;
    let outcome = h.outcome("keystone", generation, |_| true).await;
    assert_eq!(
        outcome["policy"],
        "identity:get_user: rule:owner\nidentity:list_users: ''\n"
    );
    assert_eq!(
        outcome["invalid"],
        json!(["spec.params.rules[identity:list_users]: policy rule value must not be empty"])
    );
}
