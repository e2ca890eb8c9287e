//! What a mutating webhook is called again for (reinvocation) and the userInfo a review
//! carries.

use serde_json::{Value, json};

use super::harness::{Reply, Webhook, configuration, hook, register};
use crate::support::http::send_trusting;
use crate::support::{config_map, post, server};

const CONFIG_MAPS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn an_if_needed_webhook_is_called_again_after_a_later_webhook_changed_the_object() {
    let (_server, client) = server().await;
    let label_once = |label: &'static str| {
        move |review: &Value| {
            if review["request"]["object"]["metadata"]["labels"][label].is_null() {
                Reply::patch(
                    json!([{"op": "add", "path": format!("/metadata/labels/{label}"), "value": "1"}]),
                )
            } else {
                Reply::allow()
            }
        }
    };
    let first = Webhook::start(&[], label_once("a")).await;
    let second = Webhook::start(&[], label_once("b")).await;
    let mut reinvoked = hook(
        "a.example.com",
        first.client_config(""),
        &["CREATE"],
        &["configmaps"],
    );
    reinvoked["reinvocationPolicy"] = json!("IfNeeded");
    // Configurations run in name order: "a-first" before "b-second".
    register(
        &client,
        true,
        configuration(
            true,
            "b-second",
            vec![hook(
                "b.example.com",
                second.client_config(""),
                &["CREATE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    register(
        &client,
        true,
        configuration(true, "a-first", vec![reinvoked]),
    )
    .await;
    let mut cm = config_map("twice", json!({}));
    cm["metadata"]["labels"] = json!({});
    let created = post(&client, CONFIG_MAPS, cm).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.body["metadata"]["labels"],
        json!({"a": "1", "b": "1"})
    );
    let calls = first.reviews();
    assert_eq!(
        calls.len(),
        2,
        "called again after b.example.com changed the object"
    );
    assert_eq!(
        calls[1]["request"]["object"]["metadata"]["labels"],
        json!({"a": "1", "b": "1"})
    );
    assert_eq!(
        second.reviews().len(),
        1,
        "reinvocationPolicy Never: called once"
    );
}

#[tokio::test]
async fn the_review_names_the_service_account_whose_token_the_request_carries() {
    let (server, client) = server().await;
    let webhook = Webhook::start(&[], |_| Reply::allow()).await;
    register(
        &client,
        false,
        configuration(
            false,
            "who",
            vec![hook(
                "who.example.com",
                webhook.client_config(""),
                &["CREATE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let account =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}});
    let account = post(
        &client,
        "/api/v1/namespaces/default/serviceaccounts",
        account,
    )
    .await;
    assert_eq!(account.status, 201, "{}", account.body);
    let request =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}});
    let answer = post(
        &client,
        "/api/v1/namespaces/default/serviceaccounts/robot/token",
        request,
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    let token = answer.body["status"]["token"].as_str().expect("a token");
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "config-writer"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]});
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "config-writer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "config-writer"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot"}]});
    for (path, object) in [
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
            role,
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            binding,
        ),
    ] {
        let made = post(&client, path, object).await;
        assert_eq!(made.status, 201, "{}", made.body);
    }
    let response = send_trusting(
        server.ca_pem(),
        "POST",
        &format!("{}{CONFIG_MAPS}", server.url()),
        &[
            ("content-type", "application/json"),
            ("authorization", &format!("Bearer {token}")),
        ],
        Some(&config_map("by-robot", json!({}))),
    )
    .await;
    assert_eq!(response.status, 201, "{}", response.body);
    let reviews = webhook.reviews();
    assert_eq!(reviews.len(), 1);
    assert_eq!(
        reviews[0]["request"]["userInfo"],
        json!({
            "username": "system:serviceaccount:default:robot",
            "uid": account.body["metadata"]["uid"],
            "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
        })
    );
}
