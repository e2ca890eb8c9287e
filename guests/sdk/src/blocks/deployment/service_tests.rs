use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;

use super::*;
use crate::testing::{Call, FakeCluster, owner};

fn port(name: &str, node_port: Option<i32>) -> ServicePort {
    ServicePort {
        name: Some(name.into()),
        port: 5000,
        node_port,
        ..Default::default()
    }
}

fn service(spec: ServiceSpec) -> Service {
    Service {
        metadata: ObjectMeta {
            name: Some("api".into()),
            namespace: Some("ns".into()),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

fn builder() -> ServiceSpec {
    ServiceSpec {
        ports: Some(vec![port("http", None)]),
        selector: Some([("app".to_owned(), "api".to_owned())].into()),
        ..Default::default()
    }
}

fn assigned() -> ServiceSpec {
    ServiceSpec {
        cluster_ip: Some("10.0.0.1".into()),
        cluster_ips: Some(vec!["10.0.0.1".into()]),
        ip_families: Some(vec!["IPv4".into()]),
        ports: Some(vec![port("http", Some(30001))]),
        ..builder()
    }
}

#[test]
fn service_conflict_fails_only_on_an_explicit_differing_value() {
    let strs = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let cases: Vec<(&str, ServiceSpec, Option<&str>)> = vec![
        (
            "unset server-assigned fields never conflict",
            builder(),
            None,
        ),
        (
            "the assigned clusterIP set explicitly does not conflict",
            ServiceSpec {
                cluster_ip: Some("10.0.0.1".into()),
                ..builder()
            },
            None,
        ),
        (
            "another clusterIP conflicts",
            ServiceSpec {
                cluster_ip: Some("10.0.0.2".into()),
                ..builder()
            },
            Some("spec.clusterIP"),
        ),
        (
            "other clusterIPs conflict",
            ServiceSpec {
                cluster_ips: strs(&["10.0.0.2"]),
                ..builder()
            },
            Some("spec.clusterIPs"),
        ),
        (
            "other ipFamilies conflict",
            ServiceSpec {
                ip_families: strs(&["IPv6"]),
                ..builder()
            },
            Some("spec.ipFamilies"),
        ),
        (
            "the assigned nodePort set explicitly does not conflict",
            ServiceSpec {
                ports: Some(vec![port("http", Some(30001))]),
                ..builder()
            },
            None,
        ),
        (
            "another nodePort on the same port conflicts",
            ServiceSpec {
                ports: Some(vec![port("http", Some(30002))]),
                ..builder()
            },
            Some("spec.ports[http].nodePort"),
        ),
        (
            "a nodePort on a port the server has not seen does not conflict",
            ServiceSpec {
                ports: Some(vec![port("admin", Some(30002))]),
                ..builder()
            },
            None,
        ),
    ];
    for (case, desired, field) in cases {
        let got = service_conflict(&service(assigned()), &service(desired));
        assert_eq!(got.map(|c| c.field), field.map(str::to_owned), "{case}");
    }
}

#[test]
fn the_apply_body_never_carries_server_assigned_fields_the_builder_left_unset() {
    let cluster = FakeCluster::new();
    ensure_service(&cluster, &owner(), &service(builder())).expect("applies");
    let body = &cluster.applied()[0];
    let spec = body["spec"].as_object().expect("spec");
    for field in ["clusterIP", "clusterIPs", "ipFamilies"] {
        assert!(!spec.contains_key(field), "{field} in {body}");
    }
    assert!(body["spec"]["ports"][0].get("nodePort").is_none());
}

#[test]
fn a_converged_service_makes_no_write_and_keeps_the_assigned_fields() {
    let existing = serde_json::to_value(service(assigned())).expect("encodes");
    let mut existing = existing;
    existing["metadata"]["ownerReferences"] = json!([{
        "apiVersion": owner().api_version, "kind": owner().kind, "name": owner().name,
        "uid": owner().uid, "controller": true, "blockOwnerDeletion": true}]);
    // The server's port carries the nodePort it assigned; the builder's omits it.
    existing["spec"]["ports"][0]
        .as_object_mut()
        .expect("port")
        .remove("nodePort");
    let cluster = FakeCluster::new().with(existing);
    ensure_service(&cluster, &owner(), &service(builder())).expect("applies");
    let stored = cluster.server("Service", "api").expect("stored");
    assert_eq!(stored["spec"]["clusterIP"], "10.0.0.1");
    // Applied once, the converged Service is not sent again.
    cluster.clear_calls();
    ensure_service(&cluster, &owner(), &service(builder())).expect("applies");
    assert!(cluster.writes().is_empty(), "{:?}", cluster.writes());
}

#[test]
fn a_conflicting_explicit_value_fails_fast_without_applying() {
    let cluster = FakeCluster::new().with(serde_json::to_value(service(assigned())).expect("json"));
    let desired = service(ServiceSpec {
        cluster_ip: Some("10.0.0.9".into()),
        ..builder()
    });
    let err = ensure_service(&cluster, &owner(), &desired).expect_err("conflict");
    assert_eq!(
        err.to_string(),
        "Service ns/api: spec.clusterIP is immutable: the server assigned 10.0.0.1, \
         the builder set 10.0.0.9"
    );
    assert!(matches!(&cluster.calls()[..], [Call::Get(..)]));
}
