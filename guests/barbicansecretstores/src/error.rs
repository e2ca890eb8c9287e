//! Why a pass failed. Each names what was being done and the object; none holds a secret
//! (Secret values are read into the pass, never into an error; OpenBao's failures become
//! conditions, not errors).

use wasm_operator_sdk::blocks::{satellite, secrets};

/// A failed pass.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// Reading the parent Barbican, its Deployment or the Secret it mounts failed (the
    /// satellite helpers name the object).
    #[error(transparent)]
    Satellite(#[from] satellite::Error),
    /// Reading a Secret the store names failed (other than NotFound).
    #[error("reading key {key:?} of Secret {secret}: {source}")]
    Secret {
        /// The data key.
        key: String,
        /// `namespace/name` of the Secret.
        secret: String,
        #[source]
        source: Box<secrets::Error>,
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
