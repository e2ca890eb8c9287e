//! Admission from plugins (contract 1.2) end to end: the gatekeeper test plugin's
//! `default` and `validate` served by the host's webhook server over HTTPS, with the
//! certificate the host manages in a Secret, answering AdmissionReviews as kube-apiserver
//! sends them.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use wasm_operator::operator::{OperatorConfig, RunningOperator};
use wasm_operator_e2e::webhooks::{kubectl, webhook_config};
use wasm_operator_e2e::{Cluster, cluster_with, counter_rises, eventually, metric, setup};
use wasm_operator_runtime::backend::ClusterBackend;

const WAIT: Duration = Duration::from_secs(30);
const GROUP: &str = "tests.wasm-operator.dev";
/// The Service name the managed certificate is for.
const SERVER_NAME: &str = "wasm-operator.default.svc";

fn crd(kind: &str, plural: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}],
        },
    })
}

/// The CRDs of the gatekeeper's kinds.
pub fn crds() -> Vec<Value> {
    vec![crd("Gadget", "gadgets"), crd("Gizmo", "gizmos")]
}

fn gatekeeper(file: &str) -> Vec<u8> {
    std::fs::read(wasm_operator::cli::test_plugin_dir().join(file)).expect("a gatekeeper build")
}

struct Harness {
    cluster: Cluster,
    operator: RunningOperator,
    plugins: tempfile::TempDir,
}

impl Harness {
    async fn start() -> Self {
        wasm_operator_e2e::init_logs();
        let cluster = cluster_with(&crds()).await;
        let plugins = tempfile::tempdir().expect("plugins");
        std::fs::write(
            plugins.path().join("gatekeeper.wasm"),
            gatekeeper("gatekeeper-reconciler.wasm"),
        )
        .expect("the gatekeeper is copied");
        let mut config = OperatorConfig::new(plugins.path());
        config.watch_interval = Some(Duration::from_millis(100));
        config.webhook = Some(webhook_config());
        let operator = cluster
            .start_operator(wasm_operator_e2e::shared_cache(), config)
            .await;
        Self {
            cluster,
            operator,
            plugins,
        }
    }

    /// POSTs `review` to `path` over HTTPS, trusting the managed CA, as the API server
    /// does: the HTTP status and the body.
    async fn post(&self, path: &str, review: &Value) -> (u16, Value) {
        let ca = self.operator.webhook_ca().expect("a managed CA");
        post(
            self.operator.webhook_addr().expect("serving"),
            ca,
            SERVER_NAME,
            path,
            review,
        )
        .await
        .expect("the webhook answers")
    }

    fn reviews(&self, phase: &str, outcome: &str) -> u64 {
        metric(
            &self.operator.metrics().render(),
            &format!(
                "wasm_operator_admission_reviews_total{{plugin=\"gatekeeper\",phase=\"{phase}\",outcome=\"{outcome}\"}}"
            ),
        )
    }
}

/// One HTTPS POST with a fresh connection: the status code and the JSON body.
async fn post(
    addr: std::net::SocketAddr,
    ca_pem: &str,
    server_name: &str,
    path: &str,
    body: &Value,
) -> Result<(u16, Value), String> {
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots
            .add(cert.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let name = rustls::pki_types::ServerName::try_from(server_name.to_owned())
        .map_err(|e| e.to_string())?;
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS: {e}"))?;
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {server_name}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tls.write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    // A close_notify-less close is fine: the whole answer has arrived by then.
    let _ = tls.read_to_end(&mut response).await;
    let text = String::from_utf8_lossy(&response);
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no HTTP answer: {text}"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status in {head}"))?;
    let json = serde_json::from_str(rest).unwrap_or(Value::String(rest.to_owned()));
    Ok((status, json))
}

