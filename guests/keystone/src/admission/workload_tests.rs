use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::admission::Operation;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use crate::admission::tests::{Table, assert_create_table, field_errors, keystone, request, with};
use crate::admission::validate_object;

#[test]
fn uwsgi_and_graceful_termination_bounds_are_checked() {
    let table: Table<'_> = &[
        (&[], &[]),
        (
            &[(
                "/spec/uwsgi",
                json!({"processes": -1, "threads": 0, "harakiri": 0,
                                     "httpKeepAliveTimeout": 0}),
            )],
            &[
                "spec.uwsgi.processes: Invalid value: -1: must be at least 1",
                "spec.uwsgi.threads: Invalid value: 0: must be at least 1",
                "spec.uwsgi.harakiri: Invalid value: 0: must be at least 1",
                "spec.uwsgi.httpKeepAliveTimeout: Invalid value: 0: must be at least 1",
            ],
        ),
        (
            &[(
                "/spec/uwsgi",
                json!({"processes": 2, "threads": 1, "httpKeepAlive": false,
                                     "httpKeepAliveTimeout": 5}),
            )],
            &[
                "spec.uwsgi.httpKeepAliveTimeout: Invalid value: 5: may only be set when \
               httpKeepAlive is true",
            ],
        ),
        (
            &[("/spec/deployment/terminationGracePeriodSeconds", json!(9))],
            &[
                "spec.deployment.terminationGracePeriodSeconds: Invalid value: 9: must be at \
                 least 10",
            ],
        ),
        (
            &[("/spec/deployment/preStopSleepSeconds", json!(-1))],
            &["spec.deployment.preStopSleepSeconds: Invalid value: -1: must be at least 0"],
        ),
        (
            &[("/spec/deployment/preStopSleepSeconds", json!(30))],
            &[
                "spec.deployment.preStopSleepSeconds: Invalid value: 30: must be less than \
               terminationGracePeriodSeconds (30)",
            ],
        ),
        (
            &[
                ("/spec/deployment/terminationGracePeriodSeconds", json!(12)),
                ("/spec/deployment/preStopSleepSeconds", json!(0)),
            ],
            &[],
        ),
        (
            &[(
                "/spec/uwsgi",
                json!({"processes": 2, "threads": 1, "harakiri": 25}),
            )],
            &["spec.uwsgi.harakiri: Invalid value: 25: must be less than \
               terminationGracePeriodSeconds - preStopSleepSeconds (25)"],
        ),
        (
            &[(
                "/spec/uwsgi",
                json!({"processes": 2, "threads": 1, "harakiri": 24}),
            )],
            &[],
        ),
    ];
    assert_create_table(table);
}

#[test]
fn strategy_autoscaling_and_network_policy_are_checked() {
    let table: Table<'_> = &[
        (&[], &[]),
        (
            &[(
                "/spec/deployment/strategy",
                json!({"type": "Recreate",
                                                   "rollingUpdate": {"maxSurge": 1}}),
            )],
            &[
                "spec.deployment.strategy.rollingUpdate: Forbidden: may not be specified when \
               strategy `type` is 'Recreate'",
            ],
        ),
        (
            &[("/spec/deployment/strategy", json!({"type": "Recreate"}))],
            &[],
        ),
        (
            &[(
                "/spec/autoscaling",
                json!({"maxReplicas": 0, "minReplicas": 0,
                                           "targetCPUUtilization": 0,
                                           "targetMemoryUtilization": 101}),
            )],
            &[
                "spec.autoscaling.maxReplicas: Invalid value: 0: must be at least 1",
                "spec.autoscaling.minReplicas: Invalid value: 0: must be at least 1",
                "spec.autoscaling.targetCPUUtilization: Invalid value: 0: must be between 1 \
                 and 100",
                "spec.autoscaling.targetMemoryUtilization: Invalid value: 101: must be between \
                 1 and 100",
            ],
        ),
        (
            &[(
                "/spec/autoscaling",
                json!({"maxReplicas": 4, "minReplicas": 5}),
            )],
            &[
                "spec.autoscaling.minReplicas: Invalid value: 5: must not exceed maxReplicas (4)",
                "spec.autoscaling: Required value: at least one of targetCPUUtilization or \
                 targetMemoryUtilization must be set",
            ],
        ),
        (
            &[(
                "/spec/autoscaling",
                json!({"maxReplicas": 2, "targetCPUUtilization": 80}),
            )],
            &[
                "spec.autoscaling.maxReplicas: Invalid value: 2: must be at least \
               spec.deployment.replicas (3) while minReplicas is unset, which then defaults \
               to it",
            ],
        ),
        (
            &[(
                "/spec/autoscaling",
                json!({"maxReplicas": 2, "minReplicas": 1,
                                           "targetCPUUtilization": 80}),
            )],
            &[],
        ),
        (
            &[("/spec/networkPolicy", json!({"ingress": []}))],
            &[
                "spec.networkPolicy.ingress: Required value: at least one ingress source must be \
               specified",
            ],
        ),
    ];
    assert_create_table(table);
}

