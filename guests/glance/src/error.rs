//! Why a pass failed: every variant names what the pass was doing.

/// A failed pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading, writing or deleting an object failed.
    #[error("{what}: {source}")]
    Cluster {
        /// What the pass was doing (`listing GlanceBackends in ns`).
        what: String,
        #[source]
        source: wasm_operator_sdk::Error,
    },
    /// Probing whether the cluster serves a kind failed.
    #[error("probing the cluster for the {kind} kind: {source}")]
    Probe {
        kind: &'static str,
        #[source]
        source: wasm_operator_sdk::ApiError,
    },
    /// A shared service step (credentials, connection, database) failed.
    #[error(transparent)]
    Service(wasm_operator_sdk::blocks::service::Error),
    /// An immutable Secret could not be created.
    #[error("creating {what} Secret: {source}")]
    ImmutableSecret {
        what: &'static str,
        #[source]
        source: wasm_operator_sdk::blocks::config::secret::Error,
    },
    /// Old immutable Secrets could not be pruned.
    #[error("pruning {what} Secrets: {source}")]
    Prune {
        what: &'static str,
        #[source]
        source: Box<wasm_operator_sdk::blocks::config::prune::PruneError>,
    },
    /// The Deployment or Service could not be ensured.
    #[error("ensuring {what}: {source}")]
    Workload {
        what: &'static str,
        #[source]
        source: wasm_operator_sdk::blocks::deployment::Error,
    },
    /// The db-sync Job could not be run, or failed under its current pod template.
    #[error("{source}")]
    Job {
        #[source]
        source: wasm_operator_sdk::blocks::job::Error,
    },
}

impl From<wasm_operator_sdk::blocks::service::Error> for Error {
    fn from(error: wasm_operator_sdk::blocks::service::Error) -> Self {
        Self::Service(error)
    }
}

impl Error {
    /// A [`Error::Cluster`] maker for `map_err`.
    pub(crate) fn cluster(what: String) -> impl FnOnce(wasm_operator_sdk::Error) -> Self {
        move |source| Self::Cluster { what, source }
    }
}
