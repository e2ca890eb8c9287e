//! The planner's inputs and outputs, as plain Rust types that mirror the WIT `planner`
//! records one to one (`wit.rs` only converts). Objects and entries cross as JSON text, as
//! they do over WIT, so a native caller and a wasm caller hand the planner the same bytes.

use crate::certificates::CertificateError;
use crate::entries::EntryError;
use crate::generators::GenerateError;
use crate::keys::KeyError;
use crate::secret::SecretError;

/// One key to add and its value (WIT `entry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: Vec<u8>,
}

/// The inputs of [`plan`](crate::plan) for one Secret (WIT `secret-request`).
#[derive(Clone, Debug, Default)]
pub struct SecretRequest {
    /// The Secret's name.
    pub name: String,
    /// The JSON array of the spec.secrets entries that name this Secret, in spec order.
    pub entries: String,
    /// The JSON of the Secret, when it exists.
    pub existing: Option<String>,
    /// The readyUnits of the Secret's status entry.
    pub ready_units: Vec<String>,
    /// Whether values may be generated. Without it, a Secret that needs a generated value is
    /// reported as such and nothing is added.
    pub generate: bool,
}

/// The planned change to one Secret (WIT `secret-plan`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SecretPlan {
    /// The Secret's name.
    pub name: String,
    /// The type to create the Secret with (the declared one), or the one it keeps.
    pub secret_type: String,
    /// The keys to add, in declaration order; empty when nothing is added. A key of an
    /// existing Secret appears here only for `secrets.yml`, whose fields are filled in.
    pub add: Vec<Entry>,
    /// One line per reported unit or Secret; nothing is added when non-empty.
    pub reports: Vec<String>,
    /// The data-bearing units the entries declare, in declaration order.
    pub declared_units: Vec<String>,
    /// The readyUnits to store once `add` is written.
    pub next_ready_units: Vec<String>,
    /// `(existing, declared)` when the existing Secret has another type; it keeps its own.
    pub type_kept: Option<(String, String)>,
    /// Whether the Secret holds everything it declares once `add` is written.
    pub ready: bool,
}

/// What [`plan_certificates`](crate::plan_certificates) decided (WIT `certificate-action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// The inputs of [`plan_certificates`](crate::plan_certificates) (WIT `certificates-request`).
#[derive(Clone, Debug, Default)]
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificatesPlan {
    pub action: CertificateAction,
    /// The CA, TLS and chain Secrets, in that order.
    pub secrets: Vec<SecretPlan>,
}

/// A planner failure: the Secret (or set) is not written (WIT `plan-error`).
#[derive(Debug, thiserror::Error)]
#[error("{subject}: {cause}")]
pub struct PlanError {
    /// The Secret or certificate entry concerned.
    pub subject: String,
    /// What failed.
    #[source]
    pub cause: PlanFailure,
}

impl PlanError {
    pub(crate) fn new(subject: &str, cause: impl Into<PlanFailure>) -> Self {
        Self {
            subject: subject.to_owned(),
            cause: cause.into(),
        }
    }

    /// The WIT `message`: what failed and why.
    pub fn message(&self) -> String {
        self.cause.to_string()
    }
}

/// Why planning failed; one variant per failed step.
#[derive(Debug, thiserror::Error)]
pub enum PlanFailure {
    /// The entries (spec.secrets or spec.certificates) are malformed or invalid.
    #[error(transparent)]
    Entry(#[from] EntryError),
    /// An existing Secret's JSON could not be read.
    #[error(transparent)]
    Secret(#[from] SecretError),
    /// A key could not be generated.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A value could not be generated.
    #[error(transparent)]
    Generate(#[from] GenerateError),
    /// A certificate could not be issued.
    #[error(transparent)]
    Certificate(#[from] CertificateError),
}
