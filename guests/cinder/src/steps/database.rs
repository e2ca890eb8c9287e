//! Database (facts §4): the MariaDB database the image catalogue lives in, and its schema.
//!
//! | Case | Children | DatabaseReady | Pass |
//! |---|---|---|---|
//! | managed, MariaDB `{clusterRef}` absent or not Ready | — | False `ClusterNotReady` "MariaDB cluster \"m\" is not ready" | 30 s |
//! | managed, Database `{name}` not Ready | Database applied | False `WaitingForDatabase` "MariaDB Database CR is not ready" | 30 s |
//! | managed Static, User or Grant `{name}` not Ready | User, Grant applied | False `WaitingForDatabase` "MariaDB User or Grant CR is not ready" | 30 s |
//! | `{name}-db-sync` running | Job created | False `DBSyncInProgress` "db_sync job is running" | 30 s |
//! | `{name}-db-sync` failed | — | False `DBSyncFailed` "db_sync job failed: …", Warning event | error |
//! | complete | installedRelease = spec.openStackRelease | True `DatabaseSynced` "Database schema is up to date" | goes on |
//!
//! A brownfield database (`host`) provisions nothing and starts at the Job; a Dynamic one
//! provisions no User or Grant.
//!
//! DECISION: no upgrade flow (expand/migrate/contract) and no schema check: a new
//! release re-runs the plain `cinder-manage db sync` (the Job's re-run key is its pod
//! template, which carries the image).

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Container, EnvVar, EnvVarSource, PodSpec, PodTemplateSpec, SecretKeySelector,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::blocks::database::{ManagedDatabase, ensure_database, ensure_database_user};
use wasm_operator_sdk::blocks::job::run_job;
use wasm_operator_sdk::external::mariadb::MariaDb;
use wasm_operator_sdk::external::status_ready;
use wasm_operator_sdk::{ClusterExt, EventType};

use crate::conditions::DATABASE_READY;
use crate::error::Error;
use crate::pass::{DATABASE_POLLING, Pass, StepResult};
use crate::steps::db_connection::{CONNECTION_KEY, secret_name};

/// How often the db-sync pod is retried before the Job fails.
const SYNC_BACKOFF_LIMIT: i32 = 4;

fn metadata(pass: &Pass<'_>, name: String) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(pass.namespace().to_owned()),
        ..Default::default()
    }
}

fn waiting(pass: &mut Pass<'_>, reason: &str, message: &str) -> StepResult {
    pass.condition(DATABASE_READY, false, reason, message);
    Ok(Some(DATABASE_POLLING))
}

/// The managed database's gate and children; `Ok(None)` once all are Ready (at once for
/// a brownfield database).
fn provision(pass: &mut Pass<'_>) -> StepResult {
    let spec = pass.cinder.spec.database.clone();
    let Some(cluster_ref) = spec.cluster_ref.clone() else {
        return Ok(None);
    };
    let cluster = cluster_ref.name;
    let what = format!("getting MariaDB {}", pass.key(&cluster));
    let server = pass
        .cluster
        .get_typed::<MariaDb>(Some(pass.namespace()), &cluster)
        .map_err(Error::cluster(what))?;
    if !status_ready(server.and_then(|s| s.status).as_ref()) {
        let message = format!("MariaDB cluster {cluster:?} is not ready");
        return waiting(pass, "ClusterNotReady", &message);
    }
    let name = pass.name().to_owned();
    let managed = ManagedDatabase {
        namespace: pass.namespace(),
        name: &name,
        cluster: &cluster,
        database: &spec.database,
        password_secret: &spec.secret_ref.name,
    };
    let database = managed.database();
    let (user, grant) = managed.user_and_grant();
    let ready = ensure_database(pass.cluster, &pass.owner, &database).map_err(|source| {
        Error::Provision {
            what: "ensuring Database",
            source,
        }
    })?;
    if !ready {
        return waiting(
            pass,
            "WaitingForDatabase",
            "MariaDB Database CR is not ready",
        );
    }
    if spec.is_dynamic() {
        return Ok(None);
    }
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

/// `OS_DATABASE__CONNECTION` from the connection Secret.
pub(crate) fn connection_env(cinder: &str) -> EnvVar {
    EnvVar {
        name: "OS_DATABASE__CONNECTION".into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret_name(cinder),
                key: CONNECTION_KEY.into(),
                optional: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `{name}-db-sync`: `cinder-manage db sync` on `spec.image`.
pub(crate) fn db_sync_job(pass: &Pass<'_>) -> Job {
    let name = format!("{}-db-sync", pass.name());
    Job {
        metadata: metadata(pass, name),
        spec: Some(JobSpec {
            backoff_limit: Some(SYNC_BACKOFF_LIMIT),
            template: PodTemplateSpec {
                metadata: None,
                spec: Some(PodSpec {
                    restart_policy: Some("OnFailure".into()),
                    containers: vec![Container {
                        name: "db-sync".into(),
                        image: Some(pass.cinder.spec.image.reference()),
                        command: Some(vec!["cinder-manage".into(), "db".into(), "sync".into()]),
                        env: Some(vec![connection_env(pass.name())]),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    }
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    if let Some(wait) = provision(pass)? {
        return Ok(Some(wait));
    }
    let job = db_sync_job(pass);
    match run_job(pass.cluster, &pass.owner, &job) {
        Err(source) => {
            let message = format!("db_sync job failed: {source}");
            pass.condition(DATABASE_READY, false, "DBSyncFailed", &message);
            pass.event(EventType::Warning, "DBSyncFailed", &message);
            return Err(Error::Job { source });
        }
        Ok(false) => return waiting(pass, "DBSyncInProgress", "db_sync job is running"),
        Ok(true) => {}
    }
    let release = pass.cinder.spec.open_stack_release.clone();
    pass.status_mut().installed_release = release;
    pass.condition(
        DATABASE_READY,
        true,
        "DatabaseSynced",
        "Database schema is up to date",
    );
    Ok(None)
}

#[cfg(test)]
#[path = "database_tests.rs"]
mod tests;