#[test]
fn requests_may_not_exceed_limits_and_must_be_quantities() {
    let table: Table<'_> = &[
        (&[], &[]),
        (
            &[(
                "/spec/deployment/resources",
                json!({
                "requests": {"cpu": "100m", "memory": "256Mi"},
                "limits": {"cpu": "0.5", "memory": "512Mi"}}),
            )],
            &[],
        ),
        (
            &[(
                "/spec/deployment/resources",
                json!({
                "requests": {"cpu": "600m", "memory": "1Gi"},
                "limits": {"cpu": "500m", "memory": "1024Mi"}}),
            )],
            &[
                "spec.deployment.resources.requests[cpu]: Invalid value: \"600m\": must be less \
               than or equal to cpu limit of 500m",
            ],
        ),
        (
            &[(
                "/spec/deployment/resources",
                json!({
                "requests": {"memory": "1G"}, "limits": {"memory": "lots"}}),
            )],
            &[
                "spec.deployment.resources.limits[memory]: Invalid value: \"lots\": quantities \
               must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            ],
        ),
    ];
    assert_create_table(table);
}

#[test]
fn topology_spread_must_select_this_keystones_pods() {
    let selector = |labels: Value| {
        json!([{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": labels}}])
    };
    let own =
        json!({"app.kubernetes.io/name": "keystone", "app.kubernetes.io/instance": "keystone"});
    let expected = "must be the Deployment's selector, {\"app.kubernetes.io/instance\":\
                    \"keystone\",\"app.kubernetes.io/name\":\"keystone\"}";
    let table: Table<'_> = &[
        (
            &[(
                "/spec/deployment/topologySpreadConstraints",
                selector(own.clone()),
            )],
            &[],
        ),
        (
            &[("/spec/deployment/topologySpreadConstraints", json!([]))],
            &[],
        ),
        (
            &[(
                "/spec/deployment/topologySpreadConstraints",
                selector(json!({"app.kubernetes.io/name": "keystone"})),
            )],
            &[&format!(
                "spec.deployment.topologySpreadConstraints[0].labelSelector.matchLabels: \
                 Invalid value: {{\"app.kubernetes.io/name\":\"keystone\"}}: {expected}"
            )],
        ),
        (
            &[(
                "/spec/deployment/topologySpreadConstraints",
                json!([
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
            )],
            &[
                "spec.deployment.topologySpreadConstraints[0].labelSelector: Required value: \
               must select the Keystone's pods",
            ],
        ),
        (
            &[(
                "/spec/deployment/topologySpreadConstraints",
                json!([
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                 "labelSelector": {"matchLabels": own,
                    "matchExpressions": [{"key": "tier", "operator": "Exists"}]}}]),
            )],
            &[
                "spec.deployment.topologySpreadConstraints[0].labelSelector.matchExpressions: \
               Forbidden: the selector must be the Deployment's matchLabels alone",
            ],
        ),
    ];
    assert_create_table(table);
}

fn priority_class(name: &str) -> Value {
    json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
           "metadata": {"name": name}, "value": 1000})
}

#[test]
fn a_priority_class_must_exist_on_the_api_server() {
    let object = with(
        keystone(),
        &[(
            "/spec/deployment/priorityClassName",
            json!("keystone-critical"),
        )],
    );
    let table: &[(FakeCluster, &[&str])] = &[
        (
            FakeCluster::new().with(priority_class("keystone-critical")),
            &[],
        ),
        (
            FakeCluster::new().with(priority_class("other")),
            &[
                "spec.deployment.priorityClassName: Invalid value: \"keystone-critical\": no \
               PriorityClass of this name exists",
            ],
        ),
        (
            FakeCluster::new().failing(
                Op::Get,
                "keystone-critical",
                ApiError::Forbidden("plugin keystone may not get PriorityClasses".into()),
            ),
            &[
                "spec.deployment.priorityClassName: Invalid value: \"keystone-critical\": cannot \
               be checked: reading the PriorityClass failed: forbidden: plugin keystone may not \
               get PriorityClasses",
            ],
        ),
    ];
    for (cluster, expected) in table {
        let validated = validate_object(cluster, &request(Operation::Create, object.clone(), None));
        assert_eq!(field_errors(&validated), *expected);
        let reads: Vec<String> = cluster.calls().iter().map(ToString::to_string).collect();
        assert_eq!(reads, ["get-server PriorityClass keystone-critical"]);
    }
}
