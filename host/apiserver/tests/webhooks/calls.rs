//! What a webhook receives and what its answer does: mutations, denials, warnings, delete
//! admission, and mutation before the server's schema with validation after it.

use serde_json::{Value, json};

use super::harness::{Reply, Webhook, configuration, hook, register};
use crate::support::{config_map, get, install_widgets, post, raw, server, widget};

const CONFIG_MAPS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn a_mutating_webhooks_json_patch_appears_on_the_created_object() {
    let (server, client) = server().await;
    let webhook = Webhook::start(&[], |_| {
        Reply::patch(
            json!([{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}]),
        )
    })
    .await;
    register(
        &client,
        true,
        configuration(
            true,
            "labeller",
            vec![hook(
                "label.example.com",
                webhook.client_config("mutate"),
                &["CREATE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let created = post(
        &client,
        &format!("{CONFIG_MAPS}?fieldManager=tester"),
        config_map("m", json!({"k": "v"})),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.body["metadata"]["labels"],
        json!({"mutated": "yes"})
    );
    let stored = get(&client, &format!("{CONFIG_MAPS}/m")).await;
    assert_eq!(stored.body["metadata"]["labels"], json!({"mutated": "yes"}));
    assert_eq!(server.counts().webhook("label.example.com", "allowed"), 1);
    let reviews = webhook.reviews();
    assert_eq!(reviews.len(), 1);
    let review = &reviews[0];
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    let request = &review["request"];
    assert!(
        request["uid"].as_str().is_some_and(|u| !u.is_empty()),
        "{request}"
    );
    assert_eq!(
        request["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(request["requestKind"], request["kind"]);
    assert_eq!(request["requestResource"], request["resource"]);
    assert_eq!(request["name"], "m");
    assert_eq!(request["namespace"], "default");
    assert_eq!(request["operation"], "CREATE");
    assert_eq!(
        request["userInfo"],
        json!({"username": "wasm-operator-admin", "groups": ["system:masters", "system:authenticated"]})
    );
    assert_eq!(request["object"]["data"], json!({"k": "v"}));
    assert_eq!(request["oldObject"], Value::Null);
    assert_eq!(request["dryRun"], false);
    assert_eq!(
        request["options"],
        json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "tester"})
    );
}

#[tokio::test]
async fn a_denial_refuses_the_write_with_kube_apiservers_status() {
    let (server, client) = server().await;
    let webhook = Webhook::start(&[], |_| {
        Reply::with(json!({"allowed": false, "status": {"message": "data.k must not be v"}}))
    })
    .await;
    register(
        &client,
        false,
        configuration(
            false,
            "deny",
            vec![hook(
                "deny.example.com",
                webhook.client_config(""),
                &["CREATE", "UPDATE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let refused = post(&client, CONFIG_MAPS, config_map("d", json!({"k": "v"}))).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.body,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "configmaps \"d\" is forbidden: admission webhook \"deny.example.com\" denied the request: data.k must not be v",
            "reason": "Forbidden",
            "details": {"name": "d", "kind": "configmaps"},
            "code": 403,
        })
    );
    assert_eq!(get(&client, &format!("{CONFIG_MAPS}/d")).await.status, 404);
    assert_eq!(server.counts().webhook("deny.example.com", "denied"), 1);
}

#[tokio::test]
async fn a_denial_keeps_the_code_and_reason_the_webhook_gives() {
    let (_server, client) = server().await;
    let webhook = Webhook::start(&[], |_| {
        Reply::with(json!({"allowed": false, "status": {"code": 422, "reason": "Invalid", "message": "spec is wrong"}}))
    })
    .await;
    register(
        &client,
        false,
        configuration(
            false,
            "deny",
            vec![hook(
                "deny.example.com",
                webhook.client_config(""),
                &["*"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let refused = post(&client, CONFIG_MAPS, config_map("d", json!({}))).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.body["reason"], "Invalid");
    assert_eq!(
        refused.body["message"],
        "configmaps \"d\" is forbidden: admission webhook \"deny.example.com\" denied the request: spec is wrong"
    );
}

#[tokio::test]
async fn webhook_warnings_are_warning_headers_kubectl_prints() {
    let (server, client) = server().await;
    let webhook = Webhook::start(&[], |_| {
        Reply::with(json!({"allowed": true, "warnings": ["data.k is deprecated, use data.key"]}))
    })
    .await;
    register(
        &client,
        false,
        configuration(
            false,
            "warn",
            vec![hook(
                "warn.example.com",
                webhook.client_config(""),
                &["CREATE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let created = post(&client, CONFIG_MAPS, config_map("w1", json!({"k": "v"}))).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.headers.get("warning").and_then(|v| v.to_str().ok()),
        Some("299 - \"data.k is deprecated, use data.key\"")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: w2\ndata:\n  k: v\n";
    let mut child = tokio::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["apply", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl runs (.ci/run installs it)");
    {
        use tokio::io::AsyncWriteExt as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(manifest.as_bytes())
            .await
            .expect("manifest");
    }
    let output = child.wait_with_output().await.expect("kubectl finishes");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("Warning: data.k is deprecated, use data.key"),
        "{stderr}"
    );
}

#[tokio::test]
async fn delete_admission_sees_the_old_object_and_can_refuse() {
    let (server, client) = server().await;
    let webhook = Webhook::start(&[], |review| {
        let protected = review["request"]["oldObject"]["metadata"]["labels"]["protected"] == "true";
        if protected {
            Reply::with(json!({"allowed": false, "status": {"message": "protected"}}))
        } else {
            Reply::allow()
        }
    })
    .await;
    register(
        &client,
        false,
        configuration(
            false,
            "deletes",
            vec![hook(
                "deletes.example.com",
                webhook.client_config(""),
                &["DELETE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let mut kept = config_map("kept", json!({"k": "v"}));
    kept["metadata"]["labels"] = json!({"protected": "true"});
    assert_eq!(post(&client, CONFIG_MAPS, kept).await.status, 201);
    assert_eq!(
        post(&client, CONFIG_MAPS, config_map("gone", json!({})))
            .await
            .status,
        201
    );
    assert!(webhook.reviews().is_empty(), "CREATE is not in the rules");
    let refused = raw(
        &client,
        "DELETE",
        &format!("{CONFIG_MAPS}/kept"),
        "application/json",
        None,
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "configmaps \"kept\" is forbidden: admission webhook \"deletes.example.com\" denied the request: protected"
    );
    assert_eq!(
        get(&client, &format!("{CONFIG_MAPS}/kept")).await.status,
        200
    );
    let deleted = raw(
        &client,
        "DELETE",
        &format!("{CONFIG_MAPS}/gone"),
        "application/json",
        None,
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    let reviews = webhook.reviews();
    assert_eq!(reviews.len(), 2);
    let request = &reviews[0]["request"];
    assert_eq!(request["operation"], "DELETE");
    assert_eq!(request["object"], Value::Null);
    assert_eq!(request["oldObject"]["metadata"]["name"], "kept");
    assert_eq!(request["oldObject"]["data"], json!({"k": "v"}));
    assert_eq!(request["options"]["kind"], "DeleteOptions");
    assert_eq!(server.counts().webhook("deletes.example.com", "allowed"), 1);
}

#[tokio::test]
async fn mutation_runs_before_schema_validation_and_validation_sees_the_defaulted_object() {
    let (_server, client) = server().await;
    install_widgets(&client).await;
    // The mutating webhook sets spec.size from the label `size`; the schema allows 1..10.
    let mutator = Webhook::start(&[], |review| {
        let size: i64 = review["request"]["object"]["metadata"]["labels"]["size"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        Reply::patch(json!([{"op": "replace", "path": "/spec/size", "value": size}]))
    })
    .await;
    let validator = Webhook::start(&[], |_| Reply::allow()).await;
    register(
        &client,
        true,
        configuration(
            true,
            "sizer",
            vec![hook(
                "size.example.com",
                mutator.client_config(""),
                &["CREATE"],
                &["widgets"],
            )],
        ),
    )
    .await;
    register(
        &client,
        false,
        configuration(
            false,
            "check",
            vec![hook(
                "check.example.com",
                validator.client_config(""),
                &["CREATE"],
                &["widgets"],
            )],
        ),
    )
    .await;
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let mut too_big = widget("big", json!({"size": 2}));
    too_big["metadata"]["labels"] = json!({"size": "50"});
    let refused = post(&client, widgets, too_big).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused.body["message"].as_str().is_some_and(|m| m.contains(
            "spec.size: Invalid value: 50: spec.size in body should be less than or equal to 10"
        )),
        "{}",
        refused.body
    );
    assert!(
        validator.reviews().is_empty(),
        "validation never ran on a refused object"
    );
    let mut fine = widget("fine", json!({"size": 2}));
    fine["metadata"]["labels"] = json!({"size": "7"});
    let created = post(&client, widgets, fine).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["spec"], json!({"size": 7, "color": "red"}));
    let seen = validator.reviews();
    assert_eq!(seen.len(), 1);
    assert_eq!(mutator.reviews().len(), 2);
    assert_eq!(
        seen[0]["request"]["object"]["spec"],
        json!({"size": 7, "color": "red"})
    );
}
