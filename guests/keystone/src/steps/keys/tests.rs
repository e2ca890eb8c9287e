use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{condition, keystone_with, pass, run_with_config};

/// `[status, reason, message]` of `kind`'s condition.
fn ready(pass: &Pass<'_>, kind: &KeyKind) -> [String; 3] {
    let (status, reason, message) = condition(pass, kind.condition);
    [status, reason, message]
}

#[test]
fn a_missing_keys_secret_is_generated_with_n_fresh_fernet_keys() {
    let cluster = FakeCluster::new();
    let (result, pass) = run_with_config(&cluster, json!({"fernet": {"maxActiveKeys": 5}}), |p| {
        run(p, &FERNET)
    });
    let c = ready(&pass, &FERNET);
    assert_eq!(result.expect("runs"), Some(SECRET_POLLING));
    assert_eq!(
        c,
        [
            "False",
            "GeneratingKeys",
            "Initial Fernet keys have been generated"
        ]
    );
    let data = cluster.secret_data("ks-fernet-keys");
    assert_eq!(
        data.keys().cloned().collect::<Vec<_>>(),
        ["0", "1", "2", "3", "4"]
    );
    for value in data.values() {
        assert_eq!(value.len(), 44);
        let raw = base64::engine::general_purpose::URL_SAFE
            .decode(value)
            .expect("urlsafe base64 with padding");
        assert_eq!(raw.len(), 32);
    }
    let distinct: std::collections::BTreeSet<_> = data.values().collect();
    assert_eq!(distinct.len(), 5);
    assert_eq!(cluster.event_reasons(), ["FernetKeysGenerated"]);
    // Fewer than 3 active keys is 3.
    let cluster = FakeCluster::new();
    run_with_config(
        &cluster,
        json!({"credentialKeys": {"maxActiveKeys": 0}}),
        |p| run(p, &CREDENTIAL),
    )
    .0
    .expect("runs");
    assert_eq!(cluster.secret_data("ks-credential-keys").len(), 3);
    assert_eq!(cluster.event_reasons(), ["CredentialKeysGenerated"]);
}

