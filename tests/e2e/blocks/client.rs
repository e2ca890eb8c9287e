//! Contract 1.1's client calls through the real host: a delete under preconditions reaches
//! the API server (which refuses a stale one with 409), and a ServiceAccount token is
//! requested on the `token` subresource the plugin declared.

use serde_json::json;

use super::{Harness, in_ns};

fn config_map(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_with_a_stale_uid_precondition_is_refused_by_the_server_and_deletes_nothing() {
    let h = Harness::start().await;
    let kept = h.create(config_map("kept")).await;
    h.scenario(
        "stale",
        "delete-unchanged",
        json!({"name": "kept", "uid": "0000-stale"}),
    )
    .await;
    let outcome = h.first_outcome("stale").await;
    let error = outcome["error"].as_str().unwrap_or_default();
    assert_eq!(
        error,
        format!(
            "conflict: Operation cannot be fulfilled on configmaps \"kept\": Precondition \
             failed: UID in precondition: 0000-stale, UID in object meta: {}",
            kept["metadata"]["uid"].as_str().unwrap_or_default()
        ),
        "{outcome}"
    );
    let still = h.must(&in_ns("v1", "ConfigMap", "kept")).await;
    assert_eq!(still["metadata"]["uid"], kept["metadata"]["uid"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_with_the_current_uid_and_resource_version_deletes() {
    let h = Harness::start().await;
    h.create(config_map("gone")).await;
    h.scenario("current", "delete-unchanged", json!({"name": "gone"}))
        .await;
    assert_eq!(h.first_outcome("current").await, json!({"deleted": true}));
    assert!(h.object(&in_ns("v1", "ConfigMap", "gone")).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_token_request_returns_a_token_the_api_server_signed_for_the_service_account() {
    let h = Harness::start().await;
    let account = h
        .create(json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "openbao-auth", "namespace": "ns"}}))
        .await;
    h.scenario(
        "login",
        "token",
        json!({"serviceAccount": "openbao-auth", "audience": "openbao", "expirySeconds": 900}),
    )
    .await;
    let outcome = h.first_outcome("login").await;
    assert!(outcome.get("expires").is_some(), "{outcome}");
    let secret = h.must(&in_ns("v1", "Secret", "login-token")).await;
    let token = secret["data"]["token"]
        .as_str()
        .and_then(|b| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.decode(b).ok()
        })
        .and_then(|b| String::from_utf8(b).ok())
        .expect("the Secret holds the token");
    let claims = h
        .cluster
        .server
        .review_token(&token)
        .expect("signed by the API server");
    assert_eq!(claims["sub"], "system:serviceaccount:ns:openbao-auth");
    assert_eq!(claims["aud"], json!(["openbao"]));
    assert_eq!(
        claims["kubernetes.io"]["serviceaccount"]["uid"],
        account["metadata"]["uid"]
    );
    let lifetime = claims["exp"].as_i64().zip(claims["iat"].as_i64());
    assert_eq!(lifetime.map(|(e, i)| e - i), Some(900));
    let expires: wasm_operator_sdk::k8s_openapi::jiff::Timestamp = outcome["expires"]
        .as_str()
        .unwrap_or_default()
        .parse()
        .expect("RFC 3339");
    assert_eq!(Some(expires.as_second()), claims["exp"].as_i64());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_request_is_refused_outside_the_namespace_reach_and_for_a_missing_account() {
    let h = Harness::start().await;
    // (scenario, params, the error the pass reports)
    let cases = [
        (
            "elsewhere",
            json!({"namespace": "kube-system", "serviceAccount": "default"}),
            "forbidden: plugin blocks: may not create the token subresource of \
             v1/ServiceAccount in namespace \"kube-system\": it may reach its primary's \
             namespace \"ns\"",
        ),
        (
            "missing",
            json!({"serviceAccount": "nobody"}),
            "not found: serviceaccounts \"nobody\" not found",
        ),
        (
            "too-short",
            json!({"serviceAccount": "default", "expirySeconds": 60}),
            "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
        ),
    ];
    // Every namespace has its `default` ServiceAccount (kube's ServiceAccount controller).
    wasm_operator_e2e::eventually("ns's default ServiceAccount", crate::WAIT, || async {
        h.object(&in_ns("v1", "ServiceAccount", "default")).await
    })
    .await;
    for (name, params, expected) in cases {
        h.scenario(name, "token", params).await;
        let outcome = h.first_outcome(name).await;
        let error = outcome["error"].as_str().unwrap_or_default();
        assert!(error.contains(expected), "{name}: {outcome}");
        assert!(
            h.object(&in_ns("v1", "Secret", &format!("{name}-token")))
                .await
                .is_none()
        );
    }
}
