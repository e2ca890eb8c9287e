//! The database upgrade between releases (facts §2.14): expand, migrate, roll the
//! Deployment, contract, each phase persisted in `status.upgradePhase`.
//!
//! | Phase / case | Job | DatabaseReady | Event | Pass |
//! |---|---|---|---|---|
//! | tag names a later release, not patch-only | — | False `ExpandInProgress` | Normal `UpgradeInitiated` | next pass |
//! | installed or target tag not a release | — | False `VersionParseError` | Warning | error |
//! | target before installed | — | False `DowngradeNotSupported` | Warning | error |
//! | target skips a release | — | False `UpgradePathInvalid` | Warning | error |
//! | Expanding | `{name}-db-expand` | False `ExpandInProgress`, then `MigrateInProgress` | `ExpandComplete` | 30 s, then next pass |
//! | Migrating | `{name}-db-migrate` | False `MigrateInProgress`, then `UpgradeRollingUpdate` | `MigrateComplete` | 30 s, then next pass |
//! | RollingUpdate | — (the Deployment step calls [`finish_rolling_update`]) | False `UpgradeRollingUpdate` | `DeploymentRolloutComplete` | goes on |
//! | Contracting | `{name}-db-contract` | False `ContractInProgress`, then True `DatabaseSynced` | `UpgradeComplete` | 30 s, then goes on |
//! | a phase Job failed | — | False `<Phase>Failed` | Warning `<Phase>Failed` | error |
//! | tag reverted to the installed release | upgrade Jobs deleted | — | Normal `UpgradeAborted` | next pass |
//! | tag changed to a third release | — | False `UpgradeTargetChanged` | Warning | error |
//!
//! Every phase Job runs the target release's image, `repository:<tag>`: its migration tree
//! owns the schema changes. The abort is not gated on the phase; once contract has run
//! the installed release may no longer fit the schema, which is the user's to judge.

use k8s_openapi::api::batch::v1::Job;
use wasm_operator_sdk::blocks::job::run_job;
use wasm_operator_sdk::blocks::types::UpgradePhase;
use wasm_operator_sdk::{ClusterExt, EventType, Propagation};

use crate::conditions::DATABASE_READY;
use crate::db_jobs::{self, UPGRADE_JOB_SUFFIXES};
use crate::error::{Error, UpgradeError};
use crate::pass::{DATABASE_POLLING, NEXT_PASS, Pass, StepResult};
use crate::release::Release;

/// Whether `tag` needs the upgrade flow from `installed`: both set, different, and not a
/// patch-only change. A tag that does not parse counts as an upgrade, so that
/// [`initiate`] reports it.
pub(crate) fn is_upgrade(tag: &str, installed: &str) -> bool {
    if tag.is_empty() || installed.is_empty() || tag == installed {
        return false;
    }
    match (Release::parse(installed), Release::parse(tag)) {
        (Ok(from), Ok(to)) => !from.is_patch_only_to(&to),
        _ => true,
    }
}

/// `(installedRelease, targetRelease)`.
fn releases(pass: &Pass<'_>) -> (String, String) {
    let status = pass.keystone.status.clone().unwrap_or_default();
    (status.installed_release, status.target_release)
}

/// Sets DatabaseReady False `reason`, records a Warning, and fails with `error`.
fn refuse(
    pass: &mut Pass<'_>,
    reason: &str,
    message: &str,
    note: &str,
    error: UpgradeError,
) -> StepResult {
    pass.condition(DATABASE_READY, false, reason, message);
    pass.event(EventType::Warning, reason, note);
    Err(error.into())
}

