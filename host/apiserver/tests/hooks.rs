//! Fault injection and request counters.

use std::time::{Duration, Instant};

use serde_json::json;
use wasm_operator_apiserver::{Fault, FaultAction};

use crate::support::{config_map, get, post, raw, server};

#[tokio::test]
async fn an_injected_fault_fails_the_matching_requests_only() {
    let (server, client) = server().await;
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    server.inject(Fault::fail("patch", "configmaps", 500, "injected"));
    let failed = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/a",
        "application/merge-patch+json",
        Some(json!({})),
    )
    .await;
    assert_eq!(failed.status, 500);
    assert_eq!(failed.body["message"], "injected");
    assert_eq!(
        get(&client, "/api/v1/namespaces/default/configmaps/a")
            .await
            .status,
        200
    );
    server.clear_faults();
    let ok = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/a",
        "application/merge-patch+json",
        Some(json!({})),
    )
    .await;
    assert_eq!(ok.status, 200);
}

#[tokio::test]
async fn an_injected_latency_delays_the_request() {
    let (server, client) = server().await;
    server.inject(Fault {
        verb: Some("get".into()),
        resource: None,
        name: None,
        namespace: None,
        action: FaultAction::Delay(Duration::from_millis(300)),
        remaining: Some(1),
    });
    let started = Instant::now();
    get(&client, "/api/v1/namespaces/default").await;
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn counters_count_requests_by_verb_and_resource() {
    let (server, client) = server().await;
    let before = server.counts();
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    get(&client, "/api/v1/namespaces/default/configmaps/a").await;
    get(&client, "/api/v1/namespaces/default/configmaps/a").await;
    let made = server.counts().since(&before);
    assert_eq!(made.get("create", "configmaps"), 1);
    assert_eq!(made.get("get", "configmaps"), 2);
    assert_eq!(made.writes(), 1);
    assert_eq!(made.stored("configmaps"), 1);
}

#[tokio::test]
async fn a_write_that_changes_nothing_is_counted_as_a_request_but_stores_nothing() {
    let (server, client) = server().await;
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "default"}, "data": {"k": "v"}});
    let path = "/api/v1/namespaces/default/configmaps/a?fieldManager=test";
    let first = raw(
        &client,
        "PATCH",
        path,
        "application/apply-patch+yaml",
        Some(body.clone()),
    )
    .await;
    assert_eq!(first.status, 201, "{}", first.body);
    let before = server.counts();
    let again = raw(
        &client,
        "PATCH",
        path,
        "application/apply-patch+yaml",
        Some(body),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.body);
    let made = server.counts().since(&before);
    assert_eq!(made.get("apply", "configmaps"), 1);
    assert_eq!(made.stored("configmaps"), 0);
}

#[tokio::test]
async fn a_dropped_watch_ends_its_stream_at_once() {
    let (server, client) = server().await;
    server.inject(Fault {
        verb: Some("watch".into()),
        resource: Some("configmaps".into()),
        name: None,
        namespace: None,
        action: FaultAction::DropWatch,
        remaining: Some(1),
    });
    // A watch from resourceVersion 1 would replay this object's ADDED event first.
    let created = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("seen", json!({})),
    )
    .await;
    assert_eq!(created.status, 201);
    // Ending is the claim: a watch that is not dropped never ends, so this guard (far
    // beyond any delay the server has) turns a hang into a failure.
    let dropped = tokio::time::timeout(
        Duration::from_secs(30),
        get(
            &client,
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1",
        ),
    )
    .await
    .expect("the dropped watch ended its stream");
    assert_eq!(dropped.status, 200);
    assert_eq!(
        dropped.body,
        serde_json::Value::String(String::new()),
        "no event before the end"
    );
}

#[tokio::test]
async fn a_fault_in_a_namespace_and_by_a_created_name_matches_only_those_requests() {
    let (server, client) = server().await;
    for namespace in ["a", "b"] {
        post(
            &client,
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        )
        .await;
    }
    server.inject(Fault::fail("create", "configmaps", 500, "injected").in_namespace("a"));
    let mut by_name = Fault::fail("create", "configmaps", 422, "by name");
    by_name.name = Some("named".into());
    server.inject(by_name);
    let create = |namespace: &str, name: &str| {
        let client = client.clone();
        let path = format!("/api/v1/namespaces/{namespace}/configmaps");
        let body = config_map(name, json!({}));
        async move { post(&client, &path, body).await.status }
    };
    assert_eq!(create("b", "other").await, 201);
    assert_eq!(create("b", "named").await, 422);
    assert_eq!(create("a", "other").await, 500);
    assert_eq!(server.counts().get("create", "configmaps"), 3);
    assert_eq!(
        server.counts().get("fault:create", "configmaps"),
        2,
        "the hits"
    );
}
