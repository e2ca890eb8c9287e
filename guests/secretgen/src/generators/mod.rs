//! The value generators of spec.secrets, one module per generator type. Each produces the
//! bytes the Job stored (see "Behavior of the Job" in `gitlabsecrets-reconciler.txt`); the
//! planner decides whether it is called at all.

pub(crate) mod bytes;
pub(crate) mod rails;
pub(crate) mod random;
pub(crate) mod rsa;
pub(crate) mod ssh;
pub(crate) mod x509;

use crate::cert::CertError;
use crate::keys::KeyError;

/// Why a value could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A key could not be had from the key source.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A certificate could not be built.
    #[error(transparent)]
    Certificate(#[from] CertError),
    /// A key could not be encoded.
    #[error("encoding the {what} failed: {message}")]
    Encode { what: &'static str, message: String },
}

impl GenerateError {
    pub(crate) fn encode(what: &'static str, error: impl std::fmt::Display) -> Self {
        Self::Encode {
            what,
            message: error.to_string(),
        }
    }
}
