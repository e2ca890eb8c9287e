use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use super::*;
use crate::testing::{
    CONFIG_MAP, condition, events, keystone_with, owned, pass, pass_with_config, run_with_config,
};

const BYPASS_EVENT: &str = "Trust flush legacy bypass: spec.trustFlush is nil (webhook defaulting \
                            did not run); existing CronJob deleted";
const BYPASS_MESSAGE: &str =
    "Trust flush bypass: spec.trustFlush is nil (webhook did not default this object)";

fn stale_cron_job() -> Value {
    json!({"apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "ks-trust-flush", "namespace": "ns"},
        "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "trust-flush", "image": "old"}]}}}}}})
}

fn hourly() -> Value {
    json!({"trustFlush": {"schedule": "0 * * * *"}})
}

fn bypass_event() -> (String, String, String) {
    (
        "Warning".into(),
        "TrustFlushBypass".into(),
        BYPASS_EVENT.into(),
    )
}

#[test]
fn without_trust_flush_the_cron_job_is_deleted_with_a_bypass_warning() {
    let cluster = FakeCluster::new().with(owned(stale_cron_job()));
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(cluster.server("CronJob", "ks-trust-flush").is_none());
    assert_eq!(cluster.write_log(), ["delete CronJob ns/ks-trust-flush"]);
    assert_eq!(events(&cluster), [bypass_event()]);
    assert_eq!(
        condition(&pass, TRUST_FLUSH_READY),
        (
            "True".into(),
            "TrustFlushNotRequired".into(),
            BYPASS_MESSAGE.into()
        )
    );
}

#[test]
fn a_keystone_entering_the_bypass_is_warned_once_then_its_converged_passes_record_nothing() {
    let cluster = FakeCluster::new();
    let mut first = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut first).expect("runs"), None);
    assert_eq!(events(&cluster), [bypass_event()]);
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    // The next pass finds the condition the first one wrote.
    let object = serde_json::to_value(&first.keystone).expect("encodes");
    cluster.clear_calls();
    let mut second = pass(&cluster, &object);
    assert_eq!(run(&mut second).expect("runs"), None);
    assert_eq!(
        condition(&second, TRUST_FLUSH_READY),
        (
            "True".into(),
            "TrustFlushNotRequired".into(),
            BYPASS_MESSAGE.into()
        )
    );
    assert!(
        cluster
            .calls()
            .iter()
            .all(|c| !matches!(c, wasm_operator_sdk::testing::Call::Event(..)))
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn a_keystone_already_bypassed_is_warned_again_when_a_cron_job_it_controls_is_deleted() {
    let cluster = FakeCluster::new();
    let mut first = pass(&cluster, &keystone_with(json!({})));
    run(&mut first).expect("runs");
    let object = serde_json::to_value(&first.keystone).expect("encodes");
    cluster.put(owned(stale_cron_job()));
    cluster.clear_calls();
    let mut second = pass(&cluster, &object);
    run(&mut second).expect("runs");
    assert_eq!(cluster.write_log(), ["delete CronJob ns/ks-trust-flush"]);
    assert_eq!(
        cluster
            .calls()
            .iter()
            .filter(|c| matches!(c, wasm_operator_sdk::testing::Call::Event(..)))
            .count(),
        1
    );
}

#[test]
fn without_trust_flush_a_cron_job_of_its_name_the_keystone_does_not_control_is_left_alone() {
    let cluster = FakeCluster::new().with(stale_cron_job());
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(cluster.server("CronJob", "ks-trust-flush").is_some());
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    assert_eq!(
        condition(&pass, TRUST_FLUSH_READY).1,
        "TrustFlushNotRequired"
    );
}

#[test]
fn the_cron_job_runs_trust_flush_with_the_args_on_the_schedule() {
    let cluster = FakeCluster::new();
    let spec = json!({
        "trustFlush": {"schedule": "*/30 * * * *", "suspend": true,
                       "args": ["--date", "2026-01-01"]},
        "deployment": {"priorityClassName": "openstack-high"},
    });
    let (result, pass) = run_with_config(&cluster, spec, run);
    assert_eq!(result.expect("runs"), None);
    let cron_job = cluster
        .server("CronJob", "ks-trust-flush")
        .expect("applied");
    assert_eq!(
        cron_job["metadata"]["labels"],
        json!({"app.kubernetes.io/instance": "ks", "app.kubernetes.io/managed-by": "keystone-operator",
            "app.kubernetes.io/name": "keystone"})
    );
    assert_eq!(cron_job["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    assert_eq!(cron_job["spec"]["schedule"], "*/30 * * * *");
    assert_eq!(cron_job["spec"]["suspend"], true);
    let template = &cron_job["spec"]["jobTemplate"]["spec"]["template"];
    assert_eq!(
        template["metadata"]["labels"]["app.kubernetes.io/component"],
        "trust-flush"
    );
    assert_eq!(
        template["metadata"]["labels"]["app.kubernetes.io/instance"],
        "ks"
    );
    let pod = &template["spec"];
    assert_eq!(pod["restartPolicy"], "OnFailure");
    assert_eq!(pod["priorityClassName"], "openstack-high");
    assert_eq!(pod["securityContext"], json!({"fsGroup": 42424}));
    let containers = pod["containers"].as_array().expect("containers");
    assert_eq!(containers.len(), 1);
    let container = &containers[0];
    assert_eq!(container["name"], "trust-flush");
    assert_eq!(container["image"], "ghcr.io/c5c3/keystone:2025.2");
    assert_eq!(
        container["command"],
        json!([
            "keystone-manage",
            "--config-dir=/etc/keystone/keystone.conf.d/",
            "trust_flush",
            "--date",
            "2026-01-01"
        ])
    );
    assert_eq!(
        container["env"],
        json!([{"name": "OS_DATABASE__CONNECTION", "valueFrom": {"secretKeyRef":
            {"name": "ks-db-connection", "key": "connection"}}}])
    );
    assert_eq!(container["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        container["volumeMounts"],
        json!([
            {"name": "config", "mountPath": "/etc/keystone/keystone.conf.d/", "readOnly": true},
            {"name": "fernet-keys", "mountPath": "/etc/keystone/fernet-keys", "readOnly": true},
            {"name": "credential-keys", "mountPath": "/etc/keystone/credential-keys", "readOnly": true},
        ])
    );
    assert_eq!(
        pod["volumes"],
        json!([
            {"name": "config", "configMap": {"name": CONFIG_MAP}},
            {"name": "fernet-keys", "secret": {"secretName": "ks-fernet-keys", "defaultMode": 0o400}},
            {"name": "credential-keys", "secret": {"secretName": "ks-credential-keys", "defaultMode": 0o400}},
        ])
    );
    assert_eq!(
        condition(&pass, TRUST_FLUSH_READY),
        (
            "True".into(),
            "TrustFlushReady".into(),
            "Trust flush CronJob is configured".into()
        )
    );
    assert!(events(&cluster).is_empty());
}

#[test]
fn the_cron_job_mounts_db_tls_and_the_projected_domains_when_they_apply() {
    let cluster = FakeCluster::new();
    let mut spec = hourly();
    spec["database"] = json!({"tls": {"mode": "require", "caBundleSecretRef": {"name": "ca"},
        "clientCertSecretRef": {"name": "client"}}});
    let mut pass = pass_with_config(&cluster, &keystone_with(spec));
    pass.domains_secret_name = "ks-domains-1234".into();
    run(&mut pass).expect("runs");
    let cron_job = cluster
        .server("CronJob", "ks-trust-flush")
        .expect("applied");
    let pod = &cron_job["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    let names = |list: &Value| -> Vec<String> {
        list.as_array()
            .into_iter()
            .flatten()
            .map(|v| v["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let expected = [
        "config",
        "fernet-keys",
        "credential-keys",
        "db-tls",
        "domains",
    ];
    assert_eq!(names(&pod["volumes"]), expected);
    assert_eq!(names(&pod["containers"][0]["volumeMounts"]), expected);
    let mounts = &pod["containers"][0]["volumeMounts"];
    assert_eq!(mounts[3]["mountPath"], "/etc/keystone/db-tls/");
    assert_eq!(mounts[4]["mountPath"], "/etc/keystone/domains");
    assert_eq!(pod["volumes"][4]["secret"]["secretName"], "ks-domains-1234");
}

#[test]
fn a_converged_cron_job_is_not_written_again() {
    let cluster = FakeCluster::new();
    let (first, _) = run_with_config(&cluster, hourly(), run);
    first.expect("first pass");
    cluster.clear_calls();
    let (second, pass) = run_with_config(&cluster, hourly(), run);
    assert_eq!(second.expect("second pass"), None);
    assert_eq!(condition(&pass, TRUST_FLUSH_READY).1, "TrustFlushReady");
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    assert!(events(&cluster).is_empty());
}

#[test]
fn trust_flush_needs_the_config_step_to_have_run() {
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, &keystone_with(hourly()));
    let error = run(&mut pass).expect_err("fails");
    assert_eq!(
        error.to_string(),
        "step trust-flush needs the config ConfigMap's name, which an earlier step sets; it did \
         not run in this pass"
    );
    assert!(cluster.writes().is_empty());
}

#[test]
fn a_failed_apply_is_an_error_naming_the_cron_job() {
    let cluster = FakeCluster::new().failing(
        Op::Apply,
        "ks-trust-flush",
        ApiError::Unavailable("apiserver is down".into()),
    );
    let (result, pass) = run_with_config(&cluster, hourly(), run);
    let error = result.expect_err("fails");
    assert!(
        error
            .to_string()
            .starts_with("ensuring the trust flush CronJob: "),
        "{error}"
    );
    assert!(error.to_string().contains("apiserver is down"), "{error}");
    assert!(pass.conditions_of(TRUST_FLUSH_READY).is_none());
}
