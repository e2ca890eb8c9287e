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
    /// The admin password Secret holds an empty `password`.
    #[error("admin password Secret {secret} has an empty \"password\" value")]
    EmptyAdminPassword {
        /// `namespace/name` of the Secret.
        secret: String,
    },
    /// A staged key or password rotation could not be committed (boxed: the SDK's error
    /// is several times the size of the others).
    #[error("{what}: {source}")]
    Rotation {
        what: String,
        #[source]
        source: Box<wasm_operator_sdk::blocks::secrets::rotation::RotationError>,
    },
    /// An immutable ConfigMap could not be created.
    #[error("{what}: {source}")]
    ConfigMap {
        what: String,
        #[source]
        source: wasm_operator_sdk::blocks::config::configmap::Error,
    },
    /// An immutable, content-hashed Secret (the domains projection) could not be created.
    #[error("{what}: {source}")]
    ImmutableSecret {
        what: String,
        #[source]
        source: wasm_operator_sdk::blocks::config::secret::Error,
    },
    /// Superseded immutable ConfigMaps or Secrets could not be listed or deleted (boxed:
    /// the SDK's error is several times the size of the others).
    #[error("{what}: {source}")]
    Prune {
        what: String,
        #[source]
        source: Box<wasm_operator_sdk::blocks::config::PruneError>,
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
    /// An optional child (the NetworkPolicy, the database client Certificate, the policy
    /// validation Job) could not be applied or deleted.
    #[error(transparent)]
    Optional(#[from] wasm_operator_sdk::blocks::optional::Error),
    /// The spec cannot be acted on as it stands (a bypassed admission).
    #[error("{0}")]
    Spec(String),
    /// A MariaDB Database, User or Grant could not be applied.
    #[error("{what}: {source}")]
    Provision {
        /// What the pass was doing (`ensuring Database`).
        what: &'static str,
        #[source]
        source: wasm_operator_sdk::blocks::database::Error,
    },
    /// The SAML service provider's keypair could not be generated, or its self-signed
    /// certificate built.
    #[error("{what}: {source}")]
    SpKeypair {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A run-once Job could not be run, or failed permanently.
    #[error("{what}: {source}")]
    Job {
        /// What the Job does (`running db_sync`).
        what: String,
        #[source]
        source: wasm_operator_sdk::blocks::job::Error,
    },
    /// A database upgrade between releases cannot go on.
    #[error(transparent)]
    Upgrade(#[from] UpgradeError),
    /// A step needs a value an earlier step of the pass sets, and that step did not run.
    #[error("step {step} needs {value}, which an earlier step sets; it did not run in this pass")]
    StepOrder {
        step: &'static str,
        value: &'static str,
    },
}

/// Why a database upgrade between releases cannot go on (facts §2.14).
#[derive(Debug, thiserror::Error)]
pub enum UpgradeError {
    /// `status.installedRelease` is not a release name.
    #[error("parse installed release {tag:?}: {source}")]
    InstalledRelease {
        tag: String,
        #[source]
        source: crate::release::ParseError,
    },
    /// `spec.image.tag` is not a release name.
    #[error("parse target release {tag:?}: {source}")]
    TargetRelease {
        tag: String,
        #[source]
        source: crate::release::ParseError,
    },
    /// `spec.image.tag` names an earlier release than the installed one.
    #[error("downgrade from {from} to {to} is not supported")]
    Downgrade { from: String, to: String },
    /// `spec.image.tag` skips a release.
    #[error(
        "upgrade from {from} to {to} is not sequential; only sequential upgrades are supported"
    )]
    NotSequential { from: String, to: String },
    /// `spec.image.tag` changed to a third release while an upgrade runs.
    #[error(
        "image tag changed during active upgrade: current upgrade targets {target} but \
         spec.image.tag is {tag}"
    )]
    TargetChanged { target: String, tag: String },
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
