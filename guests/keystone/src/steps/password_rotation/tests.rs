use k8s_openapi::ByteString;
use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::blocks::config::configmap::immutable_name;
use wasm_operator_sdk::testing::{Call, FakeCluster, Op};

use super::*;
use crate::testing::{condition, owned, run_with_config, secret};

pub(super) const STAGING: &str = "ks-admin-password-rotation";
pub(super) const NEXT: &str = "ks-admin-password-next";
pub(super) const ROTATE: &str = "ks-admin-password-rotate";
pub(super) const BACKUP: &str = "ks-admin-password-backup";
pub(super) const COMPLETED_AT: &str = "cobaltcore.c5c3.io/rotation-completed-at";

/// A spec with rotation enabled, `extra` merged into the block.
pub(super) fn enabled(extra: Value) -> Value {
    let mut block = json!({"enabled": true});
    if let (Value::Object(block), Value::Object(extra)) = (&mut block, extra) {
        block.extend(extra);
    }
    json!({"passwordRotation": block})
}

/// Runs the step over `keystone_with(spec)`.
pub(super) fn step<'c>(cluster: &'c FakeCluster, spec: Value) -> (StepResult, Pass<'c>) {
    run_with_config(cluster, spec, run)
}

/// `[status, reason, message]` of PasswordRotationReady.
pub(super) fn ready(pass: &Pass<'_>) -> [String; 3] {
    let (status, reason, message) = condition(pass, PASSWORD_ROTATION_READY);
    [status, reason, message]
}

pub(super) fn configured() -> [String; 3] {
    [
        "True".into(),
        "PasswordRotationConfigured".into(),
        "Admin password rotation CronJob is configured".into(),
    ]
}

/// `pairs` as a Secret's base64 `data`.
pub(super) fn data(pairs: &[(&str, &str)]) -> Value {
    pairs
        .iter()
        .map(|(k, v)| {
            let value = serde_json::to_value(ByteString(v.as_bytes().to_vec())).expect("base64");
            ((*k).to_owned(), value)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// Sets `pairs` as the data of Secret `name` and the completion annotation `at` beside
/// its other annotations, as a strategic-merge patch does.
pub(super) fn complete(cluster: &FakeCluster, name: &str, pairs: &[(&str, &str)], at: &str) {
    cluster.change("Secret", name, |s| {
        s["data"] = data(pairs);
        s["metadata"]["annotations"][COMPLETED_AT] = json!(at);
    });
}

/// What the CronJob does: `pairs` staged on the staging Secret, completed `at`.
pub(super) fn stage(cluster: &FakeCluster, pairs: &[(&str, &str)], at: &str) {
    complete(cluster, STAGING, pairs, at);
}

pub(super) fn deletes(cluster: &FakeCluster) -> Vec<String> {
    let mut lines: Vec<String> = cluster
        .calls()
        .iter()
        .filter(|c| matches!(c, Call::Delete(..)))
        .map(ToString::to_string)
        .collect();
    lines.sort();
    lines
}

/// Every object of the feature, as a Keystone that had it enabled left them.
fn feature_objects() -> Vec<Value> {
    let script = |name: &str, created: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ns", "creationTimestamp": created,
                "labels": {"cobaltcore.c5c3.io/config-base": "ks-admin-password-rotate-script"}},
            "data": {"admin_password_rotate.sh": "#!/bin/sh"}})
    };
    let named = |api_version: &str, kind: &str, name: &str, rest: Value| {
        let mut object = json!({"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": "ns"}});
        if let (Value::Object(object), Value::Object(rest)) = (&mut object, rest) {
            object.extend(rest);
        }
        object
    };
    let rbac = "rbac.authorization.k8s.io/v1";
    vec![
        named(
            "batch/v1",
            "CronJob",
            ROTATE,
            json!({"spec": {"schedule": "0 0 1 * *", "jobTemplate": {}}}),
        ),
        secret(STAGING, &[]),
        secret(NEXT, &[("password", &"p".repeat(32))]),
        named(
            rbac,
            "RoleBinding",
            ROTATE,
            json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ROTATE}}),
        ),
        named(rbac, "Role", ROTATE, json!({})),
        named("v1", "ServiceAccount", ROTATE, json!({})),
        named(
            "external-secrets.io/v1alpha1",
            "PushSecret",
            BACKUP,
            json!({"spec": {"secretStoreRefs": [], "selector": {"secret": {"name": NEXT}}, "data": []}}),
        ),
        script(
            "ks-admin-password-rotate-script-aaaa1111",
            "2025-01-01T00:00:00Z",
        ),
        script(
            "ks-admin-password-rotate-script-bbbb2222",
            "2025-06-01T00:00:00Z",
        ),
    ]
}

