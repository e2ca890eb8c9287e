//! Database (facts §4): the service's MariaDB database and its schema.
//!
//! | Case | Children | [`DatabaseState`] |
//! |---|---|---|
//! | managed, MariaDB `{clusterRef}` absent or not Ready | — | waiting `ClusterNotReady` "MariaDB cluster \"m\" is not ready" |
//! | managed, Database `{name}` not Ready | Database applied | waiting `WaitingForDatabase` "MariaDB Database CR is not ready" |
//! | managed Static, User or Grant `{name}` not Ready | User, Grant applied | waiting `WaitingForDatabase` "MariaDB User or Grant CR is not ready" |
//! | `{name}-db-sync` running | Job created | waiting `DBSyncInProgress` "db_sync job is running" |
//! | `{name}-db-sync` failed | — | failed `DBSyncFailed` "db_sync job failed: …" |
//! | complete | — | synced |
//!
//! A brownfield database (`host`) provisions nothing and starts at the Job; a Dynamic one
//! provisions no User or Grant. The Job runs the service's sync command on its image with
//! the connection from [`super::connection`]; a new image is a new pod template, so a new
//! release syncs again.

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::connection::connection_env;
use super::{Error, Service, Waiting};
use crate::ClusterExt;
use crate::blocks::database::{ManagedDatabase, ensure_database, ensure_database_user};
use crate::blocks::job::run_job;
use crate::external::mariadb::MariaDb;
use crate::external::status_ready;

/// How often the sync pod is retried before the Job fails.
const SYNC_BACKOFF_LIMIT: i32 = 4;

/// Where the database stands.
#[derive(Debug)]
pub enum DatabaseState {
    /// The schema is synced.
    Synced,
    /// Waiting for the server, the objects, or the sync Job.
    Waiting(Waiting),
    /// The sync Job failed under its current pod template: the condition to set, and the
    /// error the pass fails with.
    Failed(Waiting, crate::blocks::job::Error),
}

/// `{name}-db-sync`: `command` on the service's image.
pub fn sync_job(service: &Service<'_>, command: &[&str]) -> Job {
    Job {
        metadata: ObjectMeta {
            name: Some(format!("{}-db-sync", service.name)),
            namespace: Some(service.namespace.to_owned()),
            ..Default::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(SYNC_BACKOFF_LIMIT),
            template: PodTemplateSpec {
                metadata: None,
                spec: Some(PodSpec {
                    restart_policy: Some("OnFailure".into()),
                    containers: vec![Container {
                        name: "db-sync".into(),
                        image: Some(service.spec.image.reference()),
                        command: Some(command.iter().map(|c| (*c).to_owned()).collect()),
                        env: Some(vec![connection_env(service.name)]),
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

/// The managed database's gate and children; `None` once all are Ready (at once for a
/// brownfield database).
fn provision(service: &Service<'_>) -> Result<Option<Waiting>, Error> {
    let spec = &service.spec.database;
    let Some(cluster_ref) = &spec.cluster_ref else {
        return Ok(None);
    };
    let cluster = &cluster_ref.name;
    let server = service
        .cluster
        .get_typed::<MariaDb>(Some(service.namespace), cluster)
        .map_err(|source| Error::Cluster {
            what: format!("getting MariaDB {}", service.key(cluster)),
            source,
        })?;
    if !status_ready(server.and_then(|s| s.status).as_ref()) {
        let message = format!("MariaDB cluster {cluster:?} is not ready");
        return Ok(Some(Waiting::new("ClusterNotReady", message)));
    }
    let managed = ManagedDatabase {
        namespace: service.namespace,
        name: service.name,
        cluster,
        database: &spec.database,
        password_secret: &spec.secret_ref.name,
    };
    let ready =
        ensure_database(service.cluster, service.owner, &managed.database()).map_err(|source| {
            Error::Provision {
                what: "ensuring Database",
                source,
            }
        })?;
    if !ready {
        return Ok(Some(Waiting::new(
            "WaitingForDatabase",
            "MariaDB Database CR is not ready",
        )));
    }
    if spec.is_dynamic() {
        return Ok(None);
    }
    let (user, grant) = managed.user_and_grant();
    let ready =
        ensure_database_user(service.cluster, service.owner, &user, &grant).map_err(|source| {
            Error::Provision {
                what: "ensuring database user",
                source,
            }
        })?;
    if !ready {
        return Ok(Some(Waiting::new(
            "WaitingForDatabase",
            "MariaDB User or Grant CR is not ready",
        )));
    }
    Ok(None)
}

/// Provisions the database and syncs its schema with `command`.
pub fn ensure(service: &Service<'_>, command: &[&str]) -> Result<DatabaseState, Error> {
    if let Some(waiting) = provision(service)? {
        return Ok(DatabaseState::Waiting(waiting));
    }
    let job = sync_job(service, command);
    Ok(match run_job(service.cluster, service.owner, &job) {
        Err(source) => DatabaseState::Failed(
            Waiting::new("DBSyncFailed", format!("db_sync job failed: {source}")),
            source,
        ),
        Ok(false) => {
            DatabaseState::Waiting(Waiting::new("DBSyncInProgress", "db_sync job is running"))
        }
        Ok(true) => DatabaseState::Synced,
    })
}
