//! Why a pass failed. Each names what was being done; none holds a secret: identity
//! errors carry the call and its HTTP status, never a response body.

use crate::identity;

/// A failed pass.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A call to the cluster failed.
    #[error("{what}: {source}")]
    Cluster {
        /// What was being done, naming the object.
        what: String,
        #[source]
        source: wasm_operator_sdk::Error,
    },
    /// The target cluster the Keystone's children live on could not be opened.
    #[error("opening target cluster {target:?} of Keystone {keystone}: {source}")]
    Target {
        /// `namespace/name` of the Keystone.
        keystone: String,
        target: String,
        #[source]
        source: wasm_operator_sdk::TargetError,
    },
    /// A call to the Keystone identity API failed; the condition it set carries the same
    /// text.
    #[error("{what}: {source}")]
    Identity {
        /// What was being done, naming the Keystone object.
        what: String,
        #[source]
        source: identity::Error,
    },
}

impl Error {
    /// A constructor for `map_err` on a cluster call doing `what`.
    pub(crate) fn cluster<E: Into<wasm_operator_sdk::Error>>(
        what: impl Into<String>,
    ) -> impl FnOnce(E) -> Self {
        let what = what.into();
        move |source| Self::Cluster {
            what,
            source: source.into(),
        }
    }
}
