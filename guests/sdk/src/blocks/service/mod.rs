//! The steps a minimal OpenStack API service parent shares (facts §4: the Glance,
//! Barbican and Cinder of the satellite handshake), over the [`ServiceSpec`] they embed.
//! Each hands back what it found (a [`Waiting`] state, a connection hash, a database
//! state) for the parent to stamp with its own condition types.
//!
//! - [`credentials`]: the database and service-user credentials gate (SecretsReady).
//! - [`connection`]: the `{name}-db-connection` Secret the pods read
//!   `OS_DATABASE__CONNECTION` from.
//! - [`database`]: the managed MariaDB Database, User and Grant, and the schema sync Job.
//! - [`authtoken`]: the `[keystone_authtoken]` section.
//! - [`api`]: the API's Service and endpoint URL.

pub mod api;
pub mod authtoken;
pub mod connection;
pub mod credentials;
pub mod database;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Secret, Service as KubeService};

use crate::blocks::types::ServiceSpec;
use crate::cluster::{Cluster, Owner};
use crate::external::mariadb::{Database, Grant, User};
use crate::object::KindRef;

/// The kinds of child a minimal service parent writes: what its target watches and what
/// the deletion of a targeted one sweeps.
pub fn child_kinds() -> [KindRef; 7] {
    [
        KindRef::of::<Secret>(),
        KindRef::of::<Deployment>(),
        KindRef::of::<KubeService>(),
        KindRef::of::<Job>(),
        KindRef::of::<Database>(),
        KindRef::of::<User>(),
        KindRef::of::<Grant>(),
    ]
}

/// One service the shared steps work on.
#[derive(Clone, Copy)]
pub struct Service<'a> {
    /// The cluster the children live on.
    pub cluster: &'a dyn Cluster,
    /// The service CR, as the controller owner of every child.
    pub owner: &'a Owner,
    /// The CR's namespace and name.
    pub namespace: &'a str,
    pub name: &'a str,
    /// The service as messages name it (`Glance`), and its default user (`glance`).
    pub title: &'a str,
    pub default_user: &'a str,
    /// The CR's spec.
    pub spec: &'a ServiceSpec,
}

impl Service<'_> {
    /// `namespace/name` of an object in the service's namespace.
    pub fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.namespace)
    }
}

/// A state a step waits in: the reason and message of the parent's condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    pub reason: String,
    pub message: String,
}

impl Waiting {
    pub(crate) fn new(reason: &str, message: impl Into<String>) -> Self {
        Self {
            reason: reason.to_owned(),
            message: message.into(),
        }
    }
}

/// Why a service parent's step failed: every variant names what the step was doing.
/// The shared steps fail with it, and a parent's own steps use it too.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading, writing or deleting an object failed.
    #[error("{what}: {source}")]
    Cluster {
        /// What the step was doing (`listing GlanceBackends in ns`).
        what: String,
        #[source]
        source: crate::Error,
    },
    /// Probing whether the cluster serves a kind failed.
    #[error("probing the cluster for the {kind} kind: {source}")]
    Probe {
        kind: &'static str,
        #[source]
        source: crate::ApiError,
    },
    /// A credential check failed.
    #[error("{what}: {source}")]
    Secrets {
        what: String,
        #[source]
        source: crate::blocks::secrets::Error,
    },
    /// A MariaDB Database, User or Grant could not be ensured.
    #[error("{what}: {source}")]
    Provision {
        what: &'static str,
        #[source]
        source: crate::blocks::database::Error,
    },
    /// An immutable Secret could not be created.
    #[error("creating {what} Secret: {source}")]
    ImmutableSecret {
        what: &'static str,
        #[source]
        source: crate::blocks::config::secret::Error,
    },
    /// Old immutable Secrets could not be pruned.
    #[error("pruning {what} Secrets: {source}")]
    Prune {
        what: &'static str,
        #[source]
        source: Box<crate::blocks::config::prune::PruneError>,
    },
    /// A Deployment or Service could not be ensured.
    #[error("ensuring {what}: {source}")]
    Workload {
        what: &'static str,
        #[source]
        source: crate::blocks::deployment::Error,
    },
    /// A Job could not be run, or failed under its current pod template.
    #[error("{source}")]
    Job {
        #[source]
        source: crate::blocks::job::Error,
    },
}

impl Error {
    /// A [`Error::Cluster`] maker for `map_err`.
    pub fn cluster(what: String) -> impl FnOnce(crate::Error) -> Self {
        move |source| Self::Cluster { what, source }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
