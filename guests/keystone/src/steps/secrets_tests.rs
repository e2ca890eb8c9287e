use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{condition, keystone, keystone_with, pass, secret};

fn store(kind: &str, name: &str, ready: bool) -> Value {
    let mut object = json!({"apiVersion": "external-secrets.io/v1", "kind": kind,
        "metadata": {"name": name}, "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}});
    if kind == "SecretStore" {
        object["metadata"]["namespace"] = json!("ns");
    }
    object
}

fn external_secret(name: &str, ready: bool) -> Value {
    json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
        "metadata": {"name": name, "namespace": "ns"}, "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}})
}

fn db() -> Value {
    secret("ks-db", &[("username", "ks"), ("password", "pw")])
}

fn admin() -> Value {
    secret("ks-admin", &[("password", "admin-pw")])
}

#[test]
fn the_secrets_gates_hold_in_order_with_their_reasons() {
    let cluster_store = || store("ClusterSecretStore", "openbao-cluster-store", true);
    let table: Vec<(Vec<Value>, &str, &str)> = vec![
        (
            vec![
                store("ClusterSecretStore", "openbao-cluster-store", false),
                db(),
                admin(),
            ],
            "SecretStoreNotReady",
            "ClusterSecretStore \"openbao-cluster-store\" is not ready; upstream secret backend unreachable",
        ),
        (
            vec![cluster_store(), admin()],
            "WaitingForDBCredentials",
            "Database credentials ExternalSecret ns/ks-db not found yet",
        ),
        (
            vec![
                cluster_store(),
                secret("ks-db", &[("password", "pw")]),
                external_secret("ks-db", true),
                admin(),
            ],
            "WaitingForDBCredentials",
            "Database credentials Secret exists but is missing expected keys",
        ),
        (
            vec![cluster_store(), db(), external_secret("ks-admin", false)],
            "WaitingForAdminCredentials",
            "Waiting for ESO to sync admin credentials from OpenBao",
        ),
    ];
    for (objects, reason, message) in table {
        let cluster = objects
            .into_iter()
            .fold(FakeCluster::new(), FakeCluster::with);
        let mut pass = pass(&cluster, &keystone());
        assert_eq!(
            run(&mut pass).expect("runs"),
            Some(SECRET_POLLING),
            "{reason}"
        );
        assert_eq!(
            condition(&pass, SECRETS_READY),
            ("False".into(), reason.into(), message.into())
        );
    }
    let cluster = FakeCluster::new()
        .with(cluster_store())
        .with(db())
        .with(admin());
    let mut pass = pass(&cluster, &keystone());
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        condition(&pass, SECRETS_READY),
        ("True".into(), "SecretsAvailable".into(), String::new())
    );
    assert!(cluster.writes().is_empty(), "the gates only read");
}

#[test]
fn a_namespaced_secret_store_is_looked_up_in_the_keystones_namespace() {
    let spec = json!({"secretStoreRef": {"kind": "SecretStore", "name": "tenant"}});
    let cluster = FakeCluster::new()
        .with(store("SecretStore", "tenant", true))
        .with(db())
        .with(admin());
    let mut pass = pass(&cluster, &keystone_with(spec));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(condition(&pass, SECRETS_READY).1, "SecretsAvailable");
}
