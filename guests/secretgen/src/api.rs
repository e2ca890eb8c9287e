//! The planner's inputs and outputs: the records of the WIT `planner` interface (shared with
//! reconcilers through `wasm-operator-planner`; `wit.rs` only converts), and the planner's
//! own typed error.

use crate::certificates::CertificateError;
use crate::entries::EntryError;
use crate::generators::GenerateError;
use crate::keys::KeyError;
use crate::secret::SecretError;

pub use wasm_operator_planner::{
    CertificateAction, CertificatesPlan, CertificatesRequest, Entry, SecretPlan, SecretRequest,
};

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
