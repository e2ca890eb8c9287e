//! Discovery, /version and Status bodies.

use serde_json::json;

use crate::support::{get, server};

#[tokio::test]
async fn version_reports_the_kubernetes_version_of_the_served_types() {
    let (_server, client) = server().await;
    let version = client.apiserver_version().await.expect("version");
    assert_eq!(
        (version.major.as_str(), version.minor.as_str()),
        ("1", "37")
    );
}

#[tokio::test]
async fn discovery_lists_groups_resources_verbs_short_names_and_scope() {
    let (_server, client) = server().await;
    let api = get(&client, "/api").await;
    assert_eq!(api.body["versions"], json!(["v1"]));
    let groups = get(&client, "/apis").await;
    let names: Vec<&str> = groups.body["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    for group in [
        "apps",
        "batch",
        "coordination.k8s.io",
        "rbac.authorization.k8s.io",
        "apiextensions.k8s.io",
        "events.k8s.io",
    ] {
        assert!(names.contains(&group), "{group} missing from {names:?}");
    }
    let core = get(&client, "/api/v1").await;
    let resources = core.body["resources"].as_array().expect("resources");
    let config_maps = resources
        .iter()
        .find(|r| r["name"] == "configmaps")
        .expect("configmaps");
    assert_eq!(config_maps["namespaced"], true);
    assert_eq!(config_maps["shortNames"], json!(["cm"]));
    assert_eq!(
        config_maps["verbs"],
        json!([
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch"
        ])
    );
    let namespaces = resources
        .iter()
        .find(|r| r["name"] == "namespaces")
        .expect("namespaces");
    assert_eq!(namespaces["namespaced"], false);
    assert!(resources.iter().any(|r| r["name"] == "namespaces/status"));
}

#[tokio::test]
async fn a_missing_object_is_a_404_status_body_as_kube_apiserver_words_it() {
    let (_server, client) = server().await;
    let missing = get(&client, "/api/v1/namespaces/default/configmaps/nope").await;
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "configmaps \"nope\" not found", "reason": "NotFound",
            "details": {"name": "nope", "kind": "configmaps"}, "code": 404})
    );
    let grouped = get(&client, "/apis/apps/v1/namespaces/default/deployments/nope").await;
    assert_eq!(
        grouped.body["message"],
        "deployments.apps \"nope\" not found"
    );
    assert_eq!(grouped.body["details"]["group"], "apps");
}

#[tokio::test]
async fn the_default_and_kube_system_namespaces_exist() {
    let (_server, client) = server().await;
    for ns in ["default", "kube-system"] {
        let got = get(&client, &format!("/api/v1/namespaces/{ns}")).await;
        assert_eq!(got.status, 200);
        assert_eq!(got.body["status"]["phase"], "Active");
    }
}
