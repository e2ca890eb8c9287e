use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use super::*;
use crate::testing::{condition, keystone_with, owned, pass};

const KIND: &str = "HorizontalPodAutoscaler";

fn stale_hpa() -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": KIND,
        "metadata": {"name": "ks", "namespace": "ns"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "ks"},
                 "maxReplicas": 4}})
}

fn cpu(percent: i32) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": percent}}})
}

fn memory(percent: i32) -> Value {
    json!({"type": "Resource", "resource": {"name": "memory",
        "target": {"type": "Utilization", "averageUtilization": percent}}})
}

#[test]
fn without_autoscaling_the_hpa_is_deleted_and_not_required() {
    let cluster = FakeCluster::new().with(owned(stale_hpa()));
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(cluster.server(KIND, "ks").is_none());
    assert_eq!(
        cluster.write_log(),
        ["delete HorizontalPodAutoscaler ns/ks"]
    );
    assert_eq!(
        condition(&pass, HPA_READY),
        (
            "True".into(),
            "HPANotRequired".into(),
            "Autoscaling is not configured".into()
        )
    );
}

#[test]
fn without_autoscaling_an_hpa_of_its_name_the_keystone_does_not_control_is_left_alone() {
    let cluster = FakeCluster::new().with(stale_hpa());
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(condition(&pass, HPA_READY).1, "HPANotRequired");
    assert!(cluster.server(KIND, "ks").is_some());
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn the_hpa_scales_the_deployment_between_its_bounds_on_the_targets_set() {
    // (case, spec patch, minReplicas, metrics)
    let cases = [
        (
            "both targets, explicit minimum: cpu then memory",
            json!({"autoscaling": {"minReplicas": 2, "maxReplicas": 6,
                "targetMemoryUtilization": 70, "targetCPUUtilization": 80}}),
            2,
            json!([cpu(80), memory(70)]),
        ),
        (
            "cpu only, minimum from spec.deployment.replicas",
            json!({"deployment": {"replicas": 5},
                "autoscaling": {"maxReplicas": 9, "targetCPUUtilization": 60}}),
            5,
            json!([cpu(60)]),
        ),
        (
            "memory only, no replicas: the default three",
            json!({"autoscaling": {"maxReplicas": 9, "targetMemoryUtilization": 50}}),
            3,
            json!([memory(50)]),
        ),
    ];
    for (case, spec, min_replicas, metrics) in cases {
        let cluster = FakeCluster::new();
        let mut pass = pass(&cluster, &keystone_with(spec));
        assert_eq!(run(&mut pass).expect("runs"), None, "{case}");
        let hpa = cluster.server(KIND, "ks").expect("applied");
        assert_eq!(hpa["apiVersion"], "autoscaling/v2", "{case}");
        assert_eq!(
            hpa["spec"]["scaleTargetRef"],
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "ks"}),
            "{case}"
        );
        assert_eq!(hpa["spec"]["minReplicas"], min_replicas, "{case}");
        assert_eq!(hpa["spec"]["metrics"], metrics, "{case}");
        assert_eq!(
            hpa["metadata"]["labels"],
            json!({"app.kubernetes.io/instance": "ks", "app.kubernetes.io/managed-by": "keystone-operator",
                "app.kubernetes.io/name": "keystone"}),
            "{case}"
        );
        assert_eq!(hpa["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
        assert_eq!(
            condition(&pass, HPA_READY),
            (
                "True".into(),
                "HPAReady".into(),
                "HorizontalPodAutoscaler is configured".into()
            ),
            "{case}"
        );
    }
}

#[test]
fn the_max_replicas_is_the_specs() {
    let cluster = FakeCluster::new();
    let spec = json!({"autoscaling": {"maxReplicas": 7, "targetCPUUtilization": 80}});
    let mut pass = pass(&cluster, &keystone_with(spec));
    run(&mut pass).expect("runs");
    assert_eq!(
        cluster.server(KIND, "ks").expect("applied")["spec"]["maxReplicas"],
        7
    );
}

#[test]
fn a_converged_hpa_is_not_written_again() {
    let cluster = FakeCluster::new();
    let object =
        keystone_with(json!({"autoscaling": {"maxReplicas": 6, "targetCPUUtilization": 80}}));
    run(&mut pass(&cluster, &object)).expect("first pass");
    cluster.clear_calls();
    let mut second = pass(&cluster, &object);
    assert_eq!(run(&mut second).expect("second pass"), None);
    assert_eq!(condition(&second, HPA_READY).1, "HPAReady");
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn a_converged_keystone_without_autoscaling_writes_nothing() {
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(condition(&pass, HPA_READY).1, "HPANotRequired");
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn a_failed_apply_is_an_error_naming_the_hpa_and_sets_no_condition() {
    let cluster = FakeCluster::new().failing(
        Op::Apply,
        "ks",
        ApiError::Unavailable("apiserver is down".into()),
    );
    let spec = json!({"autoscaling": {"maxReplicas": 6, "targetCPUUtilization": 80}});
    let mut pass = pass(&cluster, &keystone_with(spec));
    let error = run(&mut pass).expect_err("fails");
    assert!(
        error
            .to_string()
            .contains("applying HorizontalPodAutoscaler ns/ks"),
        "{error}"
    );
    assert!(error.to_string().contains("apiserver is down"), "{error}");
    assert!(pass.conditions_of(HPA_READY).is_none());
}