#[test]
fn absent_or_disabled_rotation_deletes_exactly_the_objects_the_keystone_controls() {
    for (case, spec) in [
        ("absent", json!({})),
        (
            "disabled",
            json!({"passwordRotation": {"enabled": false, "schedule": "0 0 1 * *"}}),
        ),
    ] {
        let cluster = FakeCluster::new();
        for object in feature_objects() {
            cluster.put(owned(object));
        }
        let foreign_script = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "ks-admin-password-rotate-script-cccc3333", "namespace": "ns",
                "labels": {"cobaltcore.c5c3.io/config-base": "ks-admin-password-rotate-script"}}});
        cluster.put(foreign_script);
        let (result, pass) = step(&cluster, spec);
        assert_eq!(result.expect(case), None, "{case}");
        assert_eq!(
            ready(&pass),
            [
                "True",
                "RotationDisabled",
                "Scheduled admin password rotation is disabled; Model B resources removed"
            ],
            "{case}"
        );
        assert_eq!(
            deletes(&cluster),
            [
                "delete ConfigMap ns/ks-admin-password-rotate-script-aaaa1111",
                "delete ConfigMap ns/ks-admin-password-rotate-script-bbbb2222",
                "delete CronJob ns/ks-admin-password-rotate",
                "delete PushSecret ns/ks-admin-password-backup",
                "delete Role ns/ks-admin-password-rotate",
                "delete RoleBinding ns/ks-admin-password-rotate",
                "delete Secret ns/ks-admin-password-next",
                "delete Secret ns/ks-admin-password-rotation",
                "delete ServiceAccount ns/ks-admin-password-rotate",
            ],
            "{case}"
        );
        assert_eq!(
            cluster.writes().len(),
            9,
            "{case}: {:?}",
            cluster.write_log()
        );
        assert_eq!(
            cluster.names("ConfigMap"),
            ["ks-admin-password-rotate-script-cccc3333"],
            "{case}"
        );
        assert!(cluster.names("Secret").is_empty(), "{case}");
    }
}

#[test]
fn disabled_rotation_leaves_objects_of_its_names_that_someone_else_made() {
    let cluster = FakeCluster::new();
    for object in feature_objects() {
        cluster.put(object);
    }
    let (result, pass) = step(&cluster, json!({}));
    assert_eq!(result.expect("runs"), None);
    assert_eq!(ready(&pass)[1], "RotationDisabled");
    assert!(deletes(&cluster).is_empty(), "{:?}", deletes(&cluster));
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    assert!(cluster.server("PushSecret", BACKUP).is_some());
    assert!(cluster.server("Secret", NEXT).is_some());
    assert_eq!(cluster.names("ConfigMap").len(), 2);
}