#[test]
fn existing_keys_get_their_rotation_machinery_and_are_available() {
    let cluster = FakeCluster::new();
    run_with_config(&cluster, json!({}), |p| run(p, &FERNET))
        .0
        .expect("generates");
    let spec = json!({"fernet": {"rotationSchedule": "0 3 * * 1", "suspend": true},
        "secretStoreRef": {"kind": "SecretStore", "name": "tenant"}});
    let (result, pass) = run_with_config(&cluster, spec, |p| run(p, &FERNET));
    let c = ready(&pass, &FERNET);
    assert_eq!(result.expect("runs"), None);
    assert_eq!(
        c,
        [
            "True",
            "FernetKeysAvailable",
            "Fernet keys Secret exists and rotation CronJob is configured"
        ]
    );
    let staging = cluster
        .server("Secret", "ks-fernet-keys-rotation")
        .expect("staging");
    assert_eq!(
        staging["metadata"]["labels"]["cobaltcore.c5c3.io/rotation-target"],
        "fernet-keys"
    );
    assert!(staging.get("data").is_none_or(Value::is_null));
    let role = cluster.server("Role", "ks-fernet-rotate").expect("role");
    assert_eq!(
        role["rules"],
        json!([
            {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["ks-fernet-keys"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["ks-fernet-keys-rotation"], "verbs": ["get", "patch"]},
        ])
    );
    let binding = cluster
        .server("RoleBinding", "ks-fernet-rotate")
        .expect("binding");
    assert_eq!(binding["subjects"][0]["name"], "ks-fernet-rotate");
    assert!(
        cluster
            .server("ServiceAccount", "ks-fernet-rotate")
            .is_some()
    );
    let scripts = cluster.names("ConfigMap");
    assert!(
        scripts
            .iter()
            .any(|n| n.starts_with("ks-fernet-rotate-script-")),
        "{scripts:?}"
    );
    let cron = cluster
        .server("CronJob", "ks-fernet-rotate")
        .expect("cron job");
    assert_eq!(cron["spec"]["schedule"], "0 3 * * 1");
    assert_eq!(cron["spec"]["suspend"], true);
    let pod = &cron["spec"]["jobTemplate"]["spec"]["template"];
    assert_eq!(
        pod["metadata"]["labels"]["app.kubernetes.io/component"],
        "fernet-rotation"
    );
    let spec = &pod["spec"];
    assert_eq!(spec["serviceAccountName"], "ks-fernet-rotate");
    assert_eq!(spec["restartPolicy"], "OnFailure");
    assert_eq!(
        spec["initContainers"][0]["command"],
        json!([
            "sh",
            "-c",
            "install -m 0400 /fernet-keys-src/* /etc/keystone/fernet-keys/"
        ])
    );
    let container = &spec["containers"][0];
    assert_eq!(container["command"], json!(["/scripts/fernet_rotate.sh"]));
    let env: Vec<&str> = container["env"]
        .as_array()
        .expect("env")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(
        env,
        [
            "SECRET_NAME",
            "SECRET_NAMESPACE",
            "OS_fernet_tokens__max_active_keys",
            "OS_DATABASE__CONNECTION"
        ]
    );
    let volumes: Vec<&str> = spec["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(
        volumes,
        [
            "fernet-keys-src",
            "fernet-keys",
            "credential-keys",
            "config",
            "scripts"
        ]
    );
    let backup = cluster
        .server("PushSecret", "ks-fernet-keys-backup")
        .expect("backup");
    assert_eq!(
        backup["spec"],
        json!({"secretStoreRefs": [{"name": "tenant", "kind": "SecretStore"}],
            "selector": {"secret": {"name": "ks-fernet-keys"}},
            "data": [{"match": {"remoteRef": {"remoteKey": "openstack/keystone/ns/ks/fernet-keys"}}}],
            "deletionPolicy": "Delete"})
    );
}

#[test]
fn a_staged_rotation_is_committed_and_reported_rotated() {
    let cluster = FakeCluster::new();
    run_with_config(&cluster, json!({}), |p| run(p, &CREDENTIAL))
        .0
        .expect("generates");
    run_with_config(&cluster, json!({}), |p| run(p, &CREDENTIAL))
        .0
        .expect("available");
    let keys: Vec<String> = (0..4).map(|_| generate_key().expect("a key")).collect();
    cluster.change("Secret", "ks-credential-keys-rotation", |s| {
        let data: serde_json::Map<String, Value> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let bytes = ByteString(k.clone().into_bytes());
                (i.to_string(), serde_json::to_value(bytes).expect("base64"))
            })
            .collect();
        s["data"] = Value::Object(data);
        s["metadata"]["annotations"] =
            json!({"cobaltcore.c5c3.io/rotation-completed-at": "2026-12-01T00:00:00Z"});
    });
    let (result, pass) = run_with_config(&cluster, json!({}), |p| run(p, &CREDENTIAL));
    let c = ready(&pass, &CREDENTIAL);
    assert_eq!(result.expect("runs"), Some(SECRET_POLLING));
    assert_eq!(
        c,
        [
            "True",
            "CredentialKeysRotated",
            "rotation applied; staging secret cleared"
        ]
    );
    let committed = cluster.secret_data("ks-credential-keys");
    assert_eq!(committed.len(), 4);
    assert_eq!(
        committed.get("3").map(|v| v.as_slice()),
        Some(keys[3].as_bytes())
    );
    assert!(
        cluster
            .event_reasons()
            .contains(&"CredentialKeysRotated".to_owned())
    );
}

#[test]
fn a_keys_step_before_the_config_step_ran_is_a_step_order_error() {
    let cluster = FakeCluster::new();
    run_with_config(&cluster, json!({}), |p| run(p, &FERNET))
        .0
        .expect("generates");
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    let error = run(&mut pass, &FERNET).expect_err("fails");
    assert!(
        matches!(
            error,
            Error::StepOrder {
                step: "fernet-keys",
                value: "the config ConfigMap's name"
            }
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("which an earlier step sets"),
        "{error}"
    );
}
