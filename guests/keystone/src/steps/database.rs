//! Step 7 — Database (facts §2.14): the MariaDB database Keystone keeps its state in, and
//! its schema at the release of `spec.image.tag`.
//!
//! | Case | Children | DatabaseReady | Pass |
//! |---|---|---|---|
//! | managed, MariaDB `{clusterRef}` absent or not Ready | — | False `ClusterNotReady` | 30 s |
//! | managed, Database `{name}` not Ready | Database applied | False `WaitingForDatabase` | 30 s |
//! | managed Static, User or Grant `{name}` not Ready | User, Grant applied | False `WaitingForDatabase` | 30 s |
//! | an upgrade runs, or the tag names a later release | upgrade Jobs ([`super::database_upgrade`]) | its reasons | |
//! | `{name}-db-sync` running | Job created | False `DBSyncInProgress` | 30 s |
//! | `{name}-db-sync` failed | — | False `DBSyncFailed`, Warning event | error |
//! | `{name}-schema-check` running | Job created | False `SchemaCheckInProgress` | 30 s |
//! | `{name}-schema-check` failed | — | False `SchemaDriftDetected`, Warning event | error |
//! | both complete | installedRelease = tag (when one is set) | True `DatabaseSynced`, Normal event | goes on |
//!
//! A brownfield database (`host`) provisions nothing and starts at the Jobs; a Dynamic one
//! provisions no User or Grant (the secrets engine issues the users). A failed apply or
//! read stops the pass with the error and leaves the condition as it was.

use k8s_openapi::api::batch::v1::Job;
use wasm_operator_sdk::blocks::database::{ManagedDatabase, ensure_database, ensure_database_user};
use wasm_operator_sdk::blocks::job::run_job;
use wasm_operator_sdk::external::mariadb::{Database, Grant, MariaDb, User};
use wasm_operator_sdk::external::status_ready;
use wasm_operator_sdk::{ClusterExt, EventType};

use crate::conditions::DATABASE_READY;
use crate::db_jobs;
use crate::error::Error;
use crate::pass::{DATABASE_POLLING, Pass, StepResult};
use crate::steps::database_upgrade;

/// The managed objects of the Keystone's database on MariaDB `cluster`.
fn managed<'a>(pass: &'a Pass<'_>, cluster: &'a str) -> ManagedDatabase<'a> {
    let database = &pass.keystone.spec.database;
    ManagedDatabase {
        namespace: pass.namespace(),
        name: pass.name(),
        cluster,
        database: &database.database,
        password_secret: &database.secret_ref.name,
    }
}

/// Database `{name}` on MariaDB `cluster`.
pub(crate) fn database(pass: &Pass<'_>, cluster: &str) -> Database {
    managed(pass, cluster).database()
}

/// User `{name}` with the password of `secretRef`, and Grant `{name}` of all privileges on
/// the database's tables to it.
pub(crate) fn user_and_grant(pass: &Pass<'_>, cluster: &str) -> (User, Grant) {
    managed(pass, cluster).user_and_grant()
}

fn waiting(pass: &mut Pass<'_>, reason: &str, message: &str) -> StepResult {
    pass.condition(DATABASE_READY, false, reason, message);
    Ok(Some(DATABASE_POLLING))
}

