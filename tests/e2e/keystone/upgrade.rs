//! The database upgrade between releases end to end (facts §2.14): the phases run through
//! their Jobs on the target release's image, and the refusals and a failed phase are
//! reported on DatabaseReady.

use serde_json::json;

use crate::harness::{Harness, condition, keystone, keystone_ref};

/// The installed Keystone `ks` of `ns` at 2025.2, Ready through its Deployment.
async fn installed() -> Harness {
    let h = Harness::start().await;
    h.cluster.create(keystone(json!({}))).await;
    let object = h.condition("DeploymentReady", "DeploymentReady").await;
    assert_eq!(object["status"]["installedRelease"], "2025.2");
    h
}

async fn set_tag(h: &Harness, tag: &str) {
    h.cluster
        .merge_patch(
            &keystone_ref("ns"),
            json!({"spec": {"image": {"tag": tag}}}),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_to_the_next_release_expands_migrates_rolls_and_contracts_through_its_jobs() {
    let h = installed().await;
    set_tag(&h, "2026.1").await;
    let done = h.condition("DatabaseReady", "DatabaseSynced").await;
    assert_eq!(done["status"]["installedRelease"], "2026.1");
    for reason in [
        "ExpandInProgress",
        "MigrateInProgress",
        "UpgradeRollingUpdate",
        "ContractInProgress",
    ] {
        assert!(h.reasons.saw("ns", "DatabaseReady", reason), "{reason}");
    }
    for job in ["ks-db-expand", "ks-db-migrate", "ks-db-contract"] {
        let job = h
            .cluster
            .get("batch/v1", "Job", "ns", job)
            .await
            .unwrap_or_else(|| panic!("Job {job}"));
        assert_eq!(
            job.pointer("/spec/template/spec/containers/0/image"),
            Some(&json!("ghcr.io/c5c3/keystone:2026.1")),
            "{job}"
        );
        let complete = job
            .pointer("/status/conditions")
            .and_then(|c| c.as_array())
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Complete"));
        assert!(complete, "{job}");
    }
    for reason in [
        "UpgradeInitiated",
        "ExpandComplete",
        "MigrateComplete",
        "DeploymentRolloutComplete",
        "UpgradeComplete",
    ] {
        assert_eq!(
            h.cluster.events_with_reason("ns", reason).await.len(),
            1,
            "event {reason}"
        );
    }
    let deployment = h
        .cluster
        .get("apps/v1", "Deployment", "ns", "ks")
        .await
        .expect("the Deployment");
    assert_eq!(
        deployment.pointer("/spec/template/spec/containers/0/image"),
        Some(&json!("ghcr.io/c5c3/keystone:2026.1"))
    );
    h.condition("DeploymentReady", "DeploymentReady").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_is_refused_for_a_bad_path_and_a_failed_expand_stops_it() {
    let h = installed().await;
    h.job_outcomes("ns", &[("ks-db-expand", "Fail", "alembic: expand failed")])
        .await;
    // (tag, reason, a part of the message); the last row is a valid path.
    for (tag, reason, message) in [
        ("latest", "VersionParseError", "\"latest\""),
        ("2025.1", "DowngradeNotSupported", "2025.1"),
        ("2027.1", "UpgradePathInvalid", "2027.1"),
        ("2026.1", "ExpandFailed", "Expand job ks-db-expand failed"),
    ] {
        set_tag(&h, tag).await;
        let object = h.condition("DatabaseReady", reason).await;
        let reached = condition(&object, "DatabaseReady").expect("DatabaseReady");
        assert!(
            reached["message"]
                .as_str()
                .unwrap_or_default()
                .contains(message),
            "{tag}: {reached}"
        );
        assert_eq!(object["status"]["installedRelease"], "2025.2", "{tag}");
        let events = h.cluster.events_with_reason("ns", reason).await;
        assert!(
            events.iter().any(|e| e["type"] == "Warning"),
            "a Warning {reason}: {events:?}"
        );
    }
}
