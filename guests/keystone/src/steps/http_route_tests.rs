use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use super::*;
use crate::testing::{condition, keystone_with, owned, pass};

const KIND: &str = "HTTPRoute";

fn stale_route() -> Value {
    json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": KIND,
        "metadata": {"name": "ks", "namespace": "ns"},
        "spec": {"parentRefs": [{"name": "old-gw"}]}})
}

fn gateway(extra: Value) -> Value {
    let mut gateway = json!({"parentRef": {"name": "gw"}, "hostname": "id.example.com"});
    if let (Some(g), Value::Object(extra)) = (gateway.as_object_mut(), extra) {
        g.extend(extra);
    }
    json!({ "gateway": gateway })
}

/// Has the Gateway controller report `Accepted` as `status` on the route's one parent.
fn report_accepted(cluster: &FakeCluster, status: &str) {
    let status = status.to_owned();
    cluster.change(KIND, "ks", move |route| {
        route["status"] = json!({"parents": [{"parentRef": {"name": "gw"},
            "controllerName": "example.com/gateway-controller",
            "conditions": [{"type": "Accepted", "status": status, "reason": "Accepted",
                "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]});
    });
}

#[test]
fn a_failed_kind_probe_is_capability_probe_failed_and_an_error() {
    let cluster = FakeCluster::new().failing(
        Op::Served,
        "httproutes",
        ApiError::Unavailable("discovery is down".into()),
    );
    let mut pass = pass(&cluster, &keystone_with(gateway(json!({}))));
    let error = run(&mut pass).expect_err("fails");
    assert!(
        error
            .to_string()
            .starts_with("probing the target cluster for the HTTPRoute kind: "),
        "{error}"
    );
    let (status, reason, message) = condition(&pass, HTTP_ROUTE_READY);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "CapabilityProbeFailed")
    );
    assert!(
        message.starts_with("Probing the target cluster for the HTTPRoute kind failed: ")
            && message.contains("discovery is down"),
        "{message}"
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn without_the_gateway_api_a_keystone_without_a_gateway_needs_no_route() {
    let cluster = FakeCluster::new().not_serving("httproutes");
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        condition(&pass, HTTP_ROUTE_READY),
        (
            "True".into(),
            "HTTPRouteNotRequired".into(),
            "External API exposure via Gateway API is not configured".into()
        )
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn without_the_gateway_api_a_keystone_with_a_gateway_says_it_is_not_installed_and_does_not_requeue()
{
    let cluster = FakeCluster::new().not_serving("httproutes");
    let mut pass = pass(&cluster, &keystone_with(gateway(json!({}))));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        condition(&pass, HTTP_ROUTE_READY),
        (
            "False".into(),
            "GatewayAPINotInstalled".into(),
            "spec.gateway is set but the gateway.networking.k8s.io/v1 HTTPRoute CRD is not \
             installed in this cluster; install Gateway API and restart the operator to enable \
             external API exposure"
                .into()
        )
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn without_a_gateway_the_route_is_deleted_and_not_required() {
    let cluster = FakeCluster::new().with(owned(stale_route()));
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(cluster.server(KIND, "ks").is_none());
    assert_eq!(cluster.write_log(), ["delete HTTPRoute ns/ks"]);
    assert_eq!(
        condition(&pass, HTTP_ROUTE_READY),
        (
            "True".into(),
            "HTTPRouteNotRequired".into(),
            "External API exposure via Gateway API is not configured".into()
        )
    );
}

#[test]
fn without_a_gateway_a_route_of_its_name_the_keystone_does_not_control_is_left_alone() {
    let cluster = FakeCluster::new().with(stale_route());
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(condition(&pass, HTTP_ROUTE_READY).1, "HTTPRouteNotRequired");
    assert!(cluster.server(KIND, "ks").is_some());
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn the_route_attaches_to_the_gateway_and_sends_the_path_prefix_to_the_api_service() {
    // (case, gateway fields, parentRef, path)
    let cases = [
        (
            "parent by name only, no path: /",
            json!({}),
            json!({"name": "gw"}),
            "/",
        ),
        (
            "namespace and listener, path without its slash",
            json!({"parentRef": {"name": "gw", "namespace": "edge", "sectionName": "https"},
                "path": "identity"}),
            json!({"name": "gw", "namespace": "edge", "sectionName": "https"}),
            "/identity",
        ),
        (
            "path as written",
            json!({"path": "/keystone"}),
            json!({"name": "gw"}),
            "/keystone",
        ),
    ];
    for (case, fields, parent, path) in cases {
        let cluster = FakeCluster::new();
        let mut pass = pass(&cluster, &keystone_with(gateway(fields)));
        run(&mut pass).expect("runs");
        let route = cluster.server(KIND, "ks").expect("applied");
        assert_eq!(route["spec"]["parentRefs"], json!([parent]), "{case}");
        assert_eq!(
            route["spec"]["hostnames"],
            json!(["id.example.com"]),
            "{case}"
        );
        assert_eq!(
            route["spec"]["rules"],
            json!([{"matches": [{"path": {"type": "PathPrefix", "value": path}}],
                "backendRefs": [{"kind": "Service", "name": "ks", "port": 5000}]}]),
            "{case}"
        );
        assert_eq!(
            route["metadata"]["labels"],
            json!({"app.kubernetes.io/instance": "ks", "app.kubernetes.io/managed-by": "keystone-operator",
                "app.kubernetes.io/name": "keystone"}),
            "{case}"
        );
        assert_eq!(route["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    }
}

#[test]
fn the_gateway_annotations_are_copied_onto_the_route() {
    let cluster = FakeCluster::new();
    let annotations = json!({"annotations": {"example.com/tls": "strict", "team": "iam"}});
    let mut pass = pass(&cluster, &keystone_with(gateway(annotations)));
    run(&mut pass).expect("runs");
    let route = cluster.server(KIND, "ks").expect("applied");
    assert_eq!(
        route["metadata"]["annotations"]["example.com/tls"],
        "strict"
    );
    assert_eq!(route["metadata"]["annotations"]["team"], "iam");
}

#[test]
fn a_route_waits_for_a_gateway_to_accept_it_then_is_accepted_without_a_write() {
    let cluster = FakeCluster::new();
    let object = keystone_with(gateway(json!({})));
    let mut first = pass(&cluster, &object);
    assert_eq!(
        run(&mut first).expect("runs"),
        Some(Duration::from_secs(10))
    );
    assert_eq!(
        condition(&first, HTTP_ROUTE_READY),
        (
            "False".into(),
            "HTTPRouteNotAccepted".into(),
            "HTTPRoute not yet accepted by Gateway".into()
        )
    );
    report_accepted(&cluster, "False");
    let mut refused = pass(&cluster, &object);
    assert_eq!(
        run(&mut refused).expect("runs"),
        Some(Duration::from_secs(10))
    );
    assert_eq!(
        condition(&refused, HTTP_ROUTE_READY).1,
        "HTTPRouteNotAccepted"
    );
    report_accepted(&cluster, "True");
    cluster.clear_calls();
    let mut accepted = pass(&cluster, &object);
    assert_eq!(run(&mut accepted).expect("runs"), None);
    assert_eq!(
        condition(&accepted, HTTP_ROUTE_READY),
        (
            "True".into(),
            "HTTPRouteAccepted".into(),
            "HTTPRoute accepted by Gateway".into()
        )
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn a_failed_apply_is_an_error_naming_the_route() {
    let cluster = FakeCluster::new().failing(
        Op::Apply,
        "ks",
        ApiError::Unavailable("apiserver is down".into()),
    );
    let mut pass = pass(&cluster, &keystone_with(gateway(json!({}))));
    let error = run(&mut pass).expect_err("fails");
    assert!(
        error.to_string().contains("applying HTTPRoute ns/ks"),
        "{error}"
    );
    assert!(pass.conditions_of(HTTP_ROUTE_READY).is_none());
}
