//! The staged key rotation end to end (facts §2.11): what the rotation CronJob's script
//! stages on `ks-fernet-keys-rotation` is committed to `ks-fernet-keys` by the next pass,
//! and a staging that fails validation is rejected and cleared.

use base64::Engine as _;
use serde_json::{Value, json};
use wasm_operator_e2e::eventually;
use wasm_operator_sdk::ObjectRef;

use crate::harness::{Harness, READY_ACTORS, WAIT, keystone};

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

/// The admin password's remote key in the secret backend (facts §2.12).
const ADMIN_REMOTE_KEY: &str = "bootstrap/pw/ks/admin";

fn admin_digest_of_bootstrap(job: &Value) -> Option<String> {
    job.pointer("/spec/template/metadata/annotations/cobaltcore.c5c3.io~1admin-password-hash")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_admin_password_travels_through_the_backend_to_the_admin_secret_and_reruns_the_bootstrap()
 {
    // Step 12 runs once the health check passes: the Keystone API stand-in answers it.
    let h = Harness::start_with(&READY_ACTORS).await;
    // The admin Secret comes from the backend through an ExternalSecret, as in production.
    h.seed("pw", &["ks-admin"]).await;
    let mut entry = wasm_operator_apiserver::BackendEntry::new();
    entry.insert("password".into(), b"first-admin-password".to_vec());
    h.cluster
        .server
        .secret_backend_put(ADMIN_REMOTE_KEY, entry)
        .expect("the External Secrets actor runs");
    h.cluster
        .create(json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
            "metadata": {"name": "ks-admin", "namespace": "pw"},
            "spec": {"refreshInterval": "1s",
                     "secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao-cluster-store"},
                     "target": {"name": "ks-admin"},
                     "data": [{"secretKey": "password",
                               "remoteRef": {"key": ADMIN_REMOTE_KEY, "property": "password"}}]}}))
        .await;
    h.cluster
        .create(crate::harness::keystone_in(
            "pw",
            json!({"passwordRotation": {"enabled": true, "schedule": "0 0 1 * *",
                                        "passwordLength": 32}}),
        ))
        .await;
    h.condition_in("pw", "BootstrapReady", "BootstrapComplete")
        .await;
    h.condition_in("pw", "PasswordRotationReady", "PasswordRotationConfigured")
        .await;
    let first = h
        .cluster
        .get("batch/v1", "Job", "pw", "ks-bootstrap")
        .await
        .expect("the bootstrap Job");
    assert_eq!(
        admin_digest_of_bootstrap(&first),
        Some(sha256_hex("first-admin-password"))
    );

    // The rotation CronJob's pod stages a new password, as its script does.
    let rotated = "rotated-admin-password-0123456789abcdef";
    let b64 = base64::engine::general_purpose::STANDARD;
    h.cluster
        .merge_patch(
            &ObjectRef {
                api_version: "v1".into(),
                kind: "Secret".into(),
                namespace: Some("pw".into()),
                name: "ks-admin-password-rotation".into(),
            },
            json!({"metadata": {"annotations": {COMPLETED_AT: "2026-12-03T08:00:00Z"}},
                   "data": {"password": b64.encode(rotated)}}),
        )
        .await;
    // Committed to the push source, pushed to the backend, synced into the admin Secret,
    // and the bootstrap runs again with it.
    eventually("AdminPasswordRotated", WAIT, || async {
        h.reasons
            .saw("pw", "PasswordRotationReady", "AdminPasswordRotated")
            .then_some(())
    })
    .await;
    eventually("the backend holds the rotated password", WAIT, || async {
        let entry = h
            .cluster
            .server
            .secret_backend_get(ADMIN_REMOTE_KEY)
            .ok()??;
        (entry.get("password").map(Vec::as_slice) == Some(rotated.as_bytes())).then_some(())
    })
    .await;
    eventually(
        "the admin Secret holds the rotated password",
        WAIT,
        || async {
            let secret = h.cluster.get("v1", "Secret", "pw", "ks-admin").await?;
            (secret["data"]["password"] == b64.encode(rotated)).then_some(())
        },
    )
    .await;
    let rerun = eventually(
        "the bootstrap re-run with the rotated password",
        WAIT,
        || async {
            let job = h
                .cluster
                .get("batch/v1", "Job", "pw", "ks-bootstrap")
                .await?;
            (admin_digest_of_bootstrap(&job) == Some(sha256_hex(rotated))).then_some(job)
        },
    )
    .await;
    assert_ne!(
        rerun["metadata"]["uid"], first["metadata"]["uid"],
        "a new Job"
    );
    h.condition_in("pw", "BootstrapReady", "BootstrapComplete")
        .await;
    assert_eq!(
        h.cluster
            .events_with_reason("pw", "AdminPasswordRotated")
            .await
            .len(),
        1
    );
}
