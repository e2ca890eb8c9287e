use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{condition, keystone, pass};

fn deployment(volumes: Value, updated: i32) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "ks", "namespace": "ns", "generation": 1},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "ks"}},
            "template": {"spec": {"containers": [{"name": "keystone"}], "volumes": volumes}}},
        "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": updated,
            "readyReplicas": 3}})
}

fn backend(name: &str, keystone: &str) -> Value {
    json!({"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "KeystoneIdentityBackend",
        "metadata": {"name": name, "namespace": "ns"}, "spec": {"keystoneRef": {"name": keystone}}})
}

#[test]
fn with_no_backend_the_step_waits_for_a_rolled_out_deployment_without_projections() {
    let domains = json!([{"name": "domains", "secret": {"secretName": "ks-domains-1"}}]);
    let table = [
        (
            None,
            "Waiting for the identity-backend projection to roll out: the Keystone Deployment does not exist yet",
        ),
        (
            Some(deployment(domains, 3)),
            "Waiting for the identity-backend projection to roll out: the domains projection has not reached the Deployment yet",
        ),
        (
            Some(deployment(json!([]), 2)),
            "Waiting for the identity-backend projection to roll out: the Keystone Deployment is still rolling out",
        ),
    ];
    for (existing, message) in table {
        let cluster = match existing {
            Some(d) => FakeCluster::new().with(d),
            None => FakeCluster::new(),
        };
        let mut pass = pass(&cluster, &keystone());
        assert_eq!(run(&mut pass).expect("runs"), None, "never requeues");
        assert_eq!(
            condition(&pass, IDENTITY_BACKENDS_READY),
            ("False".into(), "WaitingForRollout".into(), message.into())
        );
    }
    let cluster = FakeCluster::new().with(deployment(json!([]), 3));
    let mut pass = pass(&cluster, &keystone());
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        condition(&pass, IDENTITY_BACKENDS_READY),
        (
            "True".into(),
            "IdentityBackendsNotRequired".into(),
            "No KeystoneIdentityBackend references this Keystone".into()
        )
    );
}

#[test]
fn backends_that_name_this_keystone_are_waited_for_by_name() {
    let cluster = FakeCluster::new()
        .with(deployment(json!([]), 3))
        .with(backend("ldap-b", "ks"))
        .with(backend("ldap-a", "ks"))
        .with(backend("other", "another-keystone"));
    let mut pass = pass(&cluster, &keystone());
    assert_eq!(run(&mut pass).expect("runs"), None);
    let (status, reason, message) = condition(&pass, IDENTITY_BACKENDS_READY);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "WaitingForBackends")
    );
    assert!(
        message.starts_with("Waiting for identity backends: ldap-a (")
            && message.contains("; ldap-b ("),
        "{message}"
    );
    assert!(!message.contains("other"));
    assert!(pass.domains_secret_name.is_empty());
}

#[test]
fn a_cluster_without_the_backend_kind_has_no_backends() {
    let cluster = FakeCluster::new()
        .not_serving("keystoneidentitybackends")
        .with(deployment(json!([]), 3));
    let mut pass = pass(&cluster, &keystone());
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        condition(&pass, IDENTITY_BACKENDS_READY).1,
        "IdentityBackendsNotRequired"
    );
}
