use serde_json::{Value, json};
use wasm_operator_sdk::testing::{Call, FakeCluster, Op, Refusal};
use wasm_operator_sdk::{ApiError, ObjectRef, blocks};

use super::*;
use crate::testing::{
    CONFIG_MAP, condition, finish_job, jobs_created, keystone_with, owned, pass, pass_with_config,
};

fn overrides() -> Value {
    json!({"policyOverrides": {"rules": {"identity:list_users": "role:admin"}}})
}

fn valid(pass: &Pass<'_>) -> (String, String, String) {
    condition(pass, POLICY_VALID_READY)
}

fn the_job() -> ObjectRef {
    ObjectRef::of::<Job>(Some("ns"), "ks-policy-validation")
}

/// A pod of the validation Job created at `created`, its container terminated with
/// `message` (none when `None`).
fn pod(name: &str, created: &str, job: &str, message: Option<&str>) -> Value {
    let mut terminated = json!({"exitCode": 1, "reason": "Error"});
    if let Some(message) = message {
        terminated["message"] = json!(message);
    }
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": created,
            "labels": {"job-name": job}},
        "status": {"containerStatuses": [{"name": "validator", "image": "k", "imageID": "",
            "ready": false, "restartCount": 0, "state": {"terminated": terminated}}]}})
}

fn stale_job() -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "ks-policy-validation", "namespace": "ns"}})
}

#[test]
fn without_policy_overrides_a_validation_job_the_keystone_does_not_control_is_left_alone() {
    let cluster = FakeCluster::new().with(stale_job());
    let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(cluster.object(&the_job()).is_some());
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    assert_eq!(valid(&pass).1, "PolicyValidationNotRequired");
}

#[test]
fn without_policy_overrides_the_validation_job_is_deleted_and_not_required() {
    let stale = owned(stale_job());
    for (cluster, deleted) in [(FakeCluster::new().with(stale), 1), (FakeCluster::new(), 0)] {
        let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
        assert_eq!(run(&mut pass).expect("runs"), None);
        assert_eq!(cluster.object(&the_job()), None);
        let deletes: Vec<Call> = cluster
            .calls()
            .into_iter()
            .filter(|c| matches!(c, Call::Delete(..)))
            .collect();
        assert_eq!(
            deletes.len(),
            deleted,
            "no request for a Job not there: {deletes:?}"
        );
        assert!(
            deletes
                .iter()
                .all(|d| matches!(d, Call::Delete(r, o) if *r == the_job()
                && o.propagation == wasm_operator_sdk::Propagation::Background)),
            "{deletes:?}"
        );
        assert_eq!(
            valid(&pass),
            (
                "True".into(),
                "PolicyValidationNotRequired".into(),
                "No policy overrides configured".into()
            )
        );
    }
}

#[test]
fn policy_overrides_run_the_validator_job_until_it_passes() {
    let cluster = FakeCluster::new();
    let mut spec = overrides();
    spec["deployment"] = json!({"priorityClassName": "openstack-critical"});
    let mut pass = pass_with_config(&cluster, &keystone_with(spec));
    pass.domains_secret_name = "ks-domains-2".into();
    assert_eq!(run(&mut pass).expect("runs"), Some(SECRET_POLLING));
    assert_eq!(
        valid(&pass),
        (
            "False".into(),
            "PolicyValidationInProgress".into(),
            "Policy validation job is running".into()
        )
    );
    let job = cluster.object(&the_job()).expect("created");
    assert_eq!(job["metadata"].get("labels"), None);
    assert_eq!(job["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    assert_eq!(job["spec"]["backoffLimit"], 2);
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(pod.get("priorityClassName"), None);
    assert_eq!(
        pod["volumes"],
        json!([{"name": "config", "configMap": {"name": CONFIG_MAP}},
            {"name": "domains", "secret": {"secretName": "ks-domains-2", "defaultMode": 0o400}}])
    );
    let container = &pod["containers"][0];
    assert_eq!(container["name"], "validator");
    assert_eq!(container["image"], "ghcr.io/c5c3/keystone:2025.2");
    assert_eq!(
        container["command"],
        json!([
            "oslopolicy-validator",
            "--namespace",
            "keystone",
            "--config-dir",
            "/etc/keystone/keystone.conf.d/"
        ])
    );
    assert_eq!(
        container["terminationMessagePolicy"],
        "FallbackToLogsOnError"
    );
    assert_eq!(container.get("env"), None, "no database connection");
    assert_eq!(
        container["securityContext"],
        serde_json::to_value(pod::restricted()).expect("encodes")
    );
    assert_eq!(
        container["volumeMounts"],
        json!([{"name": "config", "mountPath": "/etc/keystone/keystone.conf.d/", "readOnly": true},
            {"name": "domains", "mountPath": "/etc/keystone/domains", "readOnly": true}])
    );
    finish_job(&cluster, "ks-policy-validation", "Complete");
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        valid(&pass),
        (
            "True".into(),
            "PolicyValidationPassed".into(),
            "Policy validation completed successfully".into()
        )
    );
}

fn failed_validation(cluster: &FakeCluster) -> (Error, (String, String, String)) {
    let mut pass = pass_with_config(cluster, &keystone_with(overrides()));
    run(&mut pass).expect("creates the Job");
    finish_job(cluster, "ks-policy-validation", "Failed");
    let error = run(&mut pass).expect_err("the validation failed");
    let condition = valid(&pass);
    (error, condition)
}

#[test]
fn a_failed_validation_stops_the_pass_with_the_newest_pods_message_cut_at_500() {
    let long = format!("E: rule identity:list_users: {}", "x".repeat(600));
    let cluster = FakeCluster::new()
        .with(pod(
            "v-1",
            "2026-01-01T00:00:00Z",
            "ks-policy-validation",
            Some("old"),
        ))
        .with(pod(
            "v-3",
            "2026-01-01T00:02:00Z",
            "ks-policy-validation",
            Some(&long),
        ))
        .with(pod(
            "v-2",
            "2026-01-01T00:01:00Z",
            "ks-policy-validation",
            Some("middle"),
        ))
        .with(pod(
            "other",
            "2026-01-01T00:03:00Z",
            "ks-db-sync",
            Some("not ours"),
        ));
    let (error, (status, reason, message)) = failed_validation(&cluster);
    match &error {
        Error::Job {
            what,
            source: blocks::job::Error::JobFailed { job },
        } => assert_eq!(
            (what.as_str(), job.as_str()),
            ("running policy validation", "ns/ks-policy-validation")
        ),
        other => panic!("not a failed Job: {other:?}"),
    }
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "PolicyValidationFailed")
    );
    let cut: String = long.chars().take(500).collect();
    assert_eq!(message, format!("Policy validation failed: {cut}..."));
}

