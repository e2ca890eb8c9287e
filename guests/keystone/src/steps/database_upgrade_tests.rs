use serde_json::json;
use wasm_operator_sdk::testing::{Call, FakeCluster};
use wasm_operator_sdk::{ObjectRef, blocks};

use super::*;
use crate::steps::database::run;
use crate::testing::{
    condition, events, finish_job, jobs_created, keystone_with, pass_with_config,
};

/// A pass over a brownfield Keystone at `tag` whose database holds `installed`, with the
/// config ConfigMap named.
fn upgrade_pass<'c>(cluster: &'c FakeCluster, tag: &str, installed: &str) -> Pass<'c> {
    let spec = json!({"image": {"tag": tag},
        "database": {"clusterRef": null, "host": "db.example"}});
    let mut pass = pass_with_config(cluster, &keystone_with(spec));
    pass.status_mut().installed_release = installed.into();
    pass
}

fn ready(pass: &Pass<'_>) -> (String, String, String) {
    condition(pass, DATABASE_READY)
}

fn phase(pass: &Pass<'_>) -> Option<UpgradePhase> {
    pass.keystone.status.as_ref().and_then(|s| s.upgrade_phase)
}

fn target(pass: &Pass<'_>) -> String {
    releases(pass).1
}

fn image_and_command(cluster: &FakeCluster, job: &str) -> (serde_json::Value, serde_json::Value) {
    let job = cluster
        .server("Job", job)
        .unwrap_or_else(|| panic!("no Job {job}"));
    let container = job["spec"]["template"]["spec"]["containers"][0].clone();
    (container["image"].clone(), container["command"].clone())
}

#[test]
fn an_upgrade_is_a_changed_tag_that_is_not_patch_only_or_does_not_parse() {
    // (tag, installed, upgrade)
    let table = [
        ("2025.2", "", false),
        ("", "2025.1", false),
        ("2025.2", "2025.2", false),
        ("2025.2-p1", "2025.2", false),
        ("2025.2", "2025.2-p3", false),
        ("latest", "2025.2", true),
        ("2025.2", "abc", true),
        ("2025.1", "2025.2", true),
        ("2027.1", "2025.2", true),
        ("2025.2", "2025.1", true),
    ];
    for (tag, installed, upgrade) in table {
        assert_eq!(is_upgrade(tag, installed), upgrade, "{installed} → {tag}");
    }
}

#[test]
fn an_upgrade_that_cannot_start_sets_its_reason_records_a_warning_and_fails() {
    // (installed, tag, reason, message, event note, error)
    let table = [
        (
            "abc",
            "2025.2",
            "VersionParseError",
            "failed to parse installed release \"abc\": invalid release format \"abc\": expected YYYY.N",
            "Failed to parse installed release \"abc\": invalid release format \"abc\": expected YYYY.N",
            "parse installed release \"abc\": invalid release format \"abc\": expected YYYY.N",
        ),
        (
            "2025.2",
            "latest",
            "VersionParseError",
            "failed to parse target release \"latest\": invalid release format \"latest\": expected YYYY.N",
            "Failed to parse target release \"latest\": invalid release format \"latest\": expected YYYY.N",
            "parse target release \"latest\": invalid release format \"latest\": expected YYYY.N",
        ),
        (
            "2025.2",
            "2025.1",
            "DowngradeNotSupported",
            "downgrade from 2025.2 to 2025.1 is not supported",
            "Downgrade from 2025.2 to 2025.1 is not supported",
            "downgrade from 2025.2 to 2025.1 is not supported",
        ),
        (
            "2025.1",
            "2026.1",
            "UpgradePathInvalid",
            "upgrade from 2025.1 to 2026.1 is not sequential; only sequential upgrades are supported",
            "Upgrade from 2025.1 to 2026.1 is not sequential",
            "upgrade from 2025.1 to 2026.1 is not sequential; only sequential upgrades are supported",
        ),
    ];
    for (installed, tag, reason, message, note, error_text) in table {
        let cluster = FakeCluster::new();
        let mut pass = upgrade_pass(&cluster, tag, installed);
        let error = run(&mut pass).expect_err(reason);
        assert!(matches!(error, Error::Upgrade(_)), "{error:?}");
        assert_eq!(error.to_string(), error_text);
        assert_eq!(
            ready(&pass),
            ("False".into(), reason.into(), message.into())
        );
        assert_eq!(
            events(&cluster),
            [("Warning".into(), reason.into(), note.into())]
        );
        assert_eq!((phase(&pass), target(&pass)), (None, String::new()));
        assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    }
    // The valid row: one release forward starts at Expanding.
    let cluster = FakeCluster::new();
    let mut pass = upgrade_pass(&cluster, "2025.2", "2025.1");
    assert_eq!(run(&mut pass).expect("starts"), Some(NEXT_PASS));
    assert_eq!(
        ready(&pass),
        (
            "False".into(),
            "ExpandInProgress".into(),
            "Upgrade detected: 2025.1 → 2025.2 (phase: Expanding)".into()
        )
    );
    assert_eq!(
        (phase(&pass), target(&pass)),
        (Some(UpgradePhase::Expanding), "2025.2".into())
    );
    assert_eq!(
        events(&cluster),
        [(
            "Normal".into(),
            "UpgradeInitiated".into(),
            "Upgrade initiated: 2025.1 → 2025.2".into()
        )]
    );
    assert!(cluster.writes().is_empty(), "no Job before the next pass");
}