#[test]
fn disabled_rotation_with_nothing_to_remove_sends_nothing() {
    let cluster = FakeCluster::new();
    let (result, pass) = step(&cluster, json!({}));
    assert_eq!(result.expect("runs"), None);
    assert_eq!(ready(&pass)[1], "RotationDisabled");
    assert!(deletes(&cluster).is_empty(), "{:?}", deletes(&cluster));
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn enabled_rotation_creates_each_object_with_its_exact_shape() {
    let cluster = FakeCluster::new();
    let mut spec = enabled(json!({"schedule": "0 4 1 * *", "suspend": true, "passwordLength": 40}));
    spec["deployment"] = json!({"priorityClassName": "high"});
    let (result, pass) = step(&cluster, spec);
    assert_eq!(result.expect("runs"), None);
    assert_eq!(ready(&pass), configured());
    let labels = json!({"app.kubernetes.io/instance": "ks", "app.kubernetes.io/managed-by": "keystone-operator",
        "app.kubernetes.io/name": "keystone"});
    let next = cluster.server("Secret", NEXT).expect("push-source");
    assert_eq!(next["metadata"]["labels"], labels);
    assert_eq!(next["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    assert!(next.get("data").is_none_or(Value::is_null));
    let staging = cluster.server("Secret", STAGING).expect("staging");
    let mut staging_labels = labels.clone();
    staging_labels["cobaltcore.c5c3.io/rotation-target"] = json!("admin-password");
    assert_eq!(staging["metadata"]["labels"], staging_labels);
    assert!(staging.get("data").is_none_or(Value::is_null));
    let role = cluster.server("Role", ROTATE).expect("role");
    assert_eq!(
        role["rules"],
        json!([
            {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [NEXT], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [STAGING], "verbs": ["get", "patch"]},
        ])
    );
    let binding = cluster.server("RoleBinding", ROTATE).expect("binding");
    assert_eq!(
        (&binding["roleRef"], &binding["subjects"]),
        (
            &json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ROTATE}),
            &json!([{"kind": "ServiceAccount", "name": ROTATE, "namespace": "ns"}])
        )
    );
    let account = cluster.server("ServiceAccount", ROTATE).expect("account");
    assert_eq!(account["metadata"]["labels"], labels);
    let script_data = BTreeMap::from([(script::SCRIPT_KEY.to_owned(), script::rotate_script())]);
    let script_name = immutable_name("ks-admin-password-rotate-script", &script_data);
    assert_eq!(
        cluster.names("ConfigMap"),
        std::slice::from_ref(&script_name)
    );
    let config_map = cluster.server("ConfigMap", &script_name).expect("script");
    assert_eq!(
        config_map["data"]["admin_password_rotate.sh"],
        script::rotate_script()
    );
    let cron = cluster.server("CronJob", ROTATE).expect("cron job");
    assert_eq!(cron["metadata"]["labels"], labels);
    let mut pod_labels = labels.clone();
    pod_labels["app.kubernetes.io/component"] = json!("admin-password-rotation");
    assert_eq!(
        cron["spec"],
        json!({"schedule": "0 4 1 * *", "suspend": true, "jobTemplate": {"spec": {"template": {
        "metadata": {"labels": pod_labels},
        "spec": {
            "serviceAccountName": ROTATE, "restartPolicy": "OnFailure",
            "priorityClassName": "high", "securityContext": {"fsGroup": 42424},
            "containers": [{
                "name": "admin-password-rotate", "image": "ghcr.io/c5c3/keystone:2025.2",
                "command": ["/scripts/admin_password_rotate.sh"],
                "env": [
                    {"name": "SECRET_NAME", "value": STAGING},
                    {"name": "SECRET_NAMESPACE",
                     "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                    {"name": "PASSWORD_LENGTH", "value": "40"},
                ],
                "volumeMounts": [{"name": "scripts", "mountPath": "/scripts", "readOnly": true}],
                "securityContext": {
                    "allowPrivilegeEscalation": false, "runAsNonRoot": true,
                    "runAsUser": 42424, "runAsGroup": 42424,
                    "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]},
                    "seccompProfile": {"type": "RuntimeDefault"}},
            }],
            "volumes": [{"name": "scripts",
                         "configMap": {"name": script_name, "defaultMode": 0o555}}],
        }}}}})
    );
    assert!(
        cluster.server("PushSecret", BACKUP).is_none(),
        "no PushSecret while the push-source Secret is empty"
    );
    assert!(cluster.events().is_empty());
}

#[test]
fn an_empty_schedule_is_the_monthly_default() {
    let cluster = FakeCluster::new();
    step(&cluster, enabled(json!({}))).0.expect("runs");
    let cron = cluster.server("CronJob", ROTATE).expect("cron job");
    assert_eq!(cron["spec"]["schedule"], "0 0 1 * *");
    assert_eq!(cron["spec"]["suspend"], false);
}

#[test]
fn script_config_maps_of_older_contents_are_pruned_but_the_newest_older_one() {
    let cluster = FakeCluster::new();
    for object in feature_objects().into_iter().skip(7) {
        cluster.put(owned(object));
    }
    cluster.put(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "ks-admin-password-rotate-script-cccc3333", "namespace": "ns",
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "labels": {"cobaltcore.c5c3.io/config-base": "ks-admin-password-rotate-script"}}}));
    let (result, pass) = step(&cluster, enabled(json!({})));
    assert_eq!(result.expect("runs"), None);
    assert_eq!(ready(&pass), configured());
    assert_eq!(
        deletes(&cluster),
        ["delete ConfigMap ns/ks-admin-password-rotate-script-aaaa1111"]
    );
    let names = cluster.names("ConfigMap");
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.contains(&"ks-admin-password-rotate-script-bbbb2222".to_owned()));
    assert!(names.contains(&"ks-admin-password-rotate-script-cccc3333".to_owned()));
}

#[test]
fn a_push_source_secret_that_cannot_be_applied_fails_the_step_naming_it() {
    let cluster = FakeCluster::new().failing(
        Op::Apply,
        NEXT,
        ApiError::Unavailable("etcd is down".into()),
    );
    let (result, pass) = step(&cluster, enabled(json!({})));
    let error = result.expect_err("fails");
    assert_eq!(
        error.to_string(),
        format!("applying Secret ns/{NEXT}: unavailable: etcd is down")
    );
    assert!(pass.conditions_of(PASSWORD_ROTATION_READY).is_none());
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}
