//! JSON merge patch, JSON patch and strategic merge patch.

use serde_json::json;

use crate::support::{config_map, post, raw, server, widget};

const CM: &str = "/api/v1/namespaces/default/configmaps/a";

#[tokio::test]
async fn a_merge_patch_sets_and_removes_fields() {
    let (_server, client) = server().await;
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({"k": "v", "gone": "x"})),
    )
    .await;
    let patched = raw(
        &client,
        "PATCH",
        CM,
        "application/merge-patch+json",
        Some(json!({"data": {"n": "1", "gone": null}})),
    )
    .await;
    assert_eq!(patched.body["data"], json!({"k": "v", "n": "1"}));
}

#[tokio::test]
async fn a_merge_patch_with_a_stale_resource_version_conflicts() {
    let (_server, client) = server().await;
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    let patch = json!({"metadata": {"resourceVersion": "1"}, "data": {"n": "1"}});
    let refused = raw(
        &client,
        "PATCH",
        CM,
        "application/merge-patch+json",
        Some(patch),
    )
    .await;
    assert_eq!(refused.status, 409);
    assert_eq!(refused.body["reason"], "Conflict");
}

#[tokio::test]
async fn a_json_patch_applies_its_operations_and_a_failed_test_is_422() {
    let (_server, client) = server().await;
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({"k": "v"})),
    )
    .await;
    let ops = json!([{"op": "add", "path": "/data/n", "value": "1"}, {"op": "remove", "path": "/data/k"}]);
    let patched = raw(
        &client,
        "PATCH",
        CM,
        "application/json-patch+json",
        Some(ops),
    )
    .await;
    assert_eq!(patched.body["data"], json!({"n": "1"}));
    let failing = json!([{"op": "test", "path": "/data/n", "value": "2"}]);
    let refused = raw(
        &client,
        "PATCH",
        CM,
        "application/json-patch+json",
        Some(failing),
    )
    .await;
    assert_eq!(refused.status, 422);
}

#[tokio::test]
async fn a_strategic_merge_patch_merges_containers_by_name() {
    let (_server, client) = server().await;
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}},
        "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}});
    let created = post(
        &client,
        "/apis/apps/v1/namespaces/default/deployments",
        deployment,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "b:2"}]}}}});
    let patched = raw(
        &client,
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/d",
        "application/strategic-merge-patch+json",
        Some(patch),
    )
    .await;
    let containers = &patched.body["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["image"], "a:1");
    assert_eq!(containers[1]["image"], "b:2");
}

#[tokio::test]
async fn a_strategic_merge_patch_of_a_custom_resource_is_415() {
    let (_server, client) = server().await;
    crate::support::install_widgets(&client).await;
    post(
        &client,
        "/apis/example.com/v1/namespaces/default/widgets",
        widget("w", json!({"size": 1})),
    )
    .await;
    let refused = raw(
        &client,
        "PATCH",
        "/apis/example.com/v1/namespaces/default/widgets/w",
        "application/strategic-merge-patch+json",
        Some(json!({"spec": {"size": 2}})),
    )
    .await;
    assert_eq!(refused.status, 415);
    assert_eq!(refused.body["reason"], "UnsupportedMediaType");
}

/// ObjectMeta's finalizers merge as a set under a strategic merge patch (kube's
/// `patchStrategy: merge`), and `$deleteFromPrimitiveList` takes one out.
#[tokio::test]
async fn a_strategic_merge_patch_adds_finalizers_and_deletes_one_from_the_list() {
    let (_server, client) = server().await;
    let mut cm = config_map("held", json!({"k": "v"}));
    cm["metadata"]["finalizers"] = json!(["example.com/a"]);
    assert_eq!(
        post(&client, "/api/v1/namespaces/default/configmaps", cm)
            .await
            .status,
        201
    );
    let path = "/api/v1/namespaces/default/configmaps/held";
    let strategic = "application/strategic-merge-patch+json";
    let added = raw(
        &client,
        "PATCH",
        path,
        strategic,
        Some(json!({"metadata": {"finalizers": ["example.com/b"]}})),
    )
    .await;
    assert_eq!(added.status, 200, "{}", added.body);
    assert_eq!(
        added.body["metadata"]["finalizers"],
        json!(["example.com/a", "example.com/b"])
    );
    let removed = raw(
        &client,
        "PATCH",
        path,
        strategic,
        Some(json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"]}})),
    )
    .await;
    assert_eq!(removed.status, 200, "{}", removed.body);
    assert_eq!(
        removed.body["metadata"]["finalizers"],
        json!(["example.com/b"])
    );
}
