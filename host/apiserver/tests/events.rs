//! core/v1 and events.k8s.io/v1 Events are one store seen through two APIs: what an
//! operator records through events.k8s.io is what `kubectl get events` lists and `kubectl
//! describe` finds, and an Event written through core/v1 reads through events.k8s.io.

use serde_json::json;

use crate::support::kubectl::Kubectl;
use crate::support::{config_map, get, post, raw, server};

#[tokio::test]
async fn an_event_recorded_through_events_k8s_io_is_what_kubectl_get_and_describe_show() {
    let (server, client) = server().await;
    let cm = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("settings", json!({"k": "v"})),
    )
    .await;
    assert_eq!(cm.status, 201);
    let uid = cm.body["metadata"]["uid"].clone();
    let recorded = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "settings.1", "namespace": "default"},
        "regarding": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default",
            "name": "settings", "uid": uid},
        "eventTime": "2026-12-06T04:00:00.000000Z",
        "reportingController": "wasm-operator/copier", "reportingInstance": "pod-1",
        "action": "Apply", "reason": "Copied", "type": "Normal", "note": "copied to settings-copy"});
    let created = post(
        &client,
        "/apis/events.k8s.io/v1/namespaces/default/events",
        recorded,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);

    let core = get(&client, "/api/v1/namespaces/default/events/settings.1").await;
    assert_eq!(core.status, 200, "{}", core.body);
    assert_eq!(core.body["apiVersion"], "v1");
    assert_eq!(core.body["involvedObject"]["uid"], uid);
    assert_eq!(core.body["message"], "copied to settings-copy");
    assert_eq!(core.body["reportingComponent"], "wasm-operator/copier");
    assert_eq!(
        core.body["metadata"]["resourceVersion"],
        created.body["metadata"]["resourceVersion"]
    );
    let selected = get(
        &client,
        "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dsettings,involvedObject.kind%3DConfigMap",
    )
    .await;
    assert_eq!(
        selected.body["items"].as_array().map(Vec::len),
        Some(1),
        "{}",
        selected.body
    );
    let other = get(
        &client,
        "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dother",
    )
    .await;
    assert_eq!(other.body["items"], json!([]), "{}", other.body);

    let kubectl = Kubectl::for_server(&server);
    let listed = kubectl.ok(&["get", "events"], None).await;
    let header = listed.lines().next().unwrap_or_default();
    assert!(
        header.starts_with("LAST SEEN") && header.contains("OBJECT") && header.contains("MESSAGE"),
        "{listed}"
    );
    assert!(
        listed.contains("configmap/settings") && listed.contains("copied to settings-copy"),
        "{listed}"
    );
    let described = kubectl
        .ok(&["describe", "configmap", "settings"], None)
        .await;
    let events = described.split("Events:").nth(1).unwrap_or_default();
    assert!(
        events.contains("Copied") && events.contains("copied to settings-copy"),
        "{described}"
    );
}

#[tokio::test]
async fn an_event_written_through_core_v1_reads_through_events_k8s_io_and_patches_through_either() {
    let (_server, client) = server().await;
    let written = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "pod.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "default"},
        "reason": "Pulled", "message": "image pulled", "type": "Normal", "count": 1,
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2026-12-06T04:00:00Z", "lastTimestamp": "2026-12-06T04:00:00Z"});
    let created = post(&client, "/api/v1/namespaces/default/events", written).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.body["involvedObject"]["name"], "web-0",
        "answered in core form"
    );

    let path = "/apis/events.k8s.io/v1/namespaces/default/events/pod.1";
    let seen = get(&client, path).await;
    assert_eq!(seen.status, 200, "{}", seen.body);
    assert_eq!(seen.body["regarding"]["name"], "web-0");
    assert_eq!(seen.body["note"], "image pulled");
    assert_eq!(seen.body["deprecatedSource"]["host"], "node-1");
    assert_eq!(seen.body["deprecatedCount"], 1);

    let patched = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/events/pod.1",
        "application/merge-patch+json",
        Some(json!({"count": 2, "message": "image pulled again"})),
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    let seen = get(&client, path).await;
    assert_eq!(
        (&seen.body["deprecatedCount"], &seen.body["note"]),
        (&json!(2), &json!("image pulled again"))
    );
    let listed = get(&client, "/apis/events.k8s.io/v1/namespaces/default/events").await;
    assert_eq!(
        listed.body["items"].as_array().map(Vec::len),
        Some(1),
        "one store: {}",
        listed.body
    );

    let deleted = raw(&client, "DELETE", path, "application/json", None).await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_eq!(
        get(&client, "/api/v1/namespaces/default/events/pod.1")
            .await
            .status,
        404
    );
}
