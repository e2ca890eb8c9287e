//! Watch: resourceVersion semantics, bookmarks, 410 Gone, selector transitions.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, WatchEvent, WatchParams};
use serde_json::json;

use crate::support::{config_map, post, raw, rv, server};

async fn next(
    stream: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<ConfigMap>>> + Unpin),
) -> WatchEvent<ConfigMap> {
    tokio::time::timeout(std::time::Duration::from_secs(10), stream.try_next())
        .await
        .expect("an event within 10 s")
        .expect("no stream error")
        .expect("the stream goes on")
}

#[tokio::test]
async fn a_watch_from_a_resource_version_gets_every_later_change_in_order() {
    let (_server, client) = server().await;
    let a = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut stream = api
        .watch(
            &WatchParams::default().disable_bookmarks(),
            &rv(&a.body).to_string(),
        )
        .await
        .expect("watch")
        .boxed();
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("b", json!({})),
    )
    .await;
    raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/a",
        "application/merge-patch+json",
        Some(json!({"data": {"x": "1"}})),
    )
    .await;
    raw(
        &client,
        "DELETE",
        "/api/v1/namespaces/default/configmaps/b",
        "application/json",
        None,
    )
    .await;
    let kinds: Vec<(String, String)> = {
        let mut out = Vec::new();
        for _ in 0..3 {
            let e = next(&mut stream).await;
            out.push(match e {
                WatchEvent::Added(o) => ("ADDED".into(), o.metadata.name.unwrap_or_default()),
                WatchEvent::Modified(o) => ("MODIFIED".into(), o.metadata.name.unwrap_or_default()),
                WatchEvent::Deleted(o) => ("DELETED".into(), o.metadata.name.unwrap_or_default()),
                other => (format!("{other:?}"), String::new()),
            });
        }
        out
    };
    let expected = [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")];
    assert_eq!(kinds, expected.map(|(k, n)| (k.to_owned(), n.to_owned())));
}

#[tokio::test]
async fn a_watch_with_bookmarks_gets_a_bookmark_at_the_current_version() {
    let (_server, client) = server().await;
    let a = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut stream = api
        .watch(&WatchParams::default(), &rv(&a.body).to_string())
        .await
        .expect("watch")
        .boxed();
    match next(&mut stream).await {
        WatchEvent::Bookmark(b) => assert_eq!(b.metadata.resource_version, rv(&a.body).to_string()),
        other => panic!("expected a bookmark, got {other:?}"),
    }
}

#[tokio::test]
async fn a_watch_from_a_version_older_than_the_history_is_410_gone() {
    let config = wasm_operator_apiserver::ServerConfig {
        watch_history: 10,
        ..Default::default()
    };
    let server = wasm_operator_apiserver::ApiServer::start(config)
        .await
        .expect("start");
    let client = server.client().expect("client");
    let a = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    let current = rv(&a.body);
    for i in 0..11 {
        raw(
            &client,
            "PATCH",
            "/api/v1/namespaces/default/configmaps/a",
            "application/merge-patch+json",
            Some(json!({"data": {"n": i.to_string()}})),
        )
        .await;
    }
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut stream = api
        .watch(
            &WatchParams::default().disable_bookmarks(),
            &current.to_string(),
        )
        .await
        .expect("watch")
        .boxed();
    match next(&mut stream).await {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
            assert!(
                e.message
                    .starts_with(&format!("too old resource version: {current} (")),
                "{}",
                e.message
            );
        }
        other => panic!("expected 410 Gone, got {other:?}"),
    }
}

#[tokio::test]
async fn a_change_out_of_a_watched_selection_is_a_deletion_for_that_watcher() {
    let (_server, client) = server().await;
    let mut cm = config_map("a", json!({}));
    cm["metadata"]["labels"] = json!({"app": "x"});
    let a = post(&client, "/api/v1/namespaces/default/configmaps", cm).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut stream = api
        .watch(
            &WatchParams::default().disable_bookmarks().labels("app=x"),
            &rv(&a.body).to_string(),
        )
        .await
        .expect("watch")
        .boxed();
    raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/a",
        "application/merge-patch+json",
        Some(json!({"metadata": {"labels": {"app": "y"}}})),
    )
    .await;
    assert!(matches!(next(&mut stream).await, WatchEvent::Deleted(_)));
}

#[tokio::test]
async fn kube_runtime_watcher_sees_the_initial_list_and_later_changes() {
    let (_server, client) = server().await;
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut objects =
        kube::runtime::watcher(api, kube::runtime::watcher::Config::default()).boxed();
    let mut seen_init_done = false;
    let mut seen_b = false;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while !(seen_init_done && seen_b) {
        let event = tokio::time::timeout_at(deadline, objects.try_next())
            .await
            .expect("in time")
            .expect("no error")
            .expect("more");
        match event {
            kube::runtime::watcher::Event::InitDone => {
                seen_init_done = true;
                post(
                    &client,
                    "/api/v1/namespaces/default/configmaps",
                    config_map("b", json!({})),
                )
                .await;
            }
            kube::runtime::watcher::Event::Apply(o) if o.metadata.name.as_deref() == Some("b") => {
                seen_b = true
            }
            _ => {}
        }
    }
}
