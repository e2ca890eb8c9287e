//! Finalizers, owner-reference garbage collection and namespace deletion.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{config_map, get, post, raw, server};

const CMS: &str = "/api/v1/namespaces/default/configmaps";

async fn eventually_gone(client: &kube::Client, path: &str) {
    for _ in 0..100 {
        if get(client, path).await.status == 404 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{path} is still there");
}

fn owned_by(name: &str, owner: &Value, block: bool) -> Value {
    let mut cm = config_map(name, json!({}));
    cm["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": block}]);
    cm
}

#[tokio::test]
async fn an_object_with_finalizers_waits_for_them_before_it_goes() {
    let (_server, client) = server().await;
    let mut cm = config_map("a", json!({}));
    cm["metadata"]["finalizers"] = json!(["example.com/keep"]);
    post(&client, CMS, cm).await;
    let deleting = raw(
        &client,
        "DELETE",
        &format!("{CMS}/a"),
        "application/json",
        None,
    )
    .await;
    assert_eq!(deleting.status, 202);
    let still = get(&client, &format!("{CMS}/a")).await;
    assert!(still.body["metadata"]["deletionTimestamp"].is_string());
    raw(
        &client,
        "PATCH",
        &format!("{CMS}/a"),
        "application/merge-patch+json",
        Some(json!({"metadata": {"finalizers": null}})),
    )
    .await;
    eventually_gone(&client, &format!("{CMS}/a")).await;
}

#[tokio::test]
async fn background_deletion_collects_the_dependents() {
    let (_server, client) = server().await;
    let owner = post(&client, CMS, config_map("owner", json!({})))
        .await
        .body;
    post(&client, CMS, owned_by("child", &owner, false)).await;
    raw(
        &client,
        "DELETE",
        &format!("{CMS}/owner"),
        "application/json",
        None,
    )
    .await;
    eventually_gone(&client, &format!("{CMS}/child")).await;
}

#[tokio::test]
async fn foreground_deletion_removes_blocking_dependents_before_the_owner() {
    let (_server, client) = server().await;
    let owner = post(&client, CMS, config_map("owner", json!({})))
        .await
        .body;
    let mut child = owned_by("child", &owner, true);
    child["metadata"]["finalizers"] = json!(["example.com/hold"]);
    post(&client, CMS, child).await;
    let options =
        json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"});
    raw(
        &client,
        "DELETE",
        &format!("{CMS}/owner"),
        "application/json",
        Some(options),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let waiting = get(&client, &format!("{CMS}/owner")).await;
    assert_eq!(
        waiting.status, 200,
        "the owner waits for its blocking dependent"
    );
    assert_eq!(
        waiting.body["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    raw(
        &client,
        "PATCH",
        &format!("{CMS}/child"),
        "application/merge-patch+json",
        Some(json!({"metadata": {"finalizers": null}})),
    )
    .await;
    eventually_gone(&client, &format!("{CMS}/child")).await;
    eventually_gone(&client, &format!("{CMS}/owner")).await;
}

#[tokio::test]
async fn orphan_deletion_keeps_the_dependents_without_the_owner_reference() {
    let (_server, client) = server().await;
    let owner = post(&client, CMS, config_map("owner", json!({})))
        .await
        .body;
    post(&client, CMS, owned_by("child", &owner, false)).await;
    let options =
        json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"});
    raw(
        &client,
        "DELETE",
        &format!("{CMS}/owner"),
        "application/json",
        Some(options),
    )
    .await;
    eventually_gone(&client, &format!("{CMS}/owner")).await;
    let child = get(&client, &format!("{CMS}/child")).await;
    assert_eq!(child.status, 200);
    assert_eq!(child.body["metadata"]["ownerReferences"], json!([]));
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_content_and_refuses_new_content_meanwhile() {
    let (_server, client) = server().await;
    post(
        &client,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}}),
    )
    .await;
    let mut held = config_map("held", json!({}));
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    post(&client, "/api/v1/namespaces/doomed/configmaps", held).await;
    post(
        &client,
        "/api/v1/namespaces/doomed/configmaps",
        config_map("plain", json!({})),
    )
    .await;
    raw(
        &client,
        "DELETE",
        "/api/v1/namespaces/doomed",
        "application/json",
        None,
    )
    .await;
    eventually_gone(&client, "/api/v1/namespaces/doomed/configmaps/plain").await;
    let terminating = get(&client, "/api/v1/namespaces/doomed").await;
    assert_eq!(terminating.body["status"]["phase"], "Terminating");
    let refused = post(
        &client,
        "/api/v1/namespaces/doomed/configmaps",
        config_map("new", json!({})),
    )
    .await;
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.body["message"],
        "configmaps \"new\" is forbidden: unable to create new content in namespace doomed because it is being terminated"
    );
    raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/doomed/configmaps/held",
        "application/merge-patch+json",
        Some(json!({"metadata": {"finalizers": null}})),
    )
    .await;
    eventually_gone(&client, "/api/v1/namespaces/doomed").await;
}

/// kube-controller-manager's ServiceAccount controller: a new namespace gets a `default`
/// ServiceAccount, the namespaces there from the start have one, and a deleted one is made
/// again (a new uid).
#[tokio::test]
async fn every_namespace_has_a_default_service_account_made_again_when_deleted() {
    let (_server, client) = server().await;
    let account = |ns: &str| format!("/api/v1/namespaces/{ns}/serviceaccounts/default");
    let present = |ns: String| {
        let client = client.clone();
        async move {
            crate::support::wait_for(&format!("{ns}'s default ServiceAccount"), || {
                let client = client.clone();
                let path = account(&ns);
                async move {
                    let got = get(&client, &path).await;
                    if got.status == 200 {
                        Ok(got.body)
                    } else {
                        Err(format!("{}: {}", got.status, got.body))
                    }
                }
            })
            .await
        }
    };
    let first = present("default".into()).await;
    assert_eq!(first["kind"], "ServiceAccount");
    let team = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}});
    assert_eq!(post(&client, "/api/v1/namespaces", team).await.status, 201);
    let made = present("team".into()).await;
    let uid = made["metadata"]["uid"].clone();
    assert!(uid.as_str().is_some_and(|u| u.len() == 36), "{made}");

    let deleted = raw(
        &client,
        "DELETE",
        &account("team"),
        "application/json",
        None,
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    let again = crate::support::wait_for("team's default ServiceAccount made again", || {
        let client = client.clone();
        let path = account("team");
        let uid = uid.clone();
        async move {
            let got = get(&client, &path).await;
            if got.status == 200 && got.body["metadata"]["uid"] != uid {
                Ok(got.body)
            } else {
                Err(format!("{}: {}", got.status, got.body))
            }
        }
    })
    .await;
    assert_eq!(again["metadata"]["namespace"], "team");
}
