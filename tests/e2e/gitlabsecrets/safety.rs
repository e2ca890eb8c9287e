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
        namespace: None,
        action: FaultAction::Delay(Duration::from_millis(800)),
        remaining: Some(1),
    });
    h.create(gitlabsecrets("app", json!([random("s", "token", 16)])))
        .await;
    eventually("the operator's patch to be held", WAIT, || async {
        (h.cluster.counts().get("patch", "secrets") >= 1).then_some(())
    })
    .await;
    // The user writes the very key the operator is adding. A patch without the
    // resourceVersion precondition would overwrite it; with it, the held patch is refused
    // (409), the pass reads again and finds the key present.
    h.patch_secret(
        "s",
        json!({"stringData": {"token": "the-users-own", "concurrent": "c"}}),
    )
    .await;
    h.ready_with("ns", "app", "SecretsReady").await;
    let secret = h.secret("ns", "s").await.expect("s");
    assert_eq!(secret_value(&secret, "user").as_deref(), Some(&b"u"[..]));
    assert_eq!(
        secret_value(&secret, "concurrent").as_deref(),
        Some(&b"c"[..])
    );
    assert_eq!(
        secret_value(&secret, "token").as_deref(),
        Some(&b"the-users-own"[..]),
        "the operator's stale patch did not overwrite the user's value"
    );
    assert!(
        h.cluster.counts().refused("patch", "secrets", 409) >= 1,
        "the held patch was refused by its precondition"
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issuance_stopped_after_the_ca_write_says_which_key_to_delete_and_recovers_once_it_is() {
    let h = Harness::start().await;
    // The TLS Secret's create fails until the fault is cleared: the CA is written, then the
    // pass stops, as it would when the operator is killed between the two writes.
    h.cluster.server.inject(Fault {
        verb: Some("create".into()),
        resource: Some("secrets".into()),
        name: Some("wildcard".into()),
        namespace: None,
        action: FaultAction::Fail {
            code: 500,
            message: "the operator died here".into(),
        },
        remaining: None,
    });
    h.create(certificate_set("app")).await;
    let reported = h.ready_with("ns", "app", "SecretsReported").await;
    let message = reported
        .pointer("/status/conditions/0/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    for said in [
        "an issuance stopped after writing the CA",
        "delete key cfssl_ca from Secret wildcard-ca",
        "the next pass issues a new set",
    ] {
        assert!(message.contains(said), "{message:?} says {said:?}");
    }
    let ca = h
        .secret("ns", "wildcard-ca")
        .await
        .expect("the CA was written");
    assert!(secret_value(&ca, "cfssl_ca").is_some());
    let ca_uid = ca["metadata"]["uid"].clone();
    assert!(h.secret("ns", "wildcard").await.is_none());

    // Doing what the report says issues a new set, into the Secret that is kept.
    h.cluster.server.clear_faults();
    h.patch_secret("wildcard-ca", json!({"data": {"cfssl_ca": null}}))
        .await;
    h.ready_with("ns", "app", "SecretsReady").await;
    let ca = h.secret("ns", "wildcard-ca").await.expect("wildcard-ca");
    let tls = h.secret("ns", "wildcard").await.expect("wildcard");
    let chain = h
        .secret("ns", "wildcard-chain")
        .await
        .expect("wildcard-chain");
    let ca_pem = secret_value(&ca, "cfssl_ca").expect("a new CA");
    let tls_pem = secret_value(&tls, "tls.crt").expect("tls.crt");
    assert_eq!(
        secret_value(&chain, "chain.crt"),
        Some([ca_pem, tls_pem].concat()),
        "the chain is the new CA, then tls.crt"
    );
    assert_eq!(
        ca["metadata"]["uid"], ca_uid,
        "the CA Secret was kept, not replaced"
    );
    h.assert_no_secret_rewrites();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_that_does_not_decode_fails_only_its_secret_by_field_and_is_not_retried() {
    let h = Harness::start().await;
    let mut bad = random("bad", "token", 16);
    bad["generators"][0]["length"] = json!(1_000_000_000_000u64);
    h.create(gitlabsecrets(
        "app",
        json!([random("good", "token", 16), bad]),
    ))
    .await;
    let object = h.ready_with("ns", "app", "SecretsNotWritten").await;
    let message = object
        .pointer("/status/conditions/0/message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    assert!(
        message
            .contains("Secret bad: cannot read its entry: spec.secrets[1].generators[0].length:")
            && message.contains("1000000000000"),
        "{message}"
    );
    let good = h
        .secret("ns", "good")
        .await
        .expect("the sibling is created");
    assert_eq!(secret_value(&good, "token").map(|t| t.len()), Some(16));
    assert!(h.secret("ns", "bad").await.is_none());
    let statuses = object
        .pointer("/status/secrets")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        statuses,
        json!([{"name": "good", "ready": true, "readyUnits": ["token"]},
               {"name": "bad", "ready": false, "readyUnits": []}]),
    );
    // Not retried until something changes: once the pass the created Secret's event starts
    // is through, no pass reads the GitLabSecrets again (a backoff would, within 1.5 s).
    let mut reads = h.cluster.counts().get("get", "gitlabsecrets");
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = h.cluster.counts().get("get", "gitlabsecrets");
        if now == reads {
            break;
        }
        reads = now;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(h.cluster.counts().get("get", "gitlabsecrets"), reads);
}