/// An AdmissionReview as kube-apiserver sends it for a write of `object`.
fn review(operation: &str, kind: &str, object: Option<Value>, old: Option<Value>) -> Value {
    let plural = format!("{}s", kind.to_lowercase());
    let name = object
        .as_ref()
        .or(old.as_ref())
        .and_then(|o| o.pointer("/metadata/name"))
        .cloned()
        .unwrap_or(json!(""));
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "0df28fbd-5f5f-4f5e-8d9c-9b4a9f3f1a01",
        "kind": {"group": GROUP, "version": "v1", "kind": kind},
        "resource": {"group": GROUP, "version": "v1", "resource": plural},
        "requestKind": {"group": GROUP, "version": "v1", "kind": kind},
        "requestResource": {"group": GROUP, "version": "v1", "resource": plural},
        "name": name, "namespace": "ns", "operation": operation,
        "userInfo": {"username": "alice", "uid": "alice-uid", "groups": ["system:authenticated"]},
        "object": object, "oldObject": old, "dryRun": false,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}})
}

fn gadget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Gadget",
        "metadata": {"name": name, "namespace": "ns"}, "spec": spec})
}

fn patch_of(response: &Value) -> Value {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(response["response"]["patch"].as_str().expect("a patch"))
        .expect("base64");
    serde_json::from_slice(&bytes).expect("a JSON patch")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_is_defaulted_by_the_plugin_as_a_json_patch_with_its_warning() {
    let h = Harness::start().await;
    let (status, answer) = h
        .post(
            "/admission/gatekeeper/default",
            &review(
                "CREATE",
                "Gadget",
                Some(gadget("g", json!({"mode": "x"}))),
                None,
            ),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let response = &answer["response"];
    assert_eq!(response["uid"], "0df28fbd-5f5f-4f5e-8d9c-9b4a9f3f1a01");
    assert_eq!(response["allowed"], true);
    assert_eq!(response["patchType"], "JSONPatch");
    assert_eq!(
        patch_of(&answer),
        json!([{"op": "add", "path": "/spec/size", "value": 1}])
    );
    assert_eq!(response["warnings"], json!(["spec.size defaulted to 1"]));
    // A size already set is left alone: no patch at all.
    let (_, answer) = h
        .post(
            "/admission/gatekeeper/default",
            &review(
                "UPDATE",
                "Gadget",
                Some(gadget("g", json!({"size": 4}))),
                Some(gadget("g", json!({}))),
            ),
        )
        .await;
    assert_eq!(answer["response"]["allowed"], true);
    assert!(answer["response"].get("patch").is_none(), "{answer}");
    assert_eq!(h.reviews("default", "defaulted"), 1);
    assert_eq!(h.reviews("default", "allowed"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaulting_that_renames_the_object_is_the_plugins_failure() {
    let h = Harness::start().await;
    let (_, answer) = h
        .post(
            "/admission/gatekeeper/default",
            &review(
                "CREATE",
                "Gadget",
                Some(gadget("r", json!({"mode": "rename"}))),
                None,
            ),
        )
        .await;
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    assert_eq!(
        answer["response"]["status"]["message"],
        "plugin gatekeeper failed in admission: its defaulting changed /metadata/name, which admission may not change"
    );
    assert_eq!(h.reviews("default", "failed"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_object_is_denied_422_with_the_field_named() {
    let h = Harness::start().await;
    let (status, answer) = h
        .post(
            "/admission/gatekeeper/validate",
            &review(
                "CREATE",
                "Gadget",
                Some(gadget("big", json!({"size": 11}))),
                None,
            ),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        answer["response"],
        json!({"uid": "0df28fbd-5f5f-4f5e-8d9c-9b4a9f3f1a01", "allowed": false,
            "status": {"status": "Failure", "code": 422, "reason": "Invalid",
                "message": "Gadget.tests.wasm-operator.dev \"big\" is invalid: spec.size: Invalid value: 11: must be at most 10",
                "details": {"name": "big", "group": GROUP, "kind": "Gadget",
                    "causes": [{"reason": "FieldValueInvalid", "field": "spec.size",
                        "message": "Invalid value: 11: must be at most 10"}]}}})
    );
    // The valid row: at the limit, allowed with the warning above half of it.
    let (_, answer) = h
        .post(
            "/admission/gatekeeper/validate",
            &review(
                "CREATE",
                "Gadget",
                Some(gadget("ok", json!({"size": 10}))),
                None,
            ),
        )
        .await;
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    assert_eq!(
        answer["response"]["warnings"],
        json!(["spec.size 10 is more than half of the limit 10"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_is_validated_against_the_old_object() {
    let h = Harness::start().await;
    let protected = gadget("p", json!({"size": 1, "protected": true}));
    let (_, answer) = h
        .post(
            "/admission/gatekeeper/validate",
            &review("DELETE", "Gadget", None, Some(protected)),
        )
        .await;
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(
        answer["response"]["status"],
        json!({"status": "Failure", "code": 403, "reason": "Forbidden", "message": "Gadget \"p\" is protected"})
    );
    let plain = gadget("q", json!({"size": 1}));
    let (_, answer) = h
        .post(
            "/admission/gatekeeper/validate",
            &review("DELETE", "Gadget", None, Some(plain)),
        )
        .await;
    assert_eq!(answer["response"]["allowed"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trap_in_admission_answers_as_the_kinds_failure_policy() {
    let h = Harness::start().await;
    // Gadget: Fail.
    let (_, answer) = h
        .post(
            "/admission/gatekeeper/validate",
            &review(
                "CREATE",
                "Gadget",
                Some(gadget("t", json!({"mode": "trap"}))),
                None,
            ),
        )
        .await;
    let response = &answer["response"];
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 500);
    assert_eq!(response["status"]["reason"], "InternalError");
    let message = response["status"]["message"].as_str().expect("a message");
    assert!(
        message.starts_with("plugin gatekeeper failed in admission: ")
            && message.contains("the gatekeeper traps on purpose"),
        "{message}"
    );
    // Gizmo: Ignore.
    let gizmo = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Gizmo",
        "metadata": {"name": "z", "namespace": "ns"}, "spec": {"mode": "trap"}});
    let (_, answer) = h
        .post(
            "/admission/gatekeeper/validate",
            &review("CREATE", "Gizmo", Some(gizmo), None),
        )
        .await;
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    assert!(answer["response"].get("status").is_none());
    assert_eq!(h.reviews("validate", "failed"), 1);
    assert_eq!(h.reviews("validate", "ignored"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_or_memory_cap_in_admission_answers_as_the_kinds_failure_policy_and_is_counted()
{
    let h = Harness::start().await;
    // The API server waits 2 s (its `timeout` parameter): the plugin gets 1.5 s of it.
    let path = "/admission/gatekeeper/validate?timeout=2s";
    let object = |kind: &str, mode: &str| {
        json!({"apiVersion": format!("{GROUP}/v1"), "kind": kind,
            "metadata": {"name": mode, "namespace": "ns"}, "spec": {"mode": mode}})
    };
    let failed = [
        ("spin", "exceeded its deadline of 1.5s"),
        ("hog", "exceeded its memory cap of 268435456 bytes"),
    ];
    for (mode, cause) in failed {
        let (_, answer) = h
            .post(
                path,
                &review("CREATE", "Gadget", Some(object("Gadget", mode)), None),
            )
            .await;
        let response = &answer["response"];
        assert_eq!(response["allowed"], false, "{mode}: {answer}");
        assert_eq!(response["status"]["code"], 500, "{mode}");
        let message = response["status"]["message"].as_str().expect("a message");
        assert!(
            message.starts_with("plugin gatekeeper failed in admission: ")
                && message.contains(cause),
            "{mode}: {message}"
        );
    }
    for mode in ["spin", "hog"] {
        let (_, answer) = h
            .post(
                path,
                &review("CREATE", "Gizmo", Some(object("Gizmo", mode)), None),
            )
            .await;
        assert_eq!(answer["response"]["allowed"], true, "{mode}: {answer}");
        assert!(answer["response"].get("status").is_none(), "{mode}");
    }
    assert_eq!(h.reviews("validate", "failed"), 2);
    assert_eq!(h.reviews("validate", "ignored"), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_reads_siblings_from_the_cluster_and_may_not_write() {
    let h = Harness::start().await;
    h.cluster
        .backend
        .create(
            &setup(),
            gadget("first", json!({"size": 1, "primary": true})),
        )
        .await
        .expect("the first primary");
    // The sibling is read through the plugin's declared list permission.
    let second = review(
        "CREATE",
        "Gadget",
        Some(gadget("second", json!({"size": 1, "primary": true}))),
        None,
    );
    let answer = eventually("the second primary is refused", WAIT, || async {
        let (_, answer) = h.post("/admission/gatekeeper/validate", &second).await;
        (answer["response"]["allowed"] == false).then_some(answer)
    })
    .await;
    assert_eq!(
        answer["response"]["status"]["details"]["causes"][0]["message"],
        "Invalid value: true: Gadget first is already the primary of this namespace"
    );
    let (_, answer) = h
        .post(
            "/admission/gatekeeper/validate",
            &review(
                "CREATE",
                "Gadget",
                Some(gadget("w", json!({"mode": "write"}))),
                None,
            ),
        )
        .await;
    assert_eq!(
        answer["response"]["status"]["message"],
        "the write was refused: forbidden: plugin gatekeeper: admission may not write to the cluster (a create of ConfigMap ns/written-in-admission)"
    );
    let written = h
        .cluster
        .get("v1", "ConfigMap", "ns", "written-in-admission")
        .await;
    assert!(written.is_none(), "nothing was written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_swapped_plugin_admits_with_its_new_rule_without_a_restart() {
    let h = Harness::start().await;
    let seven = review(
        "CREATE",
        "Gadget",
        Some(gadget("s", json!({"size": 7}))),
        None,
    );
    let (_, answer) = h.post("/admission/gatekeeper/validate", &seven).await;
    assert_eq!(
        answer["response"]["allowed"], true,
        "version 0.1.0 allows 7: {answer}"
    );
    let aside = h.plugins.path().join(".gatekeeper.wasm.tmp");
    std::fs::write(&aside, gatekeeper("gatekeeper-next.wasm")).expect("written aside");
    std::fs::rename(&aside, h.plugins.path().join("gatekeeper.wasm")).expect("swapped");
    let answer = eventually("0.2.0 refuses 7", WAIT, || async {
        let (_, answer) = h.post("/admission/gatekeeper/validate", &seven).await;
        (answer["response"]["allowed"] == false).then_some(answer)
    })
    .await;
    assert_eq!(
        answer["response"]["status"]["details"]["causes"][0]["message"],
        "Invalid value: 7: must be at most 5"
    );
    let rendered = h.operator.metrics().render();
    assert!(
        rendered.contains("version=\"0.2.0\"") && rendered.contains("state=\"serving\""),
        "{rendered}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_for_a_plugin_or_phase_this_host_does_not_serve_answers_404() {
    let h = Harness::start().await;
    let body = review("CREATE", "Gadget", Some(gadget("g", json!({}))), None);
    for path in ["/admission/nobody/validate", "/admission/gatekeeper/mutate"] {
        let (status, _) = h.post(path, &body).await;
        assert_eq!(status, 404, "{path}");
    }
    let before = h.reviews("validate", "allowed");
    let (status, _) = h.post("/admission/gatekeeper/validate", &body).await;
    assert_eq!(status, 200);
    counter_rises("the valid review", WAIT, before, || {
        h.reviews("validate", "allowed")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_managed_certificate_is_kept_in_its_secret_and_reused_by_the_next_replica() {
    let h = Harness::start().await;
    let secret = h
        .cluster
        .get("v1", "Secret", "default", "wasm-operator-webhook")
        .await
        .expect("the managed Secret");
    assert_eq!(secret["type"], "kubernetes.io/tls");
    for key in ["ca.crt", "ca.key", "tls.crt", "tls.key"] {
        assert!(secret["data"][key].is_string(), "{key}");
    }
    assert_eq!(
        secret["metadata"]["annotations"][wasm_operator::webhook::certs::DNS_NAMES_ANNOTATION],
        "wasm-operator.default.svc,wasm-operator.default.svc.cluster.local"
    );
    let ca = base64::engine::general_purpose::STANDARD
        .decode(secret["data"]["ca.crt"].as_str().expect("ca.crt"))
        .expect("base64");
    assert_eq!(
        String::from_utf8(ca).expect("PEM"),
        h.operator.webhook_ca().expect("CA")
    );
    // A name the certificate is not for fails the handshake.
    let wrong = post(
        h.operator.webhook_addr().expect("serving"),
        h.operator.webhook_ca().expect("CA"),
        "other.default.svc",
        "/admission/gatekeeper/validate",
        &json!({}),
    )
    .await;
    assert!(
        wrong
            .as_ref()
            .is_err_and(|e| e.starts_with("TLS: invalid peer certificate")),
        "{wrong:?}"
    );
    // A second replica serves the same certificate: the Secret is not written again.
    let before = h.cluster.counts();
    let second = Harness::start_on(&h.cluster).await;
    let since = h.cluster.counts().since(&before);
    assert_eq!(
        since.get("update", "secrets") + since.get("create", "secrets"),
        0
    );
    assert!(
        since.get("get", "secrets") >= 1,
        "the second replica read the Secret"
    );
    assert_eq!(second.webhook_ca(), h.operator.webhook_ca());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serving_certificate_due_for_renewal_is_renewed_from_the_same_ca() {
    let h = Harness::start().await;
    let secret_ref = wasm_operator_sdk::ObjectRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        namespace: Some("default".into()),
        name: "wasm-operator-webhook".into(),
    };
    let first = h
        .cluster
        .get("v1", "Secret", "default", "wasm-operator-webhook")
        .await
        .expect("the managed Secret");
    // The Secret says its serving certificate ends in a day: inside the 30-day window.
    let soon = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs()
        + 86_400;
    h.cluster
        .backend
        .patch(
            &setup(),
            &secret_ref,
            &wasm_operator_sdk::Patch::Merge(json!({"metadata": {"annotations": {
                wasm_operator::webhook::certs::NOT_AFTER_ANNOTATION: soon.to_string()}}})),
            None,
        )
        .await
        .expect("annotated");
    let second = Harness::start_on(&h.cluster).await;
    let renewed = h
        .cluster
        .get("v1", "Secret", "default", "wasm-operator-webhook")
        .await
        .expect("the managed Secret");
    assert_ne!(
        renewed["data"]["tls.crt"], first["data"]["tls.crt"],
        "renewed"
    );
    assert_eq!(
        renewed["data"]["ca.crt"], first["data"]["ca.crt"],
        "the CA is kept"
    );
    let not_after: u64 = renewed["metadata"]["annotations"]
        [wasm_operator::webhook::certs::NOT_AFTER_ANNOTATION]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("an expiry");
    assert!(not_after > soon + 80 * 86_400, "a fresh 90-day certificate");
    assert_eq!(second.webhook_ca(), h.operator.webhook_ca());
}

/// A managed Secret whose metadata does not decode (labels as a list, stored past the
/// server's validation as a cluster may hold one from before a rule) is written anew by the next replica, its CA
/// kept; before, the typed read failed the start, and kube-rs logged the body, CA key and
/// all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_secret_that_does_not_decode_is_written_anew_keeping_its_ca() {
    let h = Harness::start().await;
    let mut secret = h
        .cluster
        .get("v1", "Secret", "default", "wasm-operator-webhook")
        .await
        .expect("the managed Secret");
    secret["metadata"]["labels"] = json!(["a", "list"]);
    // Past the server's validation, as a cluster may hold one from before a rule.
    h.cluster.server.inject(wasm_operator_apiserver::Fault {
        verb: Some("update".into()),
        resource: Some("secrets".into()),
        name: Some("wasm-operator-webhook".into()),
        namespace: None,
        action: wasm_operator_apiserver::FaultAction::StoreUnvalidated,
        remaining: Some(1),
    });
    let request = http::Request::put("/api/v1/namespaces/default/secrets/wasm-operator-webhook")
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&secret).expect("JSON"))
        .expect("a request");
    let client = h.cluster.server.client().expect("a client");
    let stored: Value = client.request(request).await.expect("stored by the server");
    assert_eq!(stored["metadata"]["labels"], json!(["a", "list"]));

    let second = Harness::start_on(&h.cluster).await;
    let written = h
        .cluster
        .get("v1", "Secret", "default", "wasm-operator-webhook")
        .await
        .expect("the managed Secret");
    assert!(
        written["metadata"].get("labels").is_none(),
        "{}",
        written["metadata"]
    );
    assert_eq!(
        written["data"]["ca.crt"], secret["data"]["ca.crt"],
        "the CA is kept"
    );
    assert_eq!(second.webhook_ca(), h.operator.webhook_ca());
}

impl Harness {
    /// A second operator on `cluster` with the same webhook settings.
    async fn start_on(cluster: &Cluster) -> RunningOperator {
        let plugins = tempfile::tempdir().expect("plugins");
        std::fs::write(
            plugins.path().join("gatekeeper.wasm"),
            gatekeeper("gatekeeper-reconciler.wasm"),
        )
        .expect("copied");
        let mut config = OperatorConfig::new(plugins.path());
        config.webhook = Some(webhook_config());
        let operator = cluster
            .start_operator(wasm_operator_e2e::shared_cache(), config)
            .await;
        // The plugin directory only needs to outlive the load.
        drop(plugins);
        operator
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_prints_the_configurations_the_plugins_admission_declares() {
    let plugins = tempfile::tempdir().expect("plugins");
    std::fs::write(
        plugins.path().join("gatekeeper.wasm"),
        gatekeeper("gatekeeper-reconciler.wasm"),
    )
    .expect("copied");
    let runtime = wasm_operator_e2e::runtime_with_cache(wasm_operator_e2e::shared_cache());
    let endpoint = wasm_operator::webhook::configurations::Endpoint::Service {
        namespace: "ops".into(),
        name: "wasm-operator".into(),
        port: 443,
    };
    let yaml = wasm_operator::cli::run::webhooks_yaml(
        &runtime,
        plugins.path(),
        None,
        &endpoint,
        Some("-----BEGIN CERTIFICATE-----\n"),
        "wasm-operator",
    )
    .await
    .expect("configurations");
    let objects = wasm_operator_e2e::yaml_objects(&yaml);
    let ca = base64::engine::general_purpose::STANDARD.encode("-----BEGIN CERTIFICATE-----\n");
    let client = |phase: &str| {
        json!({"service": {"namespace": "ops", "name": "wasm-operator",
        "path": format!("/admission/gatekeeper/{phase}"), "port": 443}, "caBundle": ca})
    };
    let common = |name: &str, phase: &str, policy: &str, rules: Value| {
        json!({"name": name, "clientConfig": client(phase), "rules": rules,
            "failurePolicy": policy, "matchPolicy": "Equivalent", "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "timeoutSeconds": 10})
    };
    let rule = |plural: &str, operations: Value| {
        json!({"apiGroups": [GROUP], "apiVersions": ["v1"], "resources": [plural],
            "operations": operations, "scope": "Namespaced"})
    };
    let mut mutating = common(
        "default.gatekeeper.wasm-operator.dev",
        "default",
        "Fail",
        json!([rule("gadgets", json!(["CREATE", "UPDATE"]))]),
    );
    mutating["reinvocationPolicy"] = json!("Never");
    assert_eq!(
        objects,
        vec![
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                "metadata": {"name": "wasm-operator", "labels": {"app.kubernetes.io/managed-by": "wasm-operator"}},
                "webhooks": [mutating]}),
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "wasm-operator", "labels": {"app.kubernetes.io/managed-by": "wasm-operator"}},
            "webhooks": [
                common("validate.gatekeeper.wasm-operator.dev", "validate", "Fail",
                    json!([rule("gadgets", json!(["CREATE", "UPDATE", "DELETE"]))])),
                common("validate-ignore.gatekeeper.wasm-operator.dev", "validate", "Ignore",
                    json!([rule("gizmos", json!(["CREATE"]))])),
            ]}),
        ]
    );
}

impl Harness {
    /// Registers the host's webhooks with the API server as `wasm-operator webhooks` prints
    /// them: the Service `default/wasm-operator` (port 443, its EndpointSlice pointing at the
    /// host's webhook port) and the managed CA as the `caBundle`.
    async fn register_webhooks(&self) {
        self.register_webhooks_with(self.operator.webhook_ca())
            .await;
    }

    /// As [`register_webhooks`](Self::register_webhooks), with `ca_bundle` as the
    /// configurations' `caBundle`.
    async fn register_webhooks_with(&self, ca_bundle: Option<&str>) {
        let plugin = self.plugins.path().join("gatekeeper.wasm");
        wasm_operator_e2e::webhooks::register_webhooks(
            &self.cluster,
            &self.operator,
            &[plugin.as_path()],
            ca_bundle,
        )
        .await;
    }
}

fn gadget_yaml(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: {GROUP}/v1\nkind: Gadget\nmetadata:\n  name: {name}\n  namespace: ns\nspec:\n{spec}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_is_defaulted_validated_and_warned_by_the_plugin_through_the_api_server() {
    let h = Harness::start().await;
    h.register_webhooks().await;

    // Defaulted, with the plugin's warning printed by kubectl.
    let (ok, _, stderr) = kubectl(
        &h.cluster,
        &["apply", "-f", "-"],
        &gadget_yaml("small", "  mode: x"),
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("Warning: spec.size defaulted to 1"),
        "{stderr}"
    );
    let stored = h
        .cluster
        .get(&format!("{GROUP}/v1"), "Gadget", "ns", "small")
        .await
        .expect("stored");
    assert_eq!(stored["spec"], json!({"mode": "x", "size": 1}));

    // Refused, with the field named.
    let (ok, _, stderr) = kubectl(
        &h.cluster,
        &["apply", "-f", "-"],
        &gadget_yaml("big", "  size: 11"),
    )
    .await;
    assert!(!ok);
    // kubectl words a 422 from its causes, as it does for kube-apiserver's.
    assert!(
        stderr.contains(
            "The Gadget \"big\" is invalid: spec.size: Invalid value: 11: must be at most 10"
        ),
        "{stderr}"
    );
    let refused = h
        .cluster
        .backend
        .create(&setup(), gadget("big", json!({"size": 11})))
        .await
        .expect_err("refused");
    assert_eq!(
        refused.to_string(),
        "invalid: gadgets.tests.wasm-operator.dev \"big\" is forbidden: admission webhook \"validate.gatekeeper.wasm-operator.dev\" denied the request: Gadget.tests.wasm-operator.dev \"big\" is invalid: spec.size: Invalid value: 11: must be at most 10"
    );
    assert!(
        h.cluster
            .get(&format!("{GROUP}/v1"), "Gadget", "ns", "big")
            .await
            .is_none()
    );

    // A trap: Gadget (Fail) is refused naming the plugin; Gizmo (Ignore) is stored.
    let (ok, _, stderr) = kubectl(
        &h.cluster,
        &["apply", "-f", "-"],
        &gadget_yaml("t", "  mode: trap"),
    )
    .await;
    assert!(!ok);
    assert!(
        stderr.contains("plugin gatekeeper failed in admission"),
        "{stderr}"
    );
    let gizmo = format!(
        "apiVersion: {GROUP}/v1\nkind: Gizmo\nmetadata:\n  name: z\n  namespace: ns\nspec:\n  mode: trap\n"
    );
    let (ok, _, stderr) = kubectl(&h.cluster, &["apply", "-f", "-"], &gizmo).await;
    assert!(ok, "{stderr}");
    assert_eq!(h.reviews("validate", "ignored"), 1);
    assert!(h.reviews("default", "defaulted") >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_swap_changes_what_kubectl_apply_accepts_without_a_restart() {
    let h = Harness::start().await;
    h.register_webhooks().await;
    let (ok, _, stderr) = kubectl(
        &h.cluster,
        &["apply", "-f", "-"],
        &gadget_yaml("seven", "  size: 7"),
    )
    .await;
    assert!(ok, "0.1.0 accepts 7: {stderr}");
    let aside = h.plugins.path().join(".gatekeeper.wasm.tmp");
    std::fs::write(&aside, gatekeeper("gatekeeper-next.wasm")).expect("written aside");
    std::fs::rename(&aside, h.plugins.path().join("gatekeeper.wasm")).expect("swapped");
    // A new Gadget each try: one that 0.1.0 still admitted would be "unchanged" for kubectl
    // afterwards, and never reach the webhook again.
    let tries = std::sync::atomic::AtomicUsize::new(0);
    let stderr = eventually("0.2.0 refuses 7", WAIT, || async {
        let n = tries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (ok, _, stderr) = kubectl(
            &h.cluster,
            &["apply", "-f", "-"],
            &gadget_yaml(&format!("seven-again-{n}"), "  size: 7"),
        )
        .await;
        (!ok).then_some(stderr)
    })
    .await;
    assert!(
        stderr.contains("spec.size: Invalid value: 7: must be at most 5"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_sets_its_managed_ca_in_the_configurations_that_call_its_service() {
    let h = Harness::start().await;
    // As applied from `wasm-operator webhooks` without --ca-bundle.
    h.register_webhooks_with(None).await;
    let ca = base64::engine::general_purpose::STANDARD.encode(h.operator.webhook_ca().expect("CA"));
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        eventually(&format!("the {kind}'s caBundle"), WAIT, || async {
            let r = wasm_operator_sdk::ObjectRef {
                api_version: "admissionregistration.k8s.io/v1".into(),
                kind: kind.into(),
                namespace: None,
                name: "wasm-operator".into(),
            };
            let config = h
                .cluster
                .backend
                .get(&r, wasm_operator_sdk::ReadFrom::Server)
                .await
                .ok()
                .flatten()?;
            let webhooks = config["webhooks"].as_array()?.clone();
            webhooks
                .iter()
                .all(|w| w["clientConfig"]["caBundle"] == ca.as_str())
                .then_some(())
        })
        .await;
    }
    let (ok, _, stderr) = kubectl(
        &h.cluster,
        &["apply", "-f", "-"],
        &gadget_yaml("small", "  mode: x"),
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("Warning: spec.size defaulted to 1"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_completes_its_handshake_holds_up_no_review() {
    let h = Harness::start().await;
    let addr = h.operator.webhook_addr().expect("serving");
    // Connects and sends nothing: its handshake is pending until the server gives up.
    let mut stalled = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let body = review(
        "CREATE",
        "Gadget",
        Some(gadget("g", json!({"size": 1}))),
        None,
    );
    let (status, answer) = h.post("/admission/gatekeeper/validate", &body).await;
    assert_eq!(
        (status, &answer["response"]["allowed"]),
        (200, &json!(true))
    );
    // The review was answered while the stalled connection is still open: the server did
    // not wait for that handshake to time out first.
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_millis(200), stalled.read(&mut byte)).await;
    assert!(
        read.is_err(),
        "the stalled connection was closed first: {read:?}"
    );
}