#[test]
fn an_upgrade_runs_expand_migrate_rolling_update_and_contract_in_order() {
    let cluster = FakeCluster::new();
    let mut pass = upgrade_pass(&cluster, "2026.1", "2025.2");
    assert_eq!(run(&mut pass).expect("initiates"), Some(NEXT_PASS));
    let config = "--config-dir=/etc/keystone/keystone.conf.d/";
    let span = "2025.2 → 2026.1";
    // (job, flag, in progress, after completion, its event, its phase, the next phase)
    let phases = [
        (
            "ks-db-expand",
            "--expand",
            "ExpandInProgress",
            (
                "MigrateInProgress",
                format!("Expand complete, starting migrate: {span}"),
            ),
            ("ExpandComplete", format!("Expand phase complete: {span}")),
            UpgradePhase::Expanding,
            UpgradePhase::Migrating,
        ),
        (
            "ks-db-migrate",
            "--migrate",
            "MigrateInProgress",
            (
                "UpgradeRollingUpdate",
                format!("Migrate complete, waiting for Deployment rollout: {span}"),
            ),
            ("MigrateComplete", format!("Migrate phase complete: {span}")),
            UpgradePhase::Migrating,
            UpgradePhase::RollingUpdate,
        ),
    ];
    for (job, flag, running, (after, after_message), (event, note), now, next) in phases {
        assert_eq!(phase(&pass), Some(now));
        assert_eq!(
            run(&mut pass).expect("runs"),
            Some(DATABASE_POLLING),
            "{job}"
        );
        assert_eq!(ready(&pass).1, running);
        assert!(ready(&pass).2.ends_with(&format!("phase running: {span}")));
        assert_eq!(
            image_and_command(&cluster, job),
            (
                json!("ghcr.io/c5c3/keystone:2026.1"),
                json!(["keystone-manage", config, "db_sync", flag])
            )
        );
        cluster.clear_calls();
        finish_job(&cluster, job, "Complete");
        assert_eq!(run(&mut pass).expect("moves on"), Some(NEXT_PASS), "{job}");
        assert_eq!(ready(&pass), ("False".into(), after.into(), after_message));
        assert_eq!(events(&cluster), [("Normal".into(), event.into(), note)]);
        assert_eq!(phase(&pass), Some(next));
    }
    // RollingUpdate: the step lets the pass go on to the Deployment.
    assert_eq!(run(&mut pass).expect("waits for the rollout"), None);
    assert_eq!(
        ready(&pass),
        (
            "False".into(),
            "UpgradeRollingUpdate".into(),
            format!("Waiting for Deployment rollout: {span}")
        )
    );
    cluster.clear_calls();
    assert!(finish_rolling_update(&mut pass));
    assert_eq!(phase(&pass), Some(UpgradePhase::Contracting));
    assert_eq!(
        events(&cluster),
        [(
            "Normal".into(),
            "DeploymentRolloutComplete".into(),
            format!("Deployment rollout complete during upgrade {span}")
        )]
    );
    // Contracting.
    assert_eq!(run(&mut pass).expect("runs"), Some(DATABASE_POLLING));
    assert_eq!(
        ready(&pass),
        (
            "False".into(),
            "ContractInProgress".into(),
            format!("Contract phase running: {span}")
        )
    );
    assert_eq!(
        image_and_command(&cluster, "ks-db-contract").1,
        json!(["keystone-manage", config, "db_sync", "--contract"])
    );
    cluster.clear_calls();
    finish_job(&cluster, "ks-db-contract", "Complete");
    assert_eq!(run(&mut pass).expect("completes"), None);
    assert_eq!(
        ready(&pass),
        (
            "True".into(),
            "DatabaseSynced".into(),
            format!("Database schema is up to date (upgraded {span})")
        )
    );
    let status = pass.keystone.status.clone().expect("a status");
    assert_eq!(
        (
            status.installed_release.as_str(),
            status.target_release.as_str(),
            status.upgrade_phase
        ),
        ("2026.1", "", None)
    );
    assert_eq!(
        events(&cluster),
        [(
            "Normal".into(),
            "UpgradeComplete".into(),
            format!("Upgrade complete: {span}")
        )]
    );
    // The next pass is a normal sync at the new release.
    assert_eq!(run(&mut pass).expect("syncs"), Some(DATABASE_POLLING));
    assert_eq!(ready(&pass).1, "DBSyncInProgress");
}

