//! The staged key rotation end to end (facts §2.11): what the rotation CronJob's script
//! stages on `ks-fernet-keys-rotation` is committed to `ks-fernet-keys` by the next pass,
//! and a staging that fails validation is rejected and cleared.

use base64::Engine as _;
use serde_json::{Value, json};
use wasm_operator_e2e::eventually;
use wasm_operator_sdk::ObjectRef;

use crate::harness::{Harness, WAIT, keystone};

const STAGING: &str = "ks-fernet-keys-rotation";
const COMPLETED_AT: &str = "cobaltcore.c5c3.io/rotation-completed-at";

fn staging_ref() -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        namespace: Some("ns".into()),
        name: STAGING.into(),
    }
}

/// A key repository of `count` distinct fernet keys (44 urlsafe base64 characters of 32
/// bytes each), as the Secret's `data` holds it: file name → base64 of the key.
fn repository(count: u8, seed: u8) -> Value {
    let b64 = base64::engine::general_purpose::STANDARD;
    let url = base64::engine::general_purpose::URL_SAFE;
    let data: serde_json::Map<String, Value> = (0..count)
        .map(|i| {
            let key = url.encode([seed.wrapping_add(i); 32]);
            (i.to_string(), json!(b64.encode(key)))
        })
        .collect();
    Value::Object(data)
}

/// Stages `data` as the script does: the data and the completion annotation.
async fn stage(h: &Harness, data: Value, completed_at: &str) {
    h.cluster
        .merge_patch(
            &staging_ref(),
            json!({"metadata": {"annotations": {COMPLETED_AT: completed_at}}, "data": data}),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_key_rotation_is_committed_by_the_next_pass_and_an_invalid_one_is_rejected() {
    let h = Harness::start().await;
    h.cluster.create(keystone(json!({}))).await;
    h.condition("FernetKeysReady", "FernetKeysAvailable").await;
    let generated = h
        .cluster
        .get("v1", "Secret", "ns", "ks-fernet-keys")
        .await
        .expect("the generated keys")["data"]
        .clone();

    // Two keys are fewer than the three Keystone needs.
    stage(&h, repository(2, 1), "2026-12-02T06:00:00Z").await;
    eventually("the rejection", WAIT, || async {
        let events = h.cluster.events_with_reason("ns", "RotationRejected").await;
        events.iter().any(|e| e["type"] == "Warning").then_some(())
    })
    .await;
    let cleared = eventually("the staging Secret cleared", WAIT, || async {
        let staging = h.cluster.get("v1", "Secret", "ns", STAGING).await?;
        let empty = staging["data"].as_object().is_none_or(|d| d.is_empty());
        let unannotated = staging
            .pointer("/metadata/annotations/cobaltcore.c5c3.io~1rotation-completed-at")
            .is_none();
        (empty && unannotated).then_some(staging)
    })
    .await;
    assert_eq!(cleared["metadata"]["name"], STAGING);
    assert_eq!(
        h.cluster
            .get("v1", "Secret", "ns", "ks-fernet-keys")
            .await
            .expect("keys")["data"],
        generated,
        "a rejected rotation leaves the keys as they were"
    );

    let rotated = repository(3, 100);
    stage(&h, rotated.clone(), "2026-12-02T07:00:00Z").await;
    // The committing pass writes FernetKeysRotated and the next one FernetKeysAvailable,
    // moments apart: the watch sees every status write, a poll may miss it.
    eventually("FernetKeysRotated", WAIT, || async {
        h.reasons
            .saw("ns", "FernetKeysReady", "FernetKeysRotated")
            .then_some(())
    })
    .await;
    let keys = h
        .cluster
        .get("v1", "Secret", "ns", "ks-fernet-keys")
        .await
        .expect("the keys");
    assert_eq!(keys["data"], rotated, "the staged keys are committed");
    assert_eq!(
        keys.pointer("/metadata/annotations/cobaltcore.c5c3.io~1rotation-completed-at"),
        Some(&json!("2026-12-02T07:00:00Z"))
    );
    assert_eq!(
        h.cluster
            .events_with_reason("ns", "FernetKeysRotated")
            .await
            .len(),
        1
    );
}
