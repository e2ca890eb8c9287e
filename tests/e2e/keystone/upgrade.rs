//! The database upgrade between releases end to end (facts §2.14): the phases run through
//! their Jobs on the target release's image, and the refusals and a failed phase are
//! reported on DatabaseReady.

use serde_json::json;

use wasm_operator_e2e::current_condition as condition;

use crate::harness::{Harness, keystone_ref};

/// Installs Keystone `ks` of `namespace` at 2025.2 and waits until it is Ready through
/// its Deployment.
async fn install(h: &Harness, namespace: &str) {
    h.cluster
        .create(crate::harness::keystone_in(namespace, json!({})))
        .await;
    let object = h
        .condition_in(namespace, "DeploymentReady", "DeploymentReady")
        .await;
    assert_eq!(
        object["status"]["installedRelease"], "2025.2",
        "{namespace}"
    );
}

/// The installed Keystone `ks` of `ns`.
async fn installed() -> Harness {
    let h = Harness::start().await;
    install(&h, "ns").await;
    h
}

async fn set_tag(h: &Harness, namespace: &str, tag: &str) {
    h.cluster
        .merge_patch(
            &keystone_ref(namespace),
            json!({"spec": {"image": {"tag": tag}}}),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_to_the_next_release_expands_migrates_rolls_and_contracts_through_its_jobs() {
    let h = installed().await;
    set_tag(&h, "ns", "2026.1").await;
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
async fn an_upgrade_is_refused_for_a_bad_path_and_a_failed_phase_stops_it() {
    let h = Harness::start_with(&crate::harness::ACTORS).await;
    // (namespace, the failing Job, tag, reason, a part of the message); the last three
    // rows are a valid path whose phase Job fails.
    let rows = [
        (
            "bad-tag",
            "",
            "latest",
            "VersionParseError",
            "failed to parse target release \"latest\"",
        ),
        ("downgrade", "", "2025.1", "DowngradeNotSupported", "2025.1"),
        ("skips", "", "2027.1", "UpgradePathInvalid", "2027.1"),
        (
            "expand-fails",
            "ks-db-expand",
            "2026.1",
            "ExpandFailed",
            "Expand job ks-db-expand failed",
        ),
        (
            "migrate-fails",
            "ks-db-migrate",
            "2026.1",
            "MigrateFailed",
            "Migrate job ks-db-migrate failed",
        ),
        (
            "contract-fails",
            "ks-db-contract",
            "2026.1",
            "ContractFailed",
            "Contract job ks-db-contract failed",
        ),
    ];
    for (namespace, job, ..) in rows {
        h.seed(namespace, &[]).await;
        if !job.is_empty() {
            h.job_outcomes(namespace, &[(job, "Fail", "alembic: revision failed")])
                .await;
        }
        h.cluster
            .create(crate::harness::keystone_in(namespace, json!({})))
            .await;
    }
    for (namespace, _, tag, ..) in rows {
        let object = h
            .condition_in(namespace, "DeploymentReady", "DeploymentReady")
            .await;
        assert_eq!(
            object["status"]["installedRelease"], "2025.2",
            "{namespace}"
        );
        set_tag(&h, namespace, tag).await;
    }
    for (namespace, _, tag, reason, message) in rows {
        let object = h.condition_in(namespace, "DatabaseReady", reason).await;
        let reached = condition(&object, "DatabaseReady").expect("DatabaseReady");
        assert!(
            reached["message"]
                .as_str()
                .unwrap_or_default()
                .contains(message),
            "{namespace} {tag}: {reached}"
        );
        assert_eq!(
            object["status"]["installedRelease"], "2025.2",
            "{namespace}"
        );
        let events = h.cluster.events_with_reason(namespace, reason).await;
        assert!(
            events.iter().any(|e| e["type"] == "Warning"),
            "{namespace}: a Warning {reason}: {events:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tag_changed_during_an_upgrade_is_refused_and_reverting_it_aborts_the_upgrade() {
    let h = Harness::start().await;
    h.job_outcomes("ns", &[("ks-db-expand", "Run", "")]).await;
    install(&h, "ns").await;
    set_tag(&h, "ns", "2026.1").await;
    h.condition("DatabaseReady", "ExpandInProgress").await;
    set_tag(&h, "ns", "2026.2").await;
    let object = h.condition("DatabaseReady", "UpgradeTargetChanged").await;
    let reached = condition(&object, "DatabaseReady").expect("DatabaseReady");
    assert_eq!(
        reached["message"],
        "Image tag changed to 2026.2 during active upgrade 2025.2 → 2026.1; complete or roll \
         back the current upgrade first"
    );
    assert!(
        h.cluster
            .get("batch/v1", "Job", "ns", "ks-db-expand")
            .await
            .is_some(),
        "the held expand Job runs"
    );
    set_tag(&h, "ns", "2025.2").await;
    let object = h.condition("DatabaseReady", "DatabaseSynced").await;
    assert_eq!(object["status"]["installedRelease"], "2025.2");
    assert!(
        object["status"]["upgradePhase"].is_null(),
        "{}",
        object["status"]
    );
    assert_eq!(
        h.cluster
            .events_with_reason("ns", "UpgradeAborted")
            .await
            .len(),
        1
    );
    assert!(
        h.cluster
            .get("batch/v1", "Job", "ns", "ks-db-expand")
            .await
            .is_none(),
        "the upgrade Jobs are deleted"
    );
}
