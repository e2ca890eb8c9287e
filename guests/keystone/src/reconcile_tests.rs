use serde_json::json;
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ObjectRef, Outcome, Request};

use super::*;
use crate::finalizers::{FINALIZER, OPENBAO_FINALIZER};
use crate::testing::{HealthyApi, keystone_with, secret};

/// A pass now, the Keystone API answering the health check.
fn healthy_pass(cluster: &FakeCluster) -> Result<Outcome, ReconcileError> {
    reconcile_with(
        cluster,
        &request(),
        wasm_operator_sdk::blocks::conditions::now(),
        &HealthyApi,
    )
}

/// `crate::testing::keystone()` already carrying both finalizers, so a pass goes on to its
/// steps (the finalizers' own tests start from none).
fn keystone() -> serde_json::Value {
    let mut object = crate::testing::keystone();
    object["metadata"]["finalizers"] = json!([FINALIZER, OPENBAO_FINALIZER]);
    object
}

fn request() -> Request {
    Request {
        namespace: Some("ns".into()),
        name: "ks".into(),
    }
}

/// A cluster whose default ClusterSecretStore is ready.
fn ready_store() -> FakeCluster {
    FakeCluster::new().with(json!({"apiVersion": "external-secrets.io/v1",
        "kind": "ClusterSecretStore", "metadata": {"name": "openbao-cluster-store"},
        "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}))
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
    let cluster = ready_store()
        .with(keystone())
        .with(secret("ks-db", &[("username", "ks")]))
        .with(secret("ks-admin", &[("password", "pw")]));
    // The database credentials lack the password: step 1 waits.
    let outcome = reconcile(&cluster, &request()).expect("runs");
    assert_eq!(outcome, Outcome::requeue(SECRET_POLLING));
    let status = stored_status(&cluster);
    assert_eq!(status["observedGeneration"], 2);
    let conditions = status["conditions"].as_array().expect("conditions");
    let find = |t: &str| conditions.iter().find(|c| c["type"] == t).cloned();
    assert_eq!(
        find("SecretsReady").expect("set")["message"],
        "Database credentials ExternalSecret ns/ks-db not found yet"
    );
    assert!(
        find("DatabaseTLSReady").is_none(),
        "the pass ended at step 1"
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
    let cluster = ready_store().with(keystone());
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

/// What every pass needs to get past step 1.
fn ready_credentials() -> FakeCluster {
    with_credentials(ready_store().with(keystone()))
}

/// `cluster` with the database and admin credentials.
fn with_credentials(cluster: FakeCluster) -> FakeCluster {
    cluster
        .with(secret("ks-db", &[("username", "ks"), ("password", "pw")]))
        .with(secret("ks-admin", &[("password", "admin-pw")]))
}

fn reasons(cluster: &FakeCluster) -> std::collections::BTreeMap<String, String> {
    stored_status(cluster)["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["type"].as_str().unwrap_or_default().to_owned(),
                c["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_key_group_runs_every_member_and_keeps_each_members_condition() {
    let cluster = ready_credentials();
    let outcome = reconcile(&cluster, &request()).expect("runs");
    // Both key members generated keys (15 s each); the network policy member ran too.
    assert_eq!(outcome, Outcome::requeue(SECRET_POLLING));
    let reasons = reasons(&cluster);
    assert_eq!(reasons["FernetKeysReady"], "GeneratingKeys");
    assert_eq!(reasons["CredentialKeysReady"], "GeneratingKeys");
    assert_eq!(reasons["NetworkPolicyReady"], "NetworkPolicyNotRequired");
    assert!(
        !reasons.contains_key("DeploymentReady"),
        "the group ended the pass"
    );
    assert_eq!(cluster.secret_data("ks-fernet-keys").len(), 3);
    assert_eq!(cluster.secret_data("ks-credential-keys").len(), 3);
}

#[test]
fn a_failing_group_member_ends_the_pass_with_its_error_after_its_peers_ran() {
    let cluster = ready_credentials().failing(
        wasm_operator_sdk::testing::Op::Create,
        "ks-credential-keys",
        wasm_operator_sdk::ApiError::Forbidden("quota exceeded".into()),
    );
    let error = reconcile(&cluster, &request()).expect_err("fails");
    assert!(
        error
            .to_string()
            .contains("creating credential keys secret ns/ks-credential-keys"),
        "{error}"
    );
    let reasons = reasons(&cluster);
    assert_eq!(
        reasons["FernetKeysReady"], "GeneratingKeys",
        "the peer ran and was kept"
    );
    assert_eq!(reasons["NetworkPolicyReady"], "NetworkPolicyNotRequired");
}

/// Runs passes over `cluster`, doing what mariadb-operator, the job controller and the
/// deployment controller do between them, until one is done (at most 16); the outcomes.
fn converge(cluster: &FakeCluster) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for _ in 0..16 {
        let outcome = healthy_pass(cluster).expect("runs");
        outcomes.push(outcome);
        for kind in ["Database", "User", "Grant"] {
            if cluster.server(kind, "ks").is_some() {
                cluster.change(kind, "ks", |o| {
                    o["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
                });
            }
        }
        for job in crate::testing::jobs_created(cluster) {
            crate::testing::finish_job(cluster, &job, "Complete");
        }
        if cluster.server("Deployment", "ks").is_some() {
            cluster.change("Deployment", "ks", |d| {
                d["metadata"]["generation"] = json!(1);
                d["status"] = json!({"observedGeneration": 1, "replicas": 3,
                    "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                    "conditions": [{"type": "Available", "status": "True"}]});
            });
        }
        cluster.sync_cache();
        if outcome == Outcome::done() {
            break;
        }
    }
    outcomes
}

/// A Keystone created without finalizers, with what it needs to converge.
fn new_keystone() -> FakeCluster {
    with_credentials(ready_store().with(crate::testing::keystone()))
        .with(crate::testing::mariadb_object("MariaDB", "maria", "True"))
}

#[test]
fn a_keystone_converges_to_ready_with_all_fifteen_conditions_and_the_next_pass_writes_nothing() {
    let cluster = new_keystone();
    let outcomes = converge(&cluster);
    assert_eq!(outcomes.last(), Some(&Outcome::done()), "{outcomes:?}");
    assert_eq!(
        outcomes[..2],
        [Outcome::requeue(crate::pass::NEXT_PASS); 2],
        "the first two passes added the finalizers"
    );
    let stored = cluster
        .object(&ObjectRef::of::<Keystone>(Some("ns"), "ks"))
        .expect("stored");
    assert_eq!(
        stored["metadata"]["finalizers"],
        json!([FINALIZER, OPENBAO_FINALIZER])
    );
    let reasons = reasons(&cluster);
    for (condition, reason) in [
        ("SecretsReady", "SecretsAvailable"),
        ("DatabaseTLSReady", "NotRequired"),
        ("IdentityBackendsReady", "IdentityBackendsNotRequired"),
        ("FernetKeysReady", "FernetKeysAvailable"),
        ("CredentialKeysReady", "CredentialKeysAvailable"),
        ("NetworkPolicyReady", "NetworkPolicyNotRequired"),
        ("DatabaseReady", "DatabaseSynced"),
        ("PolicyValidReady", "PolicyValidationNotRequired"),
        ("DeploymentReady", "DeploymentReady"),
        ("HTTPRouteReady", "HTTPRouteNotRequired"),
        ("KeystoneAPIReady", "APIHealthy"),
        ("HPAReady", "HPANotRequired"),
        ("BootstrapReady", "BootstrapComplete"),
        ("TrustFlushReady", "TrustFlushNotRequired"),
        ("PasswordRotationReady", "RotationDisabled"),
        ("ExtraConfigHealthy", "NoOwnedKeysOverridden"),
        ("Ready", "AllReady"),
    ] {
        assert_eq!(
            reasons.get(condition).map(String::as_str),
            Some(reason),
            "{condition}"
        );
    }
    assert_eq!(
        stored_status(&cluster)["endpoint"],
        "http://ks.ns.svc.cluster.local:5000/v3"
    );
    assert_eq!(
        reasons.len(),
        17,
        "fifteen, Ready and ExtraConfigHealthy: {reasons:?}"
    );
    cluster.clear_calls();
    assert_eq!(healthy_pass(&cluster).expect("runs"), Outcome::done());
    assert!(!cluster.calls().is_empty(), "the pass ran");
    assert!(
        cluster.writes().is_empty(),
        "a converged pass writes: {:?}",
        cluster.write_log()
    );
}

#[test]
fn a_converged_keystone_that_is_deleted_deletes_its_database_and_then_its_backups_once_eso_adopted_them()
 {
    let cluster = new_keystone();
    let outcomes = converge(&cluster);
    assert_eq!(outcomes.last(), Some(&Outcome::done()), "{outcomes:?}");
    for name in ["ks-fernet-keys-backup", "ks-credential-keys-backup"] {
        assert!(
            cluster.server("PushSecret", name).is_some(),
            "{name} applied"
        );
    }
    cluster.change("Keystone", "ks", |k| {
        k["metadata"]["deletionTimestamp"] = json!("2026-03-01T12:00:00Z");
    });
    let at = |seconds| {
        let deleted: k8s_openapi::jiff::Timestamp =
            "2026-03-01T12:00:00Z".parse().expect("a timestamp");
        Time(
            deleted
                .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(seconds))
                .expect("in range"),
        )
    };
    let first = reconcile_at(&cluster, &request(), at(20)).expect("runs");
    assert_eq!(first, Outcome::requeue(SECRET_POLLING), "waits for ESO");
    for kind in ["Database", "User", "Grant"] {
        assert!(cluster.server(kind, "ks").is_none(), "{kind} deleted");
    }
    assert_eq!(reasons(&cluster)["SecretsReady"], "WaitingForESOAdoption");
    // External Secrets adopts both backups.
    for name in ["ks-fernet-keys-backup", "ks-credential-keys-backup"] {
        cluster.change("PushSecret", name, |ps| {
            ps["metadata"]["finalizers"] = json!([crate::deletion::openbao::ESO_FINALIZER]);
        });
    }
    cluster.sync_cache();
    let second = reconcile_at(&cluster, &request(), at(35)).expect("runs");
    assert_eq!(second, Outcome::done());
    assert!(
        cluster.names("PushSecret").is_empty(),
        "{:?}",
        cluster.names("PushSecret")
    );
    let stored = cluster
        .object(&ObjectRef::of::<Keystone>(Some("ns"), "ks"))
        .expect("stored");
    assert!(stored["metadata"].get("finalizers").is_none(), "{stored}");
    assert_eq!(
        cluster
            .event_reasons()
            .iter()
            .filter(|r| r.contains("Finaliz"))
            .collect::<Vec<_>>(),
        [
            "FinalizingDatabase",
            "DatabaseFinalized",
            "FinalizingOpenBaoSecrets",
            "OpenBaoSecretsFinalized"
        ]
    );
}

#[test]
fn the_step_table_runs_the_twelve_steps_in_the_facts_order() {
    let names: Vec<&str> = steps().iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        [
            "secrets",
            "database-tls",
            "db-connection-secret",
            "identity-backends",
            "config",
            "keys-and-network-policy",
            "database",
            "policy-validation",
            "deployment",
            "prune",
            "exposure-and-jobs",
            "password-rotation",
        ]
    );
}

#[test]
fn a_pass_with_keys_reaches_the_mariadb_gate_and_waits_30s() {
    let cluster = ready_credentials();
    // The first pass generates the keys and requeues from the group.
    reconcile(&cluster, &request()).expect("runs");
    cluster.sync_cache();
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

#[test]
fn a_keystone_on_an_opened_target_reads_its_children_there_and_writes_its_status_here() {
    let target = std::rc::Rc::new(
        ready_store()
            .with(secret("ks-db", &[("username", "ks")]))
            .with(secret("ks-admin", &[("password", "pw")])),
    );
    let mut object = keystone_with(json!({"targetClusterRef": {"name": "remote"}}));
    object["metadata"]["finalizers"] = json!([
        FINALIZER,
        OPENBAO_FINALIZER,
        crate::finalizers::REMOTE_CHILDREN_FINALIZER
    ]);
    let cluster = FakeCluster::new().with(object).with_target(
        "remote",
        crate::describe::OWNER_LABEL_PREFIX,
        target.clone(),
    );
    let outcome = reconcile(&cluster, &request()).expect("runs");
    assert_eq!(outcome, Outcome::requeue(SECRET_POLLING));
    let status = stored_status(&cluster);
    let secrets = status["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "SecretsReady"))
        .cloned()
        .expect("SecretsReady");
    assert_eq!(
        secrets["message"], "Database credentials ExternalSecret ns/ks-db not found yet",
        "the credentials were read on the target"
    );
    assert_eq!(cluster.write_log(), ["update-status Keystone ns/ks"]);
    assert!(
        target
            .calls()
            .iter()
            .any(|c| c.to_string().contains("Secret ns/ks-db")),
        "{:?}",
        target.calls()
    );
    assert!(target.writes().is_empty(), "{:?}", target.write_log());
}