/// Checks the path from the installed release to the tag and starts the upgrade at
/// Expanding.
pub(crate) fn initiate(pass: &mut Pass<'_>) -> StepResult {
    let (installed, _) = releases(pass);
    let tag = pass.keystone.spec.image.tag.clone();
    let from = match Release::parse(&installed) {
        Ok(from) => from,
        Err(source) => {
            let message = format!("failed to parse installed release {installed:?}: {source}");
            let note = format!("Failed to parse installed release {installed:?}: {source}");
            let error = UpgradeError::InstalledRelease {
                tag: installed,
                source,
            };
            return refuse(pass, "VersionParseError", &message, &note, error);
        }
    };
    let to = match Release::parse(&tag) {
        Ok(to) => to,
        Err(source) => {
            let message = format!("failed to parse target release {tag:?}: {source}");
            let note = format!("Failed to parse target release {tag:?}: {source}");
            let error = UpgradeError::TargetRelease { tag, source };
            return refuse(pass, "VersionParseError", &message, &note, error);
        }
    };
    let (a, b) = (from.raw.clone(), to.raw.clone());
    if from.is_downgrade_to(&to) {
        let error = UpgradeError::Downgrade {
            from: a.clone(),
            to: b.clone(),
        };
        let note = format!("Downgrade from {a} to {b} is not supported");
        return refuse(
            pass,
            "DowngradeNotSupported",
            &error.to_string(),
            &note,
            error,
        );
    }
    if !from.is_sequential_to(&to) {
        let error = UpgradeError::NotSequential {
            from: a.clone(),
            to: b.clone(),
        };
        let note = format!("Upgrade from {a} to {b} is not sequential");
        return refuse(pass, "UpgradePathInvalid", &error.to_string(), &note, error);
    }
    let status = pass.status_mut();
    status.target_release = tag;
    status.upgrade_phase = Some(UpgradePhase::Expanding);
    let message = format!("Upgrade detected: {a} → {b} (phase: Expanding)");
    pass.condition(DATABASE_READY, false, "ExpandInProgress", &message);
    pass.event(
        EventType::Normal,
        "UpgradeInitiated",
        &format!("Upgrade initiated: {a} → {b}"),
    );
    Ok(Some(NEXT_PASS))
}

/// Drives the upgrade under way: the abort, the target-changed guard, then the phase.
pub(crate) fn reconcile(pass: &mut Pass<'_>) -> StepResult {
    let (installed, target) = releases(pass);
    let tag = pass.keystone.spec.image.tag.clone();
    if tag == installed {
        return abort(pass);
    }
    if tag != target {
        let message = format!(
            "Image tag changed to {tag} during active upgrade {installed} → {target}; \
             complete or roll back the current upgrade first"
        );
        let note =
            format!("Image tag changed to {tag} during active upgrade {installed} → {target}");
        let error = UpgradeError::TargetChanged { target, tag };
        return refuse(pass, "UpgradeTargetChanged", &message, &note, error);
    }
    let phase = pass.keystone.status.as_ref().and_then(|s| s.upgrade_phase);
    match phase {
        Some(UpgradePhase::Expanding) => run_phase(pass, PhaseJob::Expand),
        Some(UpgradePhase::Migrating) => run_phase(pass, PhaseJob::Migrate),
        Some(UpgradePhase::Contracting) => run_phase(pass, PhaseJob::Contract),
        Some(UpgradePhase::RollingUpdate) => {
            let message = format!("Waiting for Deployment rollout: {installed} → {target}");
            pass.condition(DATABASE_READY, false, "UpgradeRollingUpdate", &message);
            Ok(None)
        }
        None => Ok(None),
    }
}

/// The phases that run a Job.
#[derive(Debug, Clone, Copy)]
enum PhaseJob {
    Expand,
    Migrate,
    Contract,
}

impl PhaseJob {
    /// The phase's name in reasons and messages.
    fn name(self) -> &'static str {
        match self {
            Self::Expand => "Expand",
            Self::Migrate => "Migrate",
            Self::Contract => "Contract",
        }
    }

    /// Its `db_sync` flag, without `--`; the Job is `{name}-db-<flag>`.
    fn flag(self) -> &'static str {
        match self {
            Self::Expand => "expand",
            Self::Migrate => "migrate",
            Self::Contract => "contract",
        }
    }
}

