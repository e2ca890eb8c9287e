//! Errors of cluster calls as a reconciler sees them.

pub use wasm_operator_types::error::ApiError;
use wasm_operator_types::error::MissingField;

/// A failed typed cluster call.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The cluster refused or failed the call.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// An object from the cluster did not decode into the expected type.
    #[error("cannot decode {what}: {source}")]
    Decode {
        /// The object (kind and key) that did not decode.
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// A value did not encode to JSON.
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// What was being encoded.
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// An object lacks a field the call needs.
    #[error("{what} has no {field}")]
    MissingField {
        /// The object concerned.
        what: String,
        /// The missing field's path, e.g. `metadata.name`.
        field: &'static str,
    },
}

/// The result of a typed cluster call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<MissingField> for Error {
    fn from(MissingField { what, field }: MissingField) -> Self {
        Self::MissingField { what, field }
    }
}
