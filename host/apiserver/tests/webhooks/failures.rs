//! Calls that fail (nothing listening, too slow, a wrong answer) end as `failurePolicy`
//! says: Fail refuses with kube-apiserver's 500, Ignore admits.

use std::time::Duration;

use serde_json::{Value, json};

use super::harness::{Reply, Webhook, configuration, hook, register};
use crate::support::{config_map, get, post, server};

const CONFIG_MAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A port nothing listens on (bound, then released).
async fn closed_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    port
}

fn with_policy(mut hook: Value, policy: &str) -> Value {
    hook["failurePolicy"] = json!(policy);
    hook
}

#[tokio::test]
async fn an_unreachable_webhook_refuses_under_fail_and_is_skipped_under_ignore() {
    let (server, client) = server().await;
    let port = closed_port().await;
    let url = format!("https://127.0.0.1:{port}/check");
    let client_config = json!({"url": url});
    register(
        &client,
        false,
        configuration(
            false,
            "a-fail",
            vec![with_policy(
                hook(
                    "fail.example.com",
                    client_config.clone(),
                    &["CREATE"],
                    &["configmaps"],
                ),
                "Fail",
            )],
        ),
    )
    .await;
    let refused = post(&client, CONFIG_MAPS, config_map("f", json!({}))).await;
    assert_eq!(refused.status, 500, "{}", refused.body);
    assert_eq!(refused.body["reason"], "InternalError");
    let message = refused.body["message"].as_str().unwrap_or_default();
    let expected = format!(
        "Internal error occurred: failed calling webhook \"fail.example.com\": failed to call webhook: Post \"{url}?timeout=10s\": dial tcp 127.0.0.1:{port}: "
    );
    assert!(message.starts_with(&expected), "{message}");
    assert_eq!(
        refused.body["details"]["causes"][0]["message"].as_str(),
        message.strip_prefix("Internal error occurred: ")
    );
    assert_eq!(get(&client, &format!("{CONFIG_MAPS}/f")).await.status, 404);
    assert_eq!(server.counts().webhook("fail.example.com", "failed"), 1);

    // The same webhook under Ignore: the write goes through.
    let ignore = configuration(
        false,
        "a-fail",
        vec![with_policy(
            hook(
                "fail.example.com",
                client_config,
                &["CREATE"],
                &["configmaps"],
            ),
            "Ignore",
        )],
    );
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/a-fail";
    let current = get(&client, path).await.body;
    let mut replaced = ignore;
    replaced["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
    let put = crate::support::raw(&client, "PUT", path, "application/json", Some(replaced)).await;
    assert_eq!(put.status, 200, "{}", put.body);
    let created = post(&client, CONFIG_MAPS, config_map("f", json!({}))).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(server.counts().webhook("fail.example.com", "ignored"), 1);
}

#[tokio::test]
async fn a_webhook_slower_than_its_timeout_fails_as_its_failure_policy_says() {
    let (server, client) = server().await;
    let slow = |_: &Value| Reply {
        response: json!({"allowed": true}),
        delay: Duration::from_secs(4),
    };
    let fail = Webhook::start(&[], slow).await;
    let ignore = Webhook::start(&[], slow).await;
    let mut strict = with_policy(
        hook(
            "strict.example.com",
            fail.client_config(""),
            &["CREATE"],
            &["configmaps"],
        ),
        "Fail",
    );
    strict["timeoutSeconds"] = json!(1);
    strict["objectSelector"] = json!({"matchLabels": {"policy": "fail"}});
    let mut lenient = with_policy(
        hook(
            "lenient.example.com",
            ignore.client_config(""),
            &["CREATE"],
            &["configmaps"],
        ),
        "Ignore",
    );
    lenient["timeoutSeconds"] = json!(1);
    lenient["objectSelector"] = json!({"matchLabels": {"policy": "ignore"}});
    register(
        &client,
        false,
        configuration(false, "slow", vec![strict, lenient]),
    )
    .await;
    let labelled = |name: &str, policy: &str| {
        let mut cm = config_map(name, json!({}));
        cm["metadata"]["labels"] = json!({"policy": policy});
        cm
    };
    let refused = post(&client, CONFIG_MAPS, labelled("s1", "fail")).await;
    assert_eq!(refused.status, 500, "{}", refused.body);
    let message = refused.body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Internal error occurred: failed calling webhook \"strict.example.com\": failed to call webhook: Post \"")
            && message.ends_with("?timeout=1s\": context deadline exceeded"),
        "{message}"
    );
    let created = post(&client, CONFIG_MAPS, labelled("s2", "ignore")).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let counts = server.counts();
    assert_eq!(counts.webhook("strict.example.com", "failed"), 1);
    assert_eq!(counts.webhook("lenient.example.com", "ignored"), 1);
}

#[tokio::test]
async fn an_answer_for_another_uid_is_a_failed_call() {
    let (_server, client) = server().await;
    let webhook = Webhook::start(&[], |_| {
        Reply::with(json!({"uid": "not-the-request", "allowed": true}))
    })
    .await;
    register(
        &client,
        false,
        configuration(
            false,
            "uid",
            vec![hook(
                "uid.example.com",
                webhook.client_config(""),
                &["CREATE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let refused = post(&client, CONFIG_MAPS, config_map("u", json!({}))).await;
    assert_eq!(refused.status, 500, "{}", refused.body);
    let uid = webhook.reviews()[0]["request"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        refused.body["message"],
        format!(
            "Internal error occurred: failed calling webhook \"uid.example.com\": received invalid webhook response: expected response.uid=\"{uid}\", got \"not-the-request\""
        )
    );
}

#[tokio::test]
async fn a_certificate_the_ca_bundle_does_not_sign_is_a_failed_call() {
    let (_server, client) = server().await;
    let webhook = Webhook::start(&[], |_| Reply::allow()).await;
    let other = Webhook::start(&[], |_| Reply::allow()).await;
    let client_config = json!({"url": webhook.url(""), "caBundle": other.ca_bundle});
    register(
        &client,
        false,
        configuration(
            false,
            "tls",
            vec![hook(
                "tls.example.com",
                client_config,
                &["CREATE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let refused = post(&client, CONFIG_MAPS, config_map("t", json!({}))).await;
    assert_eq!(refused.status, 500, "{}", refused.body);
    let message = refused.body["message"].as_str().unwrap_or_default();
    assert!(
        message
            .contains("failed calling webhook \"tls.example.com\": failed to call webhook: Post"),
        "{message}"
    );
    assert!(
        message.contains("tls: invalid peer certificate"),
        "{message}"
    );
    assert!(webhook.reviews().is_empty());
}
