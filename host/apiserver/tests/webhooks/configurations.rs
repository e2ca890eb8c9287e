//! The configurations as built-in kinds: served, defaulted and validated on write as
//! kube-apiserver does; dry runs reach only webhooks without side effects.

use serde_json::json;

use super::harness::{Reply, Webhook, configuration, hook, path, register};
use crate::support::{config_map, get, post, server};

fn url_config() -> serde_json::Value {
    json!({"url": "https://hooks.example.com/validate"})
}

#[tokio::test]
async fn a_configuration_is_refused_with_the_offending_field_named() {
    let (_server, client) = server().await;
    let base = || {
        hook(
            "valid.example.com",
            url_config(),
            &["CREATE"],
            &["configmaps"],
        )
    };
    let with = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut h = base();
        f(&mut h);
        h
    };
    let rows: Vec<(&str, Vec<serde_json::Value>, Option<&str>)> = vec![
        ("valid", vec![base()], None),
        (
            "no sideEffects",
            vec![with(&|h| {
                h.as_object_mut().map(|m| m.remove("sideEffects"));
            })],
            Some("webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"),
        ),
        (
            "sideEffects Some",
            vec![with(&|h| h["sideEffects"] = json!("Some"))],
            Some(
                "webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
            ),
        ),
        (
            "no v1 review",
            vec![with(&|h| h["admissionReviewVersions"] = json!(["v2"]))],
            Some(
                "webhooks[0].admissionReviewVersions: Invalid value: []string{\"v2\"}: must include at least one of v1, v1beta1",
            ),
        ),
        (
            "timeout 31",
            vec![with(&|h| h["timeoutSeconds"] = json!(31))],
            Some(
                "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
            ),
        ),
        (
            "url and service",
            vec![with(&|h| {
                h["clientConfig"]["service"] = json!({"name": "s", "namespace": "default"})
            })],
            Some(
                "webhooks[0].clientConfig: Required value: exactly one of url or service is required",
            ),
        ),
        (
            "http url",
            vec![with(&|h| {
                h["clientConfig"]["url"] = json!("http://hooks.example.com/")
            })],
            Some(
                "webhooks[0].clientConfig.url: Invalid value: \"http://hooks.example.com/\": 'https' is the only allowed URL scheme",
            ),
        ),
        (
            "duplicate names",
            vec![base(), base()],
            Some("webhooks[1].name: Duplicate value: \"valid.example.com\""),
        ),
        (
            "match conditions",
            vec![with(&|h| {
                h["matchConditions"] = json!([{"name": "c", "expression": "true"}])
            })],
            Some(
                "webhooks[0].matchConditions: Forbidden: match conditions (CEL) are not served by this API server",
            ),
        ),
    ];
    for (i, (what, hooks, expected)) in rows.into_iter().enumerate() {
        let name = format!("row-{i}");
        let answer = post(&client, path(false), configuration(false, &name, hooks)).await;
        match expected {
            None => assert_eq!(answer.status, 201, "{what}: {}", answer.body),
            Some(error) => {
                assert_eq!(answer.status, 422, "{what}: {}", answer.body);
                assert_eq!(
                    answer.body["message"],
                    format!(
                        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"{name}\" is invalid: {error}"
                    ),
                    "{what}"
                );
                assert_eq!(answer.body["reason"], "Invalid");
            }
        }
    }
}

#[tokio::test]
async fn a_configuration_gets_kube_apiservers_defaults_and_is_served_as_a_built_in_kind() {
    let (_server, client) = server().await;
    let mut with_service = hook(
        "svc.example.com",
        json!({"service": {"name": "s", "namespace": "default"}}),
        &["CREATE"],
        &["configmaps"],
    );
    with_service["rules"][0]
        .as_object_mut()
        .map(|r| r.remove("scope"));
    register(
        &client,
        true,
        configuration(true, "defaults", vec![with_service]),
    )
    .await;
    let stored = get(
        &client,
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/defaults",
    )
    .await;
    assert_eq!(stored.status, 200);
    let webhook = &stored.body["webhooks"][0];
    assert_eq!(webhook["failurePolicy"], "Fail");
    assert_eq!(webhook["matchPolicy"], "Equivalent");
    assert_eq!(webhook["timeoutSeconds"], 10);
    assert_eq!(webhook["namespaceSelector"], json!({}));
    assert_eq!(webhook["objectSelector"], json!({}));
    assert_eq!(webhook["reinvocationPolicy"], "Never");
    assert_eq!(webhook["rules"][0]["scope"], "*");
    assert_eq!(webhook["clientConfig"]["service"]["port"], 443);
    let discovery = get(&client, "/apis/admissionregistration.k8s.io/v1").await;
    let names: Vec<&str> = discovery.body["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "mutatingwebhookconfigurations",
            "validatingwebhookconfigurations"
        ]
    );
    assert_eq!(discovery.body["resources"][0]["namespaced"], false);
}

#[tokio::test]
async fn a_dry_run_reaches_a_none_on_dry_run_webhook_with_dry_run_set_and_stores_nothing() {
    let (server, client) = server().await;
    let webhook = Webhook::start(&[], |_| Reply::allow()).await;
    let mut on_dry_run = hook(
        "dry.example.com",
        webhook.client_config(""),
        &["CREATE"],
        &["configmaps"],
    );
    on_dry_run["sideEffects"] = json!("NoneOnDryRun");
    register(
        &client,
        false,
        configuration(false, "dry", vec![on_dry_run]),
    )
    .await;
    let answer = post(
        &client,
        "/api/v1/namespaces/default/configmaps?dryRun=All",
        config_map("dry", json!({})),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    let reviews = webhook.reviews();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0]["request"]["dryRun"], true);
    assert_eq!(reviews[0]["request"]["options"]["dryRun"], json!(["All"]));
    assert_eq!(server.counts().webhook("dry.example.com", "allowed"), 1);
    assert_eq!(
        get(&client, "/api/v1/namespaces/default/configmaps/dry")
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn kubectl_lists_the_configurations() {
    let (server, client) = server().await;
    register(
        &client,
        false,
        configuration(
            false,
            "listed",
            vec![hook(
                "listed.example.com",
                url_config(),
                &["CREATE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let output = tokio::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["get", "validatingwebhookconfigurations", "-o", "name"])
        .output()
        .await
        .expect("kubectl runs (.ci/run installs it)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        stdout.trim(),
        "validatingwebhookconfiguration.admissionregistration.k8s.io/listed"
    );
}

#[tokio::test]
async fn webhooks_are_not_called_for_the_webhook_configurations_themselves() {
    let (server, client) = server().await;
    let webhook = Webhook::start(&[], |_| {
        Reply::with(json!({"allowed": false, "status": {"message": "nothing passes"}}))
    })
    .await;
    let everything = json!({
        "name": "everything.example.com",
        "clientConfig": webhook.client_config(""),
        "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*", "*/*"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    });
    register(
        &client,
        false,
        configuration(false, "deny-all", vec![everything]),
    )
    .await;
    let refused = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("c", json!({})),
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        server.counts().webhook("everything.example.com", "denied"),
        1
    );
    let deleted = crate::support::raw(
        &client,
        "DELETE",
        &format!("{}/deny-all", path(false)),
        "application/json",
        None,
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_eq!(
        webhook.reviews().len(),
        1,
        "only the ConfigMap create was reviewed"
    );
}
