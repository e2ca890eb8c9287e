//! With a data directory, every acknowledged write survives a restart.

use serde_json::json;
use wasm_operator_apiserver::{ApiServer, ServerConfig};

use crate::support::{config_map, get, post, raw};

#[tokio::test]
async fn acknowledged_writes_survive_a_restart_on_the_same_data_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = ServerConfig {
        data_dir: Some(dir.path().to_owned()),
        ..ServerConfig::default()
    };
    let server = ApiServer::start(config.clone()).await.expect("start");
    let client = server.client().expect("client");
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("kept", json!({"k": "v"})),
    )
    .await;
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("deleted", json!({})),
    )
    .await;
    raw(
        &client,
        "DELETE",
        "/api/v1/namespaces/default/configmaps/deleted",
        "application/json",
        None,
    )
    .await;
    let last = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/kept",
        "application/merge-patch+json",
        Some(json!({"data": {"n": "1"}})),
    )
    .await;
    server.stop();

    let server = ApiServer::start(config).await.expect("restart");
    let client = server.client().expect("client");
    let kept = get(&client, "/api/v1/namespaces/default/configmaps/kept").await;
    assert_eq!(kept.body["data"], json!({"k": "v", "n": "1"}));
    assert_eq!(
        kept.body["metadata"]["resourceVersion"],
        last.body["metadata"]["resourceVersion"]
    );
    assert_eq!(
        get(&client, "/api/v1/namespaces/default/configmaps/deleted")
            .await
            .status,
        404
    );
    let next = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("new", json!({})),
    )
    .await;
    assert!(
        crate::support::rv(&next.body) > crate::support::rv(&kept.body),
        "resourceVersions keep growing"
    );
}