#[test]
fn a_failed_validation_quotes_a_short_message_whole_and_skips_pods_without_one() {
    let cluster = FakeCluster::new()
        .with(pod(
            "v-1",
            "2026-01-01T00:00:00Z",
            "ks-policy-validation",
            Some("E: bad rule"),
        ))
        .with(pod(
            "v-2",
            "2026-01-01T00:01:00Z",
            "ks-policy-validation",
            None,
        ));
    let (_, (_, reason, message)) = failed_validation(&cluster);
    assert_eq!(reason, "PolicyValidationFailed");
    assert_eq!(message, "Policy validation failed: E: bad rule");
}

#[test]
fn a_failed_validation_without_a_pod_message_points_at_kubectl_logs() {
    let fallback = "Policy validation failed; check Job ks-policy-validation logs: \
                    kubectl logs -n ns job/ks-policy-validation";
    let no_message = FakeCluster::new().with(pod(
        "v-1",
        "2026-01-01T00:00:00Z",
        "ks-policy-validation",
        None,
    ));
    let list_fails = FakeCluster::new();
    list_fails.fail(Op::List, "Pod", ApiError::Unavailable("down".into()), 1);
    for (case, cluster) in [
        ("no pods", FakeCluster::new()),
        ("no message", no_message),
        ("the list fails", list_fails),
    ] {
        let (error, (_, reason, message)) = failed_validation(&cluster);
        assert!(matches!(error, Error::Job { .. }), "{case}: {error:?}");
        assert_eq!(
            (reason.as_str(), message.as_str()),
            ("PolicyValidationFailed", fallback),
            "{case}"
        );
        let listed = cluster.calls().iter().any(|c| {
            matches!(c, Call::List(kind, _, o) if kind == "Pod"
                && o.label_selector.as_deref() == Some("job-name=ks-policy-validation"))
        });
        assert!(listed, "{case}: the pods were listed by job-name");
    }
}

#[test]
fn a_changed_policy_re_runs_the_validation_job() {
    let cluster = FakeCluster::new();
    let mut pass = pass_with_config(&cluster, &keystone_with(overrides()));
    run(&mut pass).expect("creates the Job");
    finish_job(&cluster, "ks-policy-validation", "Failed");
    run(&mut pass).expect_err("the validation failed");
    let hash = |cluster: &FakeCluster| {
        cluster.object(&the_job()).expect("a Job")["metadata"]["annotations"]
            [blocks::job::POD_SPEC_HASH_ANNOTATION]
            .clone()
    };
    let before = hash(&cluster);
    // The fixed policy renders into a new content-hashed ConfigMap.
    pass.config_map_name = Some("ks-config-2".into());
    assert_eq!(run(&mut pass).expect("re-runs"), Some(SECRET_POLLING));
    assert_eq!(valid(&pass).1, "PolicyValidationInProgress");
    assert_ne!(hash(&cluster), before);
    assert_eq!(
        jobs_created(&cluster),
        ["ks-policy-validation", "ks-policy-validation"]
    );
    let job = cluster.object(&the_job()).expect("re-created");
    assert_eq!(
        job["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"],
        "ks-config-2"
    );
    // An unchanged, still failed Job is not re-run.
    let cluster = FakeCluster::new().refusing(Refusal::op_on(Op::Delete, "Job"));
    let mut pass = pass_with_config(&cluster, &keystone_with(overrides()));
    run(&mut pass).expect("creates the Job");
    finish_job(&cluster, "ks-policy-validation", "Failed");
    run(&mut pass).expect_err("failed");
    run(&mut pass).expect_err("still failed");
    assert_eq!(jobs_created(&cluster), ["ks-policy-validation"]);
}

#[test]
fn the_validator_job_before_the_config_step_ran_is_a_step_order_error() {
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, &keystone_with(overrides()));
    let error = run(&mut pass).expect_err("no ConfigMap name");
    assert!(
        matches!(
            error,
            Error::StepOrder {
                step: "policy-validation",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(cluster.writes().is_empty());
}
