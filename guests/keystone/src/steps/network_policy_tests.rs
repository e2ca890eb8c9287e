use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::federation::Federation;
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

/// A policy with one source and one extra egress rule, over the managed database (3306)
/// and cache (11211) of the fixture.
fn isolated() -> Value {
    json!({"networkPolicy": {
        "ingress": [{"namespaceSelector": {"matchLabels": {"team": "a"}}}],
        "additionalEgress": [{"ports": [{"protocol": "TCP", "port": 636}]}]}})
}

fn applied_policy(federation: Option<Federation>) -> Value {
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, &keystone_with(isolated()));
    pass.federation = federation;
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        condition(&pass, NETWORK_POLICY_READY).1,
        "NetworkPolicyReady"
    );
    cluster.server("NetworkPolicy", "ks").expect("applied")["spec"].clone()
}

#[test]
fn network_policy_admits_the_proxy_port_and_idp_egress_with_federation() {
    let spec = applied_policy(Some(Federation {
        egress_ports: vec![443, 8443],
        ..Default::default()
    }));
    assert_eq!(
        spec["ingress"][0]["ports"],
        json!([{"protocol": "TCP", "port": 5050}])
    );
    assert_eq!(
        spec["egress"],
        json!([
            {"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
            {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]},
            {"ports": [{"protocol": "TCP", "port": 3306}]},
            {"ports": [{"protocol": "TCP", "port": 11211}]},
            {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 8443}]},
            {"ports": [{"protocol": "TCP", "port": 636}]},
        ])
    );
}

#[test]
fn network_policy_without_idp_ports_adds_no_egress_rule_but_still_admits_the_proxy_port() {
    let spec = applied_policy(Some(Federation::default()));
    assert_eq!(
        spec["ingress"][0]["ports"],
        json!([{"protocol": "TCP", "port": 5050}])
    );
    assert_eq!(spec["egress"].as_array().map(Vec::len), Some(5));
    assert_eq!(
        spec["egress"][4],
        json!({"ports": [{"protocol": "TCP", "port": 636}]})
    );
}

#[test]
fn network_policy_without_federation_admits_the_api_port_and_no_idp_egress() {
    let spec = applied_policy(None);
    assert_eq!(
        spec["ingress"][0]["ports"],
        json!([{"protocol": "TCP", "port": 5000}])
    );
    assert_eq!(
        spec["egress"],
        json!([
            {"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
            {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]},
            {"ports": [{"protocol": "TCP", "port": 3306}]},
            {"ports": [{"protocol": "TCP", "port": 11211}]},
            {"ports": [{"protocol": "TCP", "port": 636}]},
        ])
    );
}
