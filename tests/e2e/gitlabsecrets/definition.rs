//! "The definition": the CRD of `crds/`, served by the embedded API server.

use serde_json::json;
use wasm_operator_e2e::{chart_defaults, cluster_with, gitlabsecrets_crd};

/// The API server's answer to a request: `(status, body, warning headers)`.
async fn request(
    server: &wasm_operator_apiserver::ApiServer,
    method: &str,
    path: &str,
    content_type: &str,
    body: &serde_json::Value,
) -> (u16, serde_json::Value, Vec<String>) {
    let client = server.client().expect("client");
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(kube::client::Body::from(
            serde_json::to_vec(body).expect("json"),
        ))
        .expect("request");
    let response = client.send(request).await.expect("sent");
    let status = response.status().as_u16();
    let warnings = response
        .headers()
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect();
    let bytes = response.into_body().collect_bytes().await.expect("body");
    let body = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    (status, body, warnings)
}

const COLLECTION: &str = "/apis/apps.gitlab.com/v2alpha1/namespaces/gitlab/gitlabsecrets";

async fn served() -> wasm_operator_e2e::Cluster {
    let cluster = cluster_with(&[]).await;
    let setup = super::setup();
    use wasm_operator_runtime::backend::ClusterBackend as _;
    cluster
        .backend
        .create(&setup, gitlabsecrets_crd())
        .await
        .expect("CRD");
    cluster
        .backend
        .create(
            &setup,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gitlab"}}),
        )
        .await
        .expect("namespace");
    cluster
}

/// The chart defaults plus the fields earlier chart drafts rendered.
fn with_undeclared_fields() -> serde_json::Value {
    let mut object = chart_defaults();
    object["spec"]["policy"] = json!("Merge");
    object["spec"]["certificates"][0]["authority"]["expiry"] = json!("8760h");
    object
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chart_defaults_render_is_accepted_by_a_strict_create() {
    let cluster = served().await;
    let (status, body, _) = request(
        &cluster.server,
        "POST",
        &format!("{COLLECTION}?fieldValidation=Strict"),
        "application/json",
        &chart_defaults(),
    )
    .await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_create_rejects_spec_policy_and_authority_expiry() {
    let cluster = served().await;
    let (status, body, _) = request(
        &cluster.server,
        "POST",
        &format!("{COLLECTION}?fieldValidation=Strict"),
        "application/json",
        &with_undeclared_fields(),
    )
    .await;
    // kube-apiserver answers a strict decoding error with 400 BadRequest.
    assert_eq!(status, 400, "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(message.contains("spec.policy"), "{message}");
    assert!(message.contains("authority.expiry"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_side_apply_rejects_spec_policy() {
    let cluster = served().await;
    let mut object = chart_defaults();
    object["spec"]["policy"] = json!("Merge");
    let (status, body, _) = request(
        &cluster.server,
        "PATCH",
        &format!("{COLLECTION}/demo?fieldManager=test"),
        "application/apply-patch+yaml",
        &object,
    )
    .await;
    // kube-apiserver answers an applied field its schema does not declare with a 500 whose
    // message names the field (kubernetes/kubernetes#139253); a client sees exactly that.
    assert_eq!(status, 500, "{body}");
    assert_eq!(body["reason"], "InternalError", "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("failed to create typed patch object (")
            && message.ends_with(".spec.policy: field not declared in schema"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lax_create_stores_the_resource_without_the_fields_and_warns() {
    let cluster = served().await;
    let (status, body, warnings) = request(
        &cluster.server,
        "POST",
        COLLECTION,
        "application/json",
        &with_undeclared_fields(),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert!(body.pointer("/spec/policy").is_none(), "{body}");
    assert!(
        body.pointer("/spec/certificates/0/authority/expiry")
            .is_none(),
        "{body}"
    );
    let warnings = warnings.join("\n");
    assert!(warnings.contains("spec.policy"), "{warnings}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounds_and_enums_of_the_schema_are_enforced() {
    let cluster = served().await;
    // (case, generator, the answer: 201, or 422 with the field the message names)
    let cases = [
        (
            "a random length of 8 (valid)",
            json!({"type": "random", "key": "k", "charset": "alphanumeric", "length": 8}),
            None,
        ),
        (
            "a random length of 0",
            json!({"type": "random", "key": "k", "charset": "alphanumeric", "length": 0}),
            Some("spec.secrets[0].generators[0].length"),
        ),
        (
            "an unknown charset",
            json!({"type": "random", "key": "k", "charset": "emoji", "length": 8}),
            Some("spec.secrets[0].generators[0].charset"),
        ),
        (
            "an unknown generator type",
            json!({"type": "uuid", "key": "k"}),
            Some("spec.secrets[0].generators[0].type"),
        ),
        (
            "an RSA key of 1024 bits",
            json!({"type": "rsa", "key": "k", "bits": 1024}),
            Some("spec.secrets[0].generators[0].bits"),
        ),
    ];
    for (n, (case, generator, refused)) in cases.into_iter().enumerate() {
        let object = json!({"apiVersion": "apps.gitlab.com/v2alpha1", "kind": "GitLabSecrets",
            "metadata": {"name": format!("case-{n}"), "namespace": "gitlab"},
            "spec": {"secrets": [{"name": "s", "type": "Opaque", "generators": [generator]}]}});
        let (status, body, _) = request(
            &cluster.server,
            "POST",
            COLLECTION,
            "application/json",
            &object,
        )
        .await;
        match refused {
            None => assert_eq!(status, 201, "{case}: {body}"),
            Some(field) => {
                assert_eq!(status, 422, "{case}: {body}");
                let message = body["message"].as_str().unwrap_or_default();
                assert!(message.contains(field), "{case}: {message}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_update_rejects_spec_policy_and_authority_expiry_and_stores_nothing() {
    let cluster = served().await;
    let (status, stored, _) = request(
        &cluster.server,
        "POST",
        COLLECTION,
        "application/json",
        &chart_defaults(),
    )
    .await;
    assert_eq!(status, 201, "{stored}");
    let mut object = with_undeclared_fields();
    object["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"].clone();
    let (status, body, _) = request(
        &cluster.server,
        "PUT",
        &format!("{COLLECTION}/demo?fieldValidation=Strict"),
        "application/json",
        &object,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["reason"], "BadRequest", "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(message.contains("spec.policy"), "{message}");
    assert!(message.contains("authority.expiry"), "{message}");
    let (status, now, _) = request(
        &cluster.server,
        "GET",
        &format!("{COLLECTION}/demo"),
        "application/json",
        &json!(null),
    )
    .await;
    assert_eq!(status, 200, "{now}");
    assert_eq!(
        now["metadata"]["resourceVersion"], stored["metadata"]["resourceVersion"],
        "the refused update stored nothing"
    );
}
