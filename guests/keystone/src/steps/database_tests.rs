use serde_json::{Value, json};
use wasm_operator_sdk::blocks::job::POD_SPEC_HASH_ANNOTATION;
use wasm_operator_sdk::testing::{FakeCluster, Op, Refusal};
use wasm_operator_sdk::{ApiError, blocks};

use super::*;
use crate::pass::NEXT_PASS;
use crate::testing::{
    condition, events, finish_job, jobs_created, keystone_with, mariadb_object, pass_with_config,
};

/// A pass over `spec` as the Config step leaves it.
fn db_pass<'c>(cluster: &'c FakeCluster, spec: Value) -> Pass<'c> {
    pass_with_config(cluster, &keystone_with(spec))
}

fn brownfield() -> Value {
    json!({"database": {"clusterRef": null, "host": "db.example"}})
}

/// A managed cluster whose MariaDB, Database, User and Grant are Ready.
fn provisioned() -> FakeCluster {
    FakeCluster::new()
        .with(mariadb_object("MariaDB", "maria", "True"))
        .with(mariadb_object("Database", "ks", "True"))
        .with(mariadb_object("User", "ks", "True"))
        .with(mariadb_object("Grant", "ks", "True"))
}

fn ready(pass: &Pass<'_>) -> (String, String, String) {
    condition(pass, DATABASE_READY)
}

#[test]
fn a_managed_database_waits_for_its_mariadb_cluster_to_be_ready() {
    let table = [
        ("absent", FakeCluster::new()),
        (
            "Ready=False",
            FakeCluster::new().with(mariadb_object("MariaDB", "maria", "False")),
        ),
    ];
    for (case, cluster) in table {
        let mut pass = db_pass(&cluster, json!({}));
        assert_eq!(
            run(&mut pass).expect(case),
            Some(DATABASE_POLLING),
            "{case}"
        );
        assert_eq!(
            ready(&pass),
            (
                "False".into(),
                "ClusterNotReady".into(),
                "MariaDB cluster \"maria\" is not ready".into()
            ),
            "{case}"
        );
        assert!(
            cluster.writes().is_empty(),
            "{case}: {:?}",
            cluster.write_log()
        );
    }
    // The valid row: a Ready MariaDB lets the Database be applied.
    let cluster = FakeCluster::new().with(mariadb_object("MariaDB", "maria", "True"));
    let mut pass = db_pass(&cluster, json!({}));
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(ready(&pass).1, "WaitingForDatabase");
}

