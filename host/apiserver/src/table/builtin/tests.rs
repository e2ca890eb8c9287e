use serde_json::{Value, json};

use super::{printer, row};

fn cells(group: &str, kind: &str, object: Value) -> Vec<Value> {
    let printer = printer(group, kind).expect("a printer");
    let row = row(&printer, &object);
    assert_eq!(row.len(), printer.columns.len(), "one cell per column");
    row
}

fn running(name: &str, ready: bool, restarts: i64) -> Value {
    json!({"name": name, "ready": ready, "restartCount": restarts, "state": {"running": {}}})
}

#[test]
fn a_pod_row_counts_ready_containers_restarts_and_names_the_blocking_reason() {
    let pod = |status: Value, extra: Value| {
        let mut pod = json!({"metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "node-1"},
            "status": status});
        if let Some(meta) = extra.as_object() {
            for (k, v) in meta {
                pod["metadata"][k] = v.clone();
            }
        }
        pod
    };
    let cases = [
        (
            json!({"phase": "Running", "podIP": "10.0.0.5",
                "containerStatuses": [running("a", true, 1), running("b", true, 2)]}),
            json!({}),
            ("2/2", "Running", 3, "10.0.0.5"),
        ),
        (
            json!({"phase": "Pending", "containerStatuses": [
                running("a", true, 0),
                {"name": "b", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}),
            json!({}),
            ("1/2", "CrashLoopBackOff", 4, "<none>"),
        ),
        (
            json!({"phase": "Failed", "containerStatuses": [
                {"name": "a", "restartCount": 0, "state": {"terminated": {"exitCode": 3}}}]}),
            json!({}),
            ("0/2", "ExitCode:3", 0, "<none>"),
        ),
        (
            json!({"phase": "Running", "containerStatuses": [running("a", true, 0)]}),
            json!({"deletionTimestamp": "2024-01-01T00:00:00Z"}),
            ("1/2", "Terminating", 0, "<none>"),
        ),
    ];
    for (status, meta, (ready, reason, restarts, ip)) in cases {
        let row = cells("", "Pod", pod(status.clone(), meta));
        assert_eq!(
            (&row[1], &row[2], &row[3], &row[5], &row[6]),
            (
                &json!(ready),
                &json!(reason),
                &json!(restarts),
                &json!(ip),
                &json!("node-1")
            ),
            "{status}"
        );
    }
}

#[test]
fn a_job_row_shows_its_state_completions_and_template() {
    let job = |spec: Value, status: Value| {
        let mut job = json!({"metadata": {"name": "j"}, "spec": {
            "template": {"spec": {"containers": [{"name": "run", "image": "busybox"}]}},
            "selector": {"matchLabels": {"job-name": "j"}}}, "status": status});
        for (k, v) in spec.as_object().into_iter().flatten() {
            job["spec"][k] = v.clone();
        }
        job
    };
    let cases = [
        (
            json!({"completions": 3}),
            json!({"succeeded": 1}),
            ("Running", "1/3"),
        ),
        (
            json!({"completions": 1}),
            json!({"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}),
            ("Complete", "1/1"),
        ),
        (
            json!({"parallelism": 2}),
            json!({"conditions": [{"type": "Failed", "status": "True"}]}),
            ("Failed", "0/1 of 2"),
        ),
        (json!({}), json!({}), ("Running", "0/1")),
    ];
    for (spec, status, (state, completions)) in cases {
        let row = cells("batch", "Job", job(spec.clone(), status));
        assert_eq!(
            (&row[1], &row[2]),
            (&json!(state), &json!(completions)),
            "{spec}"
        );
        assert_eq!(
            row[5..],
            [json!("run"), json!("busybox"), json!("job-name=j")]
        );
    }
}

#[test]
fn a_service_row_shows_type_addresses_ports_and_selector() {
    let cases = [
        (
            json!({"type": "ClusterIP", "clusterIPs": ["10.96.0.10"], "selector": {"b": "2", "a": "1"},
                "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}),
            json!({}),
            [
                "ClusterIP",
                "10.96.0.10",
                "<none>",
                "80/TCP,53/UDP",
                "a=1,b=2",
            ],
        ),
        (
            json!({"type": "NodePort", "clusterIP": "10.96.0.11", "ports": [{"port": 80, "nodePort": 30080}]}),
            json!({}),
            ["NodePort", "10.96.0.11", "<none>", "80:30080/TCP", "<none>"],
        ),
        (
            json!({"type": "LoadBalancer", "clusterIP": "10.96.0.12", "ports": []}),
            json!({}),
            [
                "LoadBalancer",
                "10.96.0.12",
                "<pending>",
                "<none>",
                "<none>",
            ],
        ),
        (
            json!({"type": "LoadBalancer", "clusterIP": "10.96.0.12"}),
            json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}),
            [
                "LoadBalancer",
                "10.96.0.12",
                "203.0.113.7",
                "<none>",
                "<none>",
            ],
        ),
        (
            json!({"type": "ExternalName", "externalName": "db.example.com"}),
            json!({}),
            [
                "ExternalName",
                "<none>",
                "db.example.com",
                "<none>",
                "<none>",
            ],
        ),
    ];
    for (spec, status, expected) in cases {
        let row = cells(
            "",
            "Service",
            json!({"metadata": {"name": "s"}, "spec": spec.clone(), "status": status}),
        );
        let got: Vec<&Value> = [1, 2, 3, 4, 6].iter().map(|i| &row[*i]).collect();
        let expected: Vec<Value> = expected.iter().map(|e| json!(e)).collect();
        assert_eq!(got, expected.iter().collect::<Vec<_>>(), "{spec}");
    }
}

#[test]
fn a_deployment_row_shows_ready_of_desired_and_its_selector_sorted_by_key() {
    let row = cells(
        "apps",
        "Deployment",
        json!({"metadata": {"name": "d"}, "spec": {"replicas": 3,
            "selector": {"matchLabels": {"app": "web"}, "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["b", "a"]},
                {"key": "canary", "operator": "DoesNotExist"}]},
            "template": {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}),
    );
    assert_eq!(row[1..4], [json!("2/3"), json!(3), json!(2)]);
    assert_eq!(
        row[5..],
        [
            json!("a,b"),
            json!("x,y"),
            json!("app=web,!canary,tier in (a,b)")
        ]
    );
}

#[test]
fn kinds_without_their_own_columns_have_no_printer() {
    for (group, kind) in [
        ("rbac.authorization.k8s.io", "Role"),
        ("", "ServiceAccount"),
        ("example.com", "Pod"),
    ] {
        assert!(printer(group, kind).is_none(), "{group}/{kind}");
    }
}

#[test]
fn an_event_row_reads_either_api_and_counts_a_series() {
    let stored = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "cm.17"},
        "regarding": {"kind": "ConfigMap", "name": "cm", "fieldPath": "data"},
        "type": "Warning", "reason": "CopyFailed", "note": "  no target  ",
        "reportingController": "wasm-operator/copier", "reportingInstance": "pod-1",
        "eventTime": "2000-01-01T00:00:00.000000Z",
        "series": {"count": 3, "lastObservedTime": "2000-01-01T00:00:00.000000Z"}});
    let row = cells("events.k8s.io", "Event", stored.clone());
    let core = cells("", "Event", crate::events::to_core(&stored));
    assert_eq!(row, core, "one row through either API");
    let text: Vec<String> = row
        .iter()
        .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned))
        .collect();
    assert!(
        text[0].ends_with('y'),
        "last seen from the series: {text:?}"
    );
    assert_eq!(
        &text[1..],
        [
            "Warning",
            "CopyFailed",
            "configmap/cm",
            "data",
            "wasm-operator/copier, pod-1",
            "no target",
            &text[7],
            "3",
            "cm.17"
        ]
    );
    let single = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
        "involvedObject": {"kind": "Node"}, "source": {"component": "kubelet", "host": "n1"}});
    let row = cells("", "Event", single);
    assert_eq!(row[0], "<unknown>");
    assert_eq!(row[3], "node");
    assert_eq!(row[5], "kubelet, n1");
    assert_eq!(row[8], 1, "a singleton counts once");
}