#[test]
fn the_phase_jobs_are_created_in_order_and_db_sync_not_before_the_upgrade_completes() {
    let cluster = FakeCluster::new();
    let mut pass = upgrade_pass(&cluster, "2026.1", "2025.2");
    for _ in 0..12 {
        run(&mut pass).expect("runs");
        if finish_rolling_update(&mut pass) {
            continue;
        }
        for job in ["ks-db-expand", "ks-db-migrate", "ks-db-contract"] {
            if cluster.server("Job", job).is_some() {
                finish_job(&cluster, job, "Complete");
            }
        }
        if phase(&pass).is_none() && ready(&pass).1 == "DatabaseSynced" {
            break;
        }
    }
    assert_eq!(
        jobs_created(&cluster),
        ["ks-db-expand", "ks-db-migrate", "ks-db-contract"]
    );
    assert_eq!(
        pass.keystone
            .status
            .as_ref()
            .map(|s| s.installed_release.as_str()),
        Some("2026.1")
    );
}

#[test]
fn a_failed_phase_job_is_its_phase_failed_with_a_warning_and_stops_the_pass() {
    let table = [
        (
            UpgradePhase::Expanding,
            "ks-db-expand",
            "Expand",
            "running expand job",
        ),
        (
            UpgradePhase::Migrating,
            "ks-db-migrate",
            "Migrate",
            "running migrate job",
        ),
        (
            UpgradePhase::Contracting,
            "ks-db-contract",
            "Contract",
            "running contract job",
        ),
    ];
    for (now, job, name, what) in table {
        let cluster = FakeCluster::new();
        let mut pass = upgrade_pass(&cluster, "2026.1", "2025.2");
        pass.status_mut().target_release = "2026.1".into();
        pass.status_mut().upgrade_phase = Some(now);
        assert_eq!(
            run(&mut pass).expect("runs"),
            Some(DATABASE_POLLING),
            "{job}"
        );
        finish_job(&cluster, job, "Failed");
        let error = run(&mut pass).expect_err("fails");
        match &error {
            Error::Job {
                what: w,
                source: blocks::job::Error::JobFailed { job: j },
            } => assert_eq!(
                (w.as_str(), j.as_str()),
                (what, format!("ns/{job}").as_str())
            ),
            other => panic!("{job}: not a failed Job: {other:?}"),
        }
        let (status, reason, message) = ready(&pass);
        assert_eq!(
            (status.as_str(), reason.clone()),
            ("False", format!("{name}Failed"))
        );
        assert!(
            message.starts_with(&format!("{name} job {job} failed: job failed: ")),
            "{message}"
        );
        assert_eq!(events(&cluster), [("Warning".into(), reason, message)]);
        assert_eq!(phase(&pass), Some(now), "the phase stays");
    }
}

