use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{condition, keystone_with, owned, pass};

fn stale_policy() -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "ks", "namespace": "ns"}, "spec": {"podSelector": {}}})
}

#[test]
fn without_a_network_policy_block_the_policy_is_deleted_and_not_required() {
    let cluster = FakeCluster::new().with(owned(stale_policy()));
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(cluster.server("NetworkPolicy", "ks").is_none());
    assert_eq!(
        condition(&pass, NETWORK_POLICY_READY),
        (
            "True".into(),
            "NetworkPolicyNotRequired".into(),
            "Network isolation is not configured".into()
        )
    );
}

#[test]
fn without_a_network_policy_block_a_policy_of_its_name_the_keystone_does_not_control_is_left_alone()
{
    let cluster = FakeCluster::new().with(stale_policy());
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(cluster.server("NetworkPolicy", "ks").is_some());
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    assert_eq!(
        condition(&pass, NETWORK_POLICY_READY).1,
        "NetworkPolicyNotRequired"
    );
}

#[test]
fn a_network_policy_without_sources_is_an_error_and_writes_nothing() {
    let cluster = FakeCluster::new();
    let mut pass = pass(
        &cluster,
        &keystone_with(json!({"networkPolicy": {"ingress": []}})),
    );
    let error = run(&mut pass).expect_err("fails");
    assert!(
        error.to_string().contains("spec.networkPolicy.ingress"),
        "{error}"
    );
    assert!(cluster.writes().is_empty());
}

#[test]
fn the_policy_admits_its_sources_and_the_gateway_and_derives_its_egress() {
    let spec = json!({
        "networkPolicy": {
            "ingress": [
                {"namespaceSelector": {"matchLabels": {"team": "a"}}},
                {"namespaceSelector": {"matchLabels": {"team": "b"}},
                 "podSelector": {"matchLabels": {"app": "horizon"}}},
            ],
            "additionalEgress": [{"ports": [{"protocol": "TCP", "port": 636}]}],
        },
        "gateway": {"parentRef": {"name": "gw", "namespace": "edge"}, "hostname": "id.example.com"},
        "cache": {"clusterRef": null, "servers": ["mc-0:11211", "mc-1:11212", "mc-2:11211"]},
        "database": {"clusterRef": null, "host": "db.example", "port": 3307},
    });
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, &keystone_with(spec));
    assert_eq!(run(&mut pass).expect("runs"), None);
    let policy = cluster.server("NetworkPolicy", "ks").expect("applied");
    let spec = &policy["spec"];
    assert_eq!(
        spec["podSelector"],
        json!({"matchLabels": {"app.kubernetes.io/instance": "ks", "app.kubernetes.io/name": "keystone"}})
    );
    assert_eq!(spec["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(
        spec["ingress"],
        json!([{"ports": [{"protocol": "TCP", "port": 5000}], "from": [
            {"namespaceSelector": {"matchLabels": {"team": "a"}}},
            {"namespaceSelector": {"matchLabels": {"team": "b"}}, "podSelector": {"matchLabels": {"app": "horizon"}}},
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "edge"}}},
        ]}])
    );
    assert_eq!(
        spec["egress"],
        json!([
            {"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
            {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]},
            {"ports": [{"protocol": "TCP", "port": 3307}]},
            {"ports": [{"protocol": "TCP", "port": 11211}, {"protocol": "TCP", "port": 11212}]},
            {"ports": [{"protocol": "TCP", "port": 636}]},
        ])
    );
    assert_eq!(policy["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    assert_eq!(
        condition(&pass, NETWORK_POLICY_READY),
        (
            "True".into(),
            "NetworkPolicyReady".into(),
            "NetworkPolicy is configured".into()
        )
    );
}
