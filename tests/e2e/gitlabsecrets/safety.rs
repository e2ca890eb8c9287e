//! Failures and races: conflicts lose nothing; 422 and 413 are not retried.

use serde_json::{Value, json};
use wasm_operator_apiserver::{Fault, FaultAction};
use wasm_operator_e2e::eventually;

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_secret_change_between_read_and_patch_loses_nothing() {
    let h = Harness::start().await;
    h.create(
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"},
        "type": "Opaque", "stringData": {"user": "u"}}),
    )
    .await;
    // The operator's merge patch is held for a while; meanwhile a user changes the Secret.
    h.cluster.server.inject(Fault {
        verb: Some("patch".into()),
        resource: Some("secrets".into()),
        name: Some("s".into()),
        action: FaultAction::Delay(Duration::from_millis(800)),
        remaining: Some(1),
    });
    h.create(gitlabsecrets("app", json!([random("s", "token", 16)])))
        .await;
    eventually("the operator's patch to be held", WAIT, || async {
        (h.cluster.counts().get("patch", "secrets") >= 1).then_some(())
    })
    .await;
    h.patch_secret("s", json!({"stringData": {"concurrent": "c"}}))
        .await;
    h.ready_with("ns", "app", "SecretsReady").await;
    let secret = h.secret("ns", "s").await.expect("s");
    assert_eq!(secret_value(&secret, "user").as_deref(), Some(&b"u"[..]));
    assert_eq!(
        secret_value(&secret, "concurrent").as_deref(),
        Some(&b"c"[..])
    );
    assert_eq!(secret_value(&secret, "token").map(|t| t.len()), Some(16));
    h.assert_no_secret_rewrites();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_refused_as_invalid_or_too_large_is_not_retried() {
    for (code, message) in [
        (422, "Secret \"s\" is invalid"),
        (413, "request entity too large"),
    ] {
        let h = Harness::start().await;
        h.cluster
            .server
            .inject(Fault::fail("create", "secrets", code, message));
        h.create(gitlabsecrets("app", json!([random("s", "token", 16)])))
            .await;
        let object = h.ready_with("ns", "app", "SecretsNotWritten").await;
        let ready = object
            .pointer("/status/conditions/0/message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(
            ready.contains(message),
            "{code}: the condition names the error: {ready}"
        );
        let creates = h.cluster.counts().get("create", "secrets");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(
            h.cluster.counts().get("create", "secrets"),
            creates,
            "{code}: not retried until something changes"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_other_write_failure_is_retried_with_backoff() {
    let h = Harness::start().await;
    let mut fault = Fault::fail("create", "secrets", 500, "etcd is having a moment");
    fault.remaining = Some(2);
    h.cluster.server.inject(fault);
    h.create(gitlabsecrets("app", json!([random("s", "token", 16)])))
        .await;
    h.ready_with("ns", "app", "SecretsReady").await;
    assert!(h.cluster.counts().get("create", "secrets") >= 3);
}
