//! Why a pass failed. Each names what was being done and the object; none holds a secret
//! (the RBD key gate reads the key's shape, and says only which rule it breaks).

use wasm_operator_sdk::blocks::{satellite, secrets};

/// A failed pass.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// Reading the parent Cinder failed (the satellite helper names the object).
    #[error(transparent)]
    Satellite(#[from] satellite::Error),
    /// Reading the RBD key Secret or its ExternalSecret failed.
    #[error("checking the RBD key of CinderBackupBackend {target}: {source}")]
    Credentials {
        /// `namespace/name` of the target.
        target: String,
        #[source]
        source: secrets::Error,
    },
    /// A call to the cluster failed.
    #[error("{what}: {source}")]
    Cluster {
        /// What was being done, naming the object.
        what: String,
        #[source]
        source: wasm_operator_sdk::Error,
    },
}