#[test]
fn a_failed_mariadb_read_stops_the_pass_naming_the_cluster() {
    let cluster = FakeCluster::new().failing(
        Op::Get,
        "maria",
        ApiError::Unavailable("etcd is down".into()),
    );
    let mut pass = db_pass(&cluster, json!({}));
    let error = run(&mut pass).expect_err("fails");
    assert!(matches!(error, Error::Cluster { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("checking MariaDB cluster readiness: getting MariaDB ns/maria: "),
        "{error}"
    );
}

#[test]
fn the_database_then_the_user_and_grant_are_applied_and_waited_for() {
    let cluster = FakeCluster::new().with(mariadb_object("MariaDB", "maria", "True"));
    let mut pass = db_pass(&cluster, json!({}));
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(
        ready(&pass),
        (
            "False".into(),
            "WaitingForDatabase".into(),
            "MariaDB Database CR is not ready".into()
        )
    );
    let database = cluster.server("Database", "ks").expect("applied");
    assert_eq!(
        database["spec"],
        json!({"mariaDbRef": {"name": "maria"}, "name": "keystone", "characterSet": "utf8",
            "collate": "utf8_general_ci"})
    );
    assert_eq!(database["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    assert_eq!(
        cluster.server("User", "ks"),
        None,
        "not before the Database is Ready"
    );

    cluster.change("Database", "ks", |d| {
        d["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
    });
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(
        ready(&pass),
        (
            "False".into(),
            "WaitingForDatabase".into(),
            "MariaDB User or Grant CR is not ready".into()
        )
    );
    let user = cluster.server("User", "ks").expect("applied");
    assert_eq!(
        user["spec"],
        json!({"mariaDbRef": {"name": "maria"},
            "passwordSecretKeyRef": {"name": "ks-db", "key": "password"}})
    );
    let grant = cluster.server("Grant", "ks").expect("applied");
    assert_eq!(
        grant["spec"],
        json!({"mariaDbRef": {"name": "maria"}, "privileges": ["ALL PRIVILEGES"],
            "database": "keystone", "table": "*", "username": "ks"})
    );
    assert_eq!(jobs_created(&cluster), Vec::<String>::new());

    for kind in ["User", "Grant"] {
        cluster.change(kind, "ks", |o| {
            o["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
        });
    }
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(ready(&pass).1, "DBSyncInProgress");
}

#[test]
fn a_dynamic_database_provisions_no_user_or_grant() {
    let cluster = FakeCluster::new()
        .with(mariadb_object("MariaDB", "maria", "True"))
        .with(mariadb_object("Database", "ks", "True"))
        .refusing(Refusal::op_on(Op::Apply, "User"))
        .refusing(Refusal::op_on(Op::Apply, "Grant"));
    let mut pass = db_pass(
        &cluster,
        json!({"database": {"credentialsMode": "Dynamic"}}),
    );
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(ready(&pass).1, "DBSyncInProgress");
    assert_eq!(jobs_created(&cluster), ["ks-db-sync"]);
}

#[test]
fn a_refused_database_apply_stops_the_pass_naming_it() {
    let cluster = provisioned().failing(
        Op::Apply,
        "ks",
        ApiError::Invalid("spec.characterSet: Unsupported value".into()),
    );
    let mut pass = db_pass(&cluster, json!({}));
    let error = run(&mut pass).expect_err("fails");
    assert!(
        matches!(
            error,
            Error::Provision {
                what: "ensuring Database",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("ensuring Database: applying Database ns/ks: "),
        "{error}"
    );
}

#[test]
fn a_brownfield_database_provisions_nothing_and_runs_db_sync() {
    let cluster = FakeCluster::new()
        .refusing(Refusal::op_on(Op::Get, "MariaDB"))
        .refusing(Refusal::op_on(Op::Apply, "Database"));
    let mut pass = db_pass(&cluster, brownfield());
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(jobs_created(&cluster), ["ks-db-sync"]);
}

#[test]
fn db_sync_then_schema_check_run_and_then_the_release_is_installed() {
    let cluster = provisioned();
    let mut pass = db_pass(&cluster, json!({}));
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(
        ready(&pass),
        (
            "False".into(),
            "DBSyncInProgress".into(),
            "db_sync job is running".into()
        )
    );
    let job = cluster.server("Job", "ks-db-sync").expect("created");
    assert_eq!(job["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    assert_eq!(job["metadata"]["ownerReferences"][0]["controller"], true);
    let hash = job["metadata"]["annotations"][POD_SPEC_HASH_ANNOTATION].clone();
    assert_eq!(hash.as_str().map(str::len), Some(64), "{job}");
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["image"],
        "ghcr.io/c5c3/keystone:2025.2"
    );
    // Still running: nothing new.
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(jobs_created(&cluster), ["ks-db-sync"]);

    finish_job(&cluster, "ks-db-sync", "Complete");
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(
        ready(&pass),
        (
            "False".into(),
            "SchemaCheckInProgress".into(),
            "schema-check job is running".into()
        )
    );
    assert_eq!(jobs_created(&cluster), ["ks-db-sync", "ks-schema-check"]);
    assert_eq!(
        pass.keystone
            .status
            .as_ref()
            .map(|s| s.installed_release.as_str()),
        Some("")
    );

    finish_job(&cluster, "ks-schema-check", "Complete");
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        ready(&pass),
        (
            "True".into(),
            "DatabaseSynced".into(),
            "Database schema is up to date (revision verified)".into()
        )
    );
    let status = pass.keystone.status.clone().expect("a status");
    assert_eq!(status.installed_release, "2025.2");
    assert_eq!(
        events(&cluster),
        [(
            "Normal".into(),
            "DatabaseSynced".into(),
            "Database schema is up to date".into()
        )]
    );
    assert_eq!(jobs_created(&cluster).len(), 2);
}

#[test]
fn a_patch_only_tag_change_re_runs_db_sync_and_installs_the_patch() {
    let cluster = FakeCluster::new();
    let mut pass = db_pass(&cluster, brownfield());
    for _ in 0..2 {
        run(&mut pass).expect("runs");
        for job in ["ks-db-sync", "ks-schema-check"] {
            if cluster.server("Job", job).is_some() {
                finish_job(&cluster, job, "Complete");
            }
        }
    }
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        pass.keystone
            .status
            .as_ref()
            .map(|s| s.installed_release.as_str()),
        Some("2025.2")
    );
    pass.keystone.spec.image.tag = "2025.2-p1".into();
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(ready(&pass).1, "DBSyncInProgress");
    let job = cluster.server("Job", "ks-db-sync").expect("re-created");
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["image"],
        "ghcr.io/c5c3/keystone:2025.2-p1"
    );
    assert_eq!(
        pass.keystone.status.as_ref().and_then(|s| s.upgrade_phase),
        None
    );
}

#[test]
fn a_digest_pinned_image_syncs_without_tracking_a_release() {
    let digest = format!("sha256:{}", "a".repeat(64));
    let mut spec = brownfield();
    spec["image"] = json!({"tag": null, "digest": digest});
    let cluster = FakeCluster::new();
    let mut pass = db_pass(&cluster, spec);
    run(&mut pass).expect("runs");
    let job = cluster.server("Job", "ks-db-sync").expect("created");
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["image"],
        format!("ghcr.io/c5c3/keystone@{digest}")
    );
    finish_job(&cluster, "ks-db-sync", "Complete");
    run(&mut pass).expect("runs");
    finish_job(&cluster, "ks-schema-check", "Complete");
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(ready(&pass).1, "DatabaseSynced");
    assert_eq!(
        pass.keystone
            .status
            .as_ref()
            .map(|s| s.installed_release.as_str()),
        Some("")
    );
}

fn assert_job_failed(error: &Error, what: &str, job: &str) {
    match error {
        Error::Job {
            what: w,
            source: blocks::job::Error::JobFailed { job: j },
        } => assert_eq!((w.as_str(), j.as_str()), (what, job)),
        other => panic!("not a failed Job: {other:?}"),
    }
}

#[test]
fn a_failed_db_sync_is_db_sync_failed_with_a_warning_and_stops_the_pass() {
    let cluster = FakeCluster::new();
    let mut pass = db_pass(&cluster, brownfield());
    run(&mut pass).expect("runs");
    finish_job(&cluster, "ks-db-sync", "Failed");
    let error = run(&mut pass).expect_err("fails");
    assert_job_failed(&error, "running db_sync", "ns/ks-db-sync");
    let (status, reason, message) = ready(&pass);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "DBSyncFailed")
    );
    assert!(
        message.starts_with("db_sync job failed: job failed: Job ns/ks-db-sync failed permanently"),
        "{message}"
    );
    assert_eq!(
        events(&cluster),
        [("Warning".into(), "DBSyncFailed".into(), message)]
    );
    assert_eq!(jobs_created(&cluster), ["ks-db-sync"]);
}

#[test]
fn a_failed_schema_check_is_schema_drift_detected_with_a_warning_and_stops_the_pass() {
    let cluster = FakeCluster::new();
    let mut pass = db_pass(&cluster, brownfield());
    run(&mut pass).expect("runs");
    finish_job(&cluster, "ks-db-sync", "Complete");
    run(&mut pass).expect("runs");
    finish_job(&cluster, "ks-schema-check", "Failed");
    let error = run(&mut pass).expect_err("fails");
    assert_job_failed(&error, "running schema-check", "ns/ks-schema-check");
    let (status, reason, message) = ready(&pass);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "SchemaDriftDetected")
    );
    assert!(
        message.starts_with("schema-check job failed: "),
        "{message}"
    );
    assert_eq!(
        events(&cluster),
        [("Warning".into(), "SchemaDriftDetected".into(), message)]
    );
    assert_eq!(
        pass.keystone
            .status
            .as_ref()
            .map(|s| s.installed_release.as_str()),
        Some("")
    );
}

#[test]
fn a_later_release_in_the_tag_starts_an_upgrade_instead_of_db_sync() {
    let cluster = provisioned();
    let mut pass = db_pass(&cluster, json!({"image": {"tag": "2026.1"}}));
    pass.status_mut().installed_release = "2025.2".into();
    assert_eq!(run(&mut pass).expect("runs"), Some(NEXT_PASS));
    assert_eq!(ready(&pass).1, "ExpandInProgress");
    assert_eq!(jobs_created(&cluster), Vec::<String>::new());
}
