//! Why a pass failed.

/// A pass's failure, naming the object and what was being done.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading, writing or deleting a child failed.
    #[error("{what}: {source}")]
    Cluster {
        /// What the pass was doing (`deleting Certificate ns/ks-db-client`).
        what: String,
        #[source]
        source: wasm_operator_sdk::Error,
    },
    /// Probing whether the cluster serves a kind failed.
    #[error("probing the target cluster for the {kind} kind: {source}")]
    Probe {
        kind: &'static str,
        #[source]
        source: wasm_operator_sdk::ApiError,
    },
    /// A cert-manager Certificate could not be ensured.
    #[error("ensuring database client Certificate {what}: {source}")]
    Certificate {
        what: String,
        #[source]
        source: wasm_operator_sdk::blocks::tls::Error,
    },
    /// The Deployment, Service or PodDisruptionBudget could not be ensured.
    #[error("ensuring {what}: {source}")]
    Workload {
        what: &'static str,
        #[source]
        source: wasm_operator_sdk::blocks::deployment::Error,
    },
    /// A secret store or credential check failed.
    #[error("{what}: {source}")]
    Secrets {
        what: String,
        #[source]
        source: wasm_operator_sdk::blocks::secrets::Error,
    },
    /// A staged key or password rotation could not be committed.
    #[error("{what}: {source}")]
    Rotation {
        what: String,
        #[source]
        source: wasm_operator_sdk::blocks::secrets::rotation::RotationError,
    },
    /// An immutable ConfigMap could not be created.
    #[error("{what}: {source}")]
    ConfigMap {
        what: String,
        #[source]
        source: wasm_operator_sdk::blocks::config::configmap::Error,
    },
    /// A Job or CronJob could not be run or ensured.
    #[error("{what}: {source}")]
    Job {
        what: String,
        #[source]
        source: wasm_operator_sdk::blocks::job::Error,
    },
    /// The policy ConfigMap `spec.policyOverrides.configMapRef` names could not be loaded.
    #[error("loading the policy overrides: {source}")]
    Policy {
        #[source]
        source: wasm_operator_sdk::blocks::policy::Error,
    },
    /// The configuration files could not be rendered.
    #[error("rendering the configuration: {source}")]
    Render {
        #[source]
        source: crate::config::ConfigError,
    },
    /// The spec cannot be acted on as it stands (a bypassed admission).
    #[error("{0}")]
    Spec(String),
}

impl Error {
    /// A [`Error::Cluster`] for `what`.
    pub(crate) fn cluster(
        what: impl Into<String>,
    ) -> impl FnOnce(wasm_operator_sdk::Error) -> Self {
        let what = what.into();
        move |source| Self::Cluster { what, source }
    }
}
