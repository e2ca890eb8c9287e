//! The GitLabSecrets planner's interface in Rust types: the records of the WIT `planner`
//! interface one to one, and the [`Planner`] trait.
//!
//! secretgen implements the planning and exports it as the `planner` component; a
//! reconciler plans through [`Planner`] — over the `planner` import inside wasm (the SDK's
//! `WitPlanner`), over the secretgen crate natively. Objects and entries cross as JSON text,
//! as they do over WIT, so both callers hand the planner the same bytes.
//!
//! [`entries`] is what that JSON holds: the spec.secrets and spec.certificates entries of a
//! GitLabSecrets, declared once for the reconciler (and its CRD) and the planner.

pub mod entries;

/// One key to add and its value (WIT `entry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: Vec<u8>,
}

/// The inputs of [`Planner::plan`] for one Secret (WIT `secret-request`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SecretRequest {
    /// The Secret's name.
    pub name: String,
    /// The JSON array of the spec.secrets entries that name this Secret, in spec order.
    pub entries: String,
    /// The JSON of the Secret, when it exists.
    pub existing: Option<String>,
    /// The readyUnits of the Secret's status entry.
    pub ready_units: Vec<String>,
    /// Whether values may be generated; without it, a Secret that needs generating is
    /// reported as such and nothing is added.
    pub generate: bool,
}

/// The planned change to one Secret (WIT `secret-plan`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretPlan {
    /// The Secret's name.
    pub name: String,
    /// The type to create the Secret with (the declared one), or the one it keeps.
    pub secret_type: String,
    /// The keys to add, in declaration order; empty when nothing is added.
    pub add: Vec<Entry>,
    /// One line per reported unit or Secret; nothing is added when non-empty.
    pub reports: Vec<String>,
    /// The data-bearing units the entries declare.
    pub declared_units: Vec<String>,
    /// The readyUnits to store after the write succeeds.
    pub next_ready_units: Vec<String>,
    /// `(existing, declared)` when the existing Secret has another type; it keeps its own.
    pub type_kept: Option<(String, String)>,
    /// Whether the Secret holds everything it declares once `add` is written.
    pub ready: bool,
}

/// What [`Planner::plan_certificates`] decided (WIT `certificate-action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertificateAction {
    /// Every Secret of the set is complete: nothing to do.
    None,
    /// A new CA and wildcard certificate are issued (or would be, without `generate`).
    Issue,
    /// The chain is derived from the CA certificate and tls.crt.
    DeriveChain,
    /// The set is reported; nothing is added.
    Report,
}

/// The inputs of [`Planner::plan_certificates`] (WIT `certificates-request`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct CertificatesRequest {
    /// The JSON of the spec.certificates entry.
    pub certificate: String,
    /// The JSON of the CA Secret, when it exists.
    pub ca_secret: Option<String>,
    /// The JSON of the TLS Secret, when it exists.
    pub tls_secret: Option<String>,
    /// The JSON of the chain Secret, when it exists.
    pub chain_secret: Option<String>,
    /// The readyUnits of the TLS Secret's status entry.
    pub ready_units: Vec<String>,
    /// Whether a new set may be issued.
    pub generate: bool,
}

/// The plan for a certificate set (WIT `certificates-plan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificatesPlan {
    pub action: CertificateAction,
    /// The CA, TLS and chain Secrets, in that order.
    pub secrets: Vec<SecretPlan>,
}

/// A planner failure: the Secret (or set) is not written (WIT `plan-error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{subject}: {message}")]
pub struct PlanError {
    /// The Secret or certificate entry concerned.
    pub subject: String,
    /// What failed and why.
    pub message: String,
}

/// The planner: the WIT `planner` interface in Rust types.
pub trait Planner {
    /// Plans the keys to add to one Secret.
    fn plan(&self, request: &SecretRequest) -> Result<SecretPlan, PlanError>;

    /// Plans the CA, TLS and chain Secrets of one certificate entry together.
    fn plan_certificates(
        &self,
        request: &CertificatesRequest,
    ) -> Result<CertificatesPlan, PlanError>;
}