/// Runs the phase's Job on the target release, and moves on once it completed.
fn run_phase(pass: &mut Pass<'_>, phase: PhaseJob) -> StepResult {
    let (installed, target) = releases(pass);
    let (name, flag) = (phase.name(), phase.flag());
    let job: Job = db_jobs::upgrade_job(pass, flag, &target)?;
    let job_name = db_jobs::job_name(pass.name(), &format!("db-{flag}"));
    match run_job(pass.cluster, &pass.owner, &job) {
        Err(source) => {
            let reason = format!("{name}Failed");
            let message = format!("{name} job {job_name} failed: {source}");
            pass.condition(DATABASE_READY, false, &reason, &message);
            pass.event(EventType::Warning, &reason, &message);
            Err(Error::Job {
                what: format!("running {flag} job"),
                source,
            })
        }
        Ok(false) => {
            let message = format!("{name} phase running: {installed} → {target}");
            pass.condition(
                DATABASE_READY,
                false,
                &format!("{name}InProgress"),
                &message,
            );
            Ok(Some(DATABASE_POLLING))
        }
        Ok(true) => complete(pass, phase, &installed, &target),
    }
}

/// What follows `phase` once its Job completed.
fn complete(pass: &mut Pass<'_>, phase: PhaseJob, installed: &str, target: &str) -> StepResult {
    let span = format!("{installed} → {target}");
    match phase {
        PhaseJob::Expand => {
            pass.status_mut().upgrade_phase = Some(UpgradePhase::Migrating);
            let message = format!("Expand complete, starting migrate: {span}");
            pass.condition(DATABASE_READY, false, "MigrateInProgress", &message);
            let note = format!("Expand phase complete: {span}");
            pass.event(EventType::Normal, "ExpandComplete", &note);
            Ok(Some(NEXT_PASS))
        }
        PhaseJob::Migrate => {
            pass.status_mut().upgrade_phase = Some(UpgradePhase::RollingUpdate);
            let message = format!("Migrate complete, waiting for Deployment rollout: {span}");
            pass.condition(DATABASE_READY, false, "UpgradeRollingUpdate", &message);
            let note = format!("Migrate phase complete: {span}");
            pass.event(EventType::Normal, "MigrateComplete", &note);
            Ok(Some(NEXT_PASS))
        }
        PhaseJob::Contract => {
            let status = pass.status_mut();
            status.installed_release = target.to_owned();
            status.target_release.clear();
            status.upgrade_phase = None;
            let message = format!("Database schema is up to date (upgraded {span})");
            pass.condition(DATABASE_READY, true, "DatabaseSynced", &message);
            let note = format!("Upgrade complete: {span}");
            pass.event(EventType::Normal, "UpgradeComplete", &note);
            Ok(None)
        }
    }
}

/// The tag went back to the installed release: deletes the phase Jobs, then clears the
/// upgrade, so a failed delete leaves the upgrade to abort again on the next pass.
fn abort(pass: &mut Pass<'_>) -> StepResult {
    for suffix in UPGRADE_JOB_SUFFIXES {
        let name = db_jobs::job_name(pass.name(), suffix);
        let what = format!("deleting upgrade Job {} during abort", pass.key(&name));
        pass.cluster
            .delete_typed::<Job>(Some(pass.namespace()), &name, Propagation::Background)
            .map_err(Error::cluster(what))?;
    }
    let (installed, target) = releases(pass);
    let status = pass.status_mut();
    status.upgrade_phase = None;
    status.target_release.clear();
    let note = format!(
        "Upgrade {installed} → {target} aborted: spec release reverted to installed release \
         {installed}"
    );
    pass.event(EventType::Normal, "UpgradeAborted", &note);
    Ok(Some(NEXT_PASS))
}

/// Called by the Deployment step once the upgraded image has rolled out: moves a
/// RollingUpdate upgrade to Contracting and records `DeploymentRolloutComplete`. `false`,
/// and nothing changed, in any other phase; on `true` the caller sets DeploymentReady and
/// ends the pass with [`NEXT_PASS`] so the contract Job runs.
pub(crate) fn finish_rolling_update(pass: &mut Pass<'_>) -> bool {
    let phase = pass.keystone.status.as_ref().and_then(|s| s.upgrade_phase);
    if phase != Some(UpgradePhase::RollingUpdate) {
        return false;
    }
    let (installed, target) = releases(pass);
    pass.status_mut().upgrade_phase = Some(UpgradePhase::Contracting);
    let note = format!("Deployment rollout complete during upgrade {installed} → {target}");
    pass.event(EventType::Normal, "DeploymentRolloutComplete", &note);
    true
}

#[cfg(test)]
#[path = "database_upgrade_tests.rs"]
mod tests;
