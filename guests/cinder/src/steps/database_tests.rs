use serde_json::json;

use super::*;
use crate::testing::{cluster, pass, pass_condition, settle};

#[test]
fn the_database_waits_for_mariadb_then_its_objects_then_the_db_sync_job() {
    let cluster = cluster();
    cluster.change("MariaDB", "maria", |o| o["status"] = json!({}));
    let mut step = pass(&cluster);
    assert_eq!(run(&mut step).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(
        pass_condition(&step, DATABASE_READY),
        (
            "False".into(),
            "ClusterNotReady".into(),
            "MariaDB cluster \"maria\" is not ready".into()
        )
    );
    let cluster = crate::testing::cluster();
    let expectations = [
        ("WaitingForDatabase", "MariaDB Database CR is not ready"),
        (
            "WaitingForDatabase",
            "MariaDB User or Grant CR is not ready",
        ),
        ("DBSyncInProgress", "db_sync job is running"),
    ];
    for (reason, message) in expectations {
        let mut step = pass(&cluster);
        assert_eq!(
            run(&mut step).expect("runs"),
            Some(DATABASE_POLLING),
            "{reason}"
        );
        assert_eq!(
            pass_condition(&step, DATABASE_READY),
            ("False".into(), reason.into(), message.into())
        );
        // Only what exists so far is settled: one gate opens per pass.
        if reason == "WaitingForDatabase" && message.contains("Database CR") {
            cluster.change("Database", "cinder", |o| {
                o["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
            });
        } else {
            settle(&cluster);
        }
    }
    let mut step = pass(&cluster);
    assert_eq!(run(&mut step).expect("runs"), None);
    assert_eq!(
        pass_condition(&step, DATABASE_READY),
        (
            "True".into(),
            "DatabaseSynced".into(),
            "Database schema is up to date".into()
        )
    );
    assert_eq!(
        step.cinder.status.expect("status").installed_release,
        "2025.2"
    );
    let job = cluster.server("Job", "cinder-db-sync").expect("the Job");
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["command"],
        json!(["cinder-manage", "db", "sync"])
    );
}