#[test]
fn reverting_the_tag_mid_upgrade_deletes_the_phase_jobs_and_aborts() {
    let cluster = FakeCluster::new();
    let mut pass = upgrade_pass(&cluster, "2026.1", "2025.2");
    run(&mut pass).expect("initiates");
    run(&mut pass).expect("expands");
    finish_job(&cluster, "ks-db-expand", "Complete");
    run(&mut pass).expect("moves to migrate");
    run(&mut pass).expect("migrates");
    finish_job(&cluster, "ks-db-migrate", "Failed");
    run(&mut pass).expect_err("the migration failed");
    cluster.clear_calls();

    pass.keystone.spec.image.tag = "2025.2".into();
    assert_eq!(run(&mut pass).expect("aborts"), Some(NEXT_PASS));
    let deleted: Vec<String> = cluster
        .calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::Delete(r, _) => Some(r.name),
            _ => None,
        })
        .collect();
    assert_eq!(deleted, ["ks-db-expand", "ks-db-migrate", "ks-db-contract"]);
    for job in ["ks-db-expand", "ks-db-migrate"] {
        let r = ObjectRef::of::<Job>(Some("ns"), job);
        assert_eq!(cluster.object(&r), None, "{job}");
    }
    assert_eq!((phase(&pass), target(&pass)), (None, String::new()));
    assert_eq!(
        pass.keystone
            .status
            .as_ref()
            .map(|s| s.installed_release.as_str()),
        Some("2025.2")
    );
    assert_eq!(
        events(&cluster),
        [(
            "Normal".into(),
            "UpgradeAborted".into(),
            "Upgrade 2025.2 → 2026.1 aborted: spec release reverted to installed release 2025.2"
                .into()
        )]
    );
    // The next pass is the normal sync at the installed release.
    assert_eq!(run(&mut pass).expect("syncs"), Some(DATABASE_POLLING));
    assert_eq!(ready(&pass).1, "DBSyncInProgress");
}

#[test]
fn a_third_tag_mid_upgrade_is_upgrade_target_changed_and_an_error() {
    let cluster = FakeCluster::new();
    let mut pass = upgrade_pass(&cluster, "2026.1", "2025.2");
    run(&mut pass).expect("initiates");
    run(&mut pass).expect("expands");
    cluster.clear_calls();
    pass.keystone.spec.image.tag = "2026.2".into();
    let error = run(&mut pass).expect_err("refused");
    assert!(
        matches!(&error, Error::Upgrade(UpgradeError::TargetChanged { target, tag })
            if target == "2026.1" && tag == "2026.2"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "image tag changed during active upgrade: current upgrade targets 2026.1 but \
         spec.image.tag is 2026.2"
    );
    assert_eq!(
        ready(&pass),
        (
            "False".into(),
            "UpgradeTargetChanged".into(),
            "Image tag changed to 2026.2 during active upgrade 2025.2 → 2026.1; complete or \
             roll back the current upgrade first"
                .into()
        )
    );
    assert_eq!(
        events(&cluster),
        [(
            "Warning".into(),
            "UpgradeTargetChanged".into(),
            "Image tag changed to 2026.2 during active upgrade 2025.2 → 2026.1".into()
        )]
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    assert_eq!(phase(&pass), Some(UpgradePhase::Expanding));
}

#[test]
fn finish_rolling_update_moves_only_a_rolling_update_to_contracting() {
    let cluster = FakeCluster::new();
    let phases = [
        None,
        Some(UpgradePhase::Expanding),
        Some(UpgradePhase::Migrating),
        Some(UpgradePhase::Contracting),
    ];
    for now in phases {
        let mut pass = upgrade_pass(&cluster, "2026.1", "2025.2");
        pass.status_mut().upgrade_phase = now;
        assert!(!finish_rolling_update(&mut pass), "{now:?}");
        assert_eq!(phase(&pass), now);
    }
    assert!(cluster.events().is_empty());
    // The valid row.
    let mut pass = upgrade_pass(&cluster, "2026.1", "2025.2");
    pass.status_mut().upgrade_phase = Some(UpgradePhase::RollingUpdate);
    assert!(finish_rolling_update(&mut pass));
    assert_eq!(phase(&pass), Some(UpgradePhase::Contracting));
    assert_eq!(cluster.event_reasons(), ["DeploymentRolloutComplete"]);
}