/// The managed database's gate and children; `Ok(None)` once all are Ready (at once for
/// a brownfield database).
fn provision(pass: &mut Pass<'_>) -> StepResult {
    let Some(cluster_ref) = pass.keystone.spec.database.cluster_ref.clone() else {
        return Ok(None);
    };
    let cluster = cluster_ref.name;
    let what = format!(
        "checking MariaDB cluster readiness: getting MariaDB {}",
        pass.key(&cluster)
    );
    let server = pass
        .cluster
        .get_typed::<MariaDb>(Some(pass.namespace()), &cluster)
        .map_err(Error::cluster(what))?;
    if !status_ready(server.and_then(|s| s.status).as_ref()) {
        let message = format!("MariaDB cluster {cluster:?} is not ready");
        return waiting(pass, "ClusterNotReady", &message);
    }
    let ready = ensure_database(pass.cluster, &pass.owner, &database(pass, &cluster)).map_err(
        |source| Error::Provision {
            what: "ensuring Database",
            source,
        },
    )?;
    if !ready {
        return waiting(
            pass,
            "WaitingForDatabase",
            "MariaDB Database CR is not ready",
        );
    }
    if pass.keystone.spec.database.is_dynamic() {
        return Ok(None);
    }
    let (user, grant) = user_and_grant(pass, &cluster);
    let ready =
        ensure_database_user(pass.cluster, &pass.owner, &user, &grant).map_err(|source| {
            Error::Provision {
                what: "ensuring database user",
                source,
            }
        })?;
    if !ready {
        return waiting(
            pass,
            "WaitingForDatabase",
            "MariaDB User or Grant CR is not ready",
        );
    }
    Ok(None)
}

/// One Job of the normal sync: how it is named in messages and the reasons it sets.
struct SyncJob {
    /// `db_sync`, `schema-check`.
    label: &'static str,
    failed: &'static str,
    running: &'static str,
}

/// Runs `job`; `Ok(None)` once it completed.
fn run_sync_job(pass: &mut Pass<'_>, job: &Job, sync: &SyncJob) -> StepResult {
    match run_job(pass.cluster, &pass.owner, job) {
        Err(source) => {
            let message = format!("{} job failed: {source}", sync.label);
            pass.condition(DATABASE_READY, false, sync.failed, &message);
            pass.event(EventType::Warning, sync.failed, &message);
            Err(Error::Job {
                what: format!("running {}", sync.label),
                source,
            })
        }
        Ok(false) => {
            let message = format!("{} job is running", sync.label);
            waiting(pass, sync.running, &message)
        }
        Ok(true) => Ok(None),
    }
}

/// `{name}-db-sync`, then `{name}-schema-check`, then the release is installed.
fn sync(pass: &mut Pass<'_>) -> StepResult {
    let db_sync = SyncJob {
        label: "db_sync",
        failed: "DBSyncFailed",
        running: "DBSyncInProgress",
    };
    let job = db_jobs::db_sync_job(pass)?;
    if let Some(wait) = run_sync_job(pass, &job, &db_sync)? {
        return Ok(Some(wait));
    }
    let schema_check = SyncJob {
        label: "schema-check",
        failed: "SchemaDriftDetected",
        running: "SchemaCheckInProgress",
    };
    let job = db_jobs::schema_check_job(pass)?;
    if let Some(wait) = run_sync_job(pass, &job, &schema_check)? {
        return Ok(Some(wait));
    }
    let tag = pass.keystone.spec.image.tag.clone();
    if !tag.is_empty() {
        pass.status_mut().installed_release = tag;
    }
    let synced_before = pass
        .conditions_of(DATABASE_READY)
        .is_some_and(|c| c.status == "True" && c.reason == "DatabaseSynced");
    pass.condition(
        DATABASE_READY,
        true,
        "DatabaseSynced",
        "Database schema is up to date (revision verified)",
    );
    // Once per sync, not on every pass that finds the schema current.
    if !synced_before {
        pass.event(
            EventType::Normal,
            "DatabaseSynced",
            "Database schema is up to date",
        );
    }
    Ok(None)
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    if let Some(wait) = provision(pass)? {
        return Ok(Some(wait));
    }
    let status = pass.keystone.status.clone().unwrap_or_default();
    if status.upgrade_phase.is_some() {
        return database_upgrade::reconcile(pass);
    }
    if database_upgrade::is_upgrade(&pass.keystone.spec.image.tag, &status.installed_release) {
        return database_upgrade::initiate(pass);
    }
    sync(pass)
}

#[cfg(test)]
#[path = "database_tests.rs"]
mod tests;
