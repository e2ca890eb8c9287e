use serde_json::json;
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ObjectRef, Outcome, Request};

use super::*;
use crate::testing::{keystone, keystone_with, secret};

fn request() -> Request {
    Request {
        namespace: Some("ns".into()),
        name: "ks".into(),
    }
}

fn stored_status(cluster: &FakeCluster) -> serde_json::Value {
    cluster
        .object(&ObjectRef::of::<Keystone>(Some("ns"), "ks"))
        .expect("stored")["status"]
        .clone()
}

#[test]
fn a_keystone_that_is_gone_is_done_without_a_write() {
    let cluster = FakeCluster::new();
    assert_eq!(
        reconcile(&cluster, &request()).expect("runs"),
        Outcome::done()
    );
    assert!(cluster.writes().is_empty());
}

#[test]
fn every_pass_writes_the_status_with_ready_recomputed_and_the_generation() {
    let cluster = FakeCluster::new().with(keystone());
    // No database credentials yet: step 3 waits.
    let outcome = reconcile(&cluster, &request()).expect("runs");
    assert_eq!(outcome, Outcome::requeue(SECRET_POLLING));
    let status = stored_status(&cluster);
    assert_eq!(status["observedGeneration"], 2);
    let conditions = status["conditions"].as_array().expect("conditions");
    let find = |t: &str| conditions.iter().find(|c| c["type"] == t).cloned();
    assert_eq!(
        find("SecretsReady").expect("set")["reason"],
        "WaitingForDBCredentials"
    );
    assert_eq!(
        find("DatabaseTLSReady").expect("set")["reason"],
        "NotRequired"
    );
    let ready = find("Ready").expect("Ready");
    assert_eq!(
        (ready["status"].clone(), ready["reason"].clone()),
        (json!("False"), json!("NotAllReady"))
    );
    assert_eq!(ready["observedGeneration"], 2);
}

#[test]
fn a_pass_that_changes_nothing_writes_no_status() {
    let cluster = FakeCluster::new().with(keystone());
    reconcile(&cluster, &request()).expect("runs");
    cluster.sync_cache();
    cluster.clear_calls();
    let outcome = reconcile(&cluster, &request()).expect("runs");
    assert_eq!(outcome, Outcome::requeue(SECRET_POLLING));
    assert!(
        cluster
            .calls()
            .iter()
            .any(|c| c.to_string().contains("Secret ns/ks-db")),
        "the second pass ran its steps: {:?}",
        cluster.calls()
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn a_keystone_on_a_target_cluster_is_target_cluster_unavailable_and_waits() {
    let cluster = FakeCluster::new()
        .with(keystone_with(
            json!({"targetClusterRef": {"name": "remote"}}),
        ))
        .with(secret("ks-db", &[("password", "pw")]));
    let outcome = reconcile(&cluster, &request()).expect("runs");
    assert_eq!(outcome, Outcome::requeue(SECRET_POLLING));
    let status = stored_status(&cluster);
    let secrets = status["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "SecretsReady"))
        .cloned()
        .expect("SecretsReady");
    assert_eq!(secrets["reason"], "TargetClusterUnavailable");
    assert!(
        secrets["message"]
            .as_str()
            .unwrap_or_default()
            .contains("\"remote\"")
    );
    assert!(
        cluster.server("Secret", "ks-db-connection").is_none(),
        "no child was written"
    );
}

#[test]
fn a_keystone_that_does_not_decode_is_a_permanent_error_naming_it() {
    let mut object = keystone();
    object["spec"]["deployment"] = json!({"replicas": "three"});
    let cluster = FakeCluster::new().with(object);
    let error = reconcile(&cluster, &request()).expect_err("fails");
    assert!(
        matches!(&error, ReconcileError::Permanent(m) if m.starts_with("Keystone ns/ks does not decode: ")),
        "{error}"
    );
}

#[test]
fn database_and_policy_validation_follow_db_connection_secret_in_the_step_table() {
    let names: Vec<&str> = steps().iter().map(|s| s.name()).collect();
    let at = |name: &str| names.iter().position(|n| *n == name);
    let connection = at("db-connection-secret").expect("in the table");
    assert_eq!(at("database"), Some(connection + 1), "{names:?}");
    assert_eq!(at("policy-validation"), Some(connection + 2), "{names:?}");
}

#[test]
fn a_pass_with_credentials_reaches_the_mariadb_gate_and_waits_30s() {
    let cluster = FakeCluster::new()
        .with(keystone())
        .with(secret("ks-db", &[("password", "pw")]));
    let outcome = reconcile(&cluster, &request()).expect("runs");
    assert_eq!(outcome, Outcome::requeue(crate::pass::DATABASE_POLLING));
    let status = stored_status(&cluster);
    let database = status["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "DatabaseReady"))
        .cloned()
        .expect("DatabaseReady");
    assert_eq!(database["reason"], "ClusterNotReady");
    assert_eq!(
        database["message"],
        "MariaDB cluster \"maria\" is not ready"
    );
    assert_eq!(database["observedGeneration"], 2);
}
