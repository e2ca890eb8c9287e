//! Secrets, External Secrets and their stores.
//!
//! - [`secret`]: [`is_secret_ready`], [`get_secret_value`].
//! - [`rotation`]: [`commit_staged_rotation`] — committing a rotation CronJob's staged
//!   keys or password onto the Secret in use.
//! - [`credentials`]: [`credential_gate`] — a Secret with its keys, or why not yet (from
//!   its ExternalSecret).
//! - [`cephx`]: [`cephx_key_gate`] — the same gate for a Ceph key, whose value must also
//!   be a cephx key ([`cephx_key_fault`]).
//! - [`external`]: [`wait_for_external_secret`] (tri-state), [`ensure_push_secret`].
//! - [`store`]: the per-CR secret store selection: [`effective_store_ref`], the readiness
//!   checks, [`gate_store_ready`], the ESO store refs, and the watches and permissions a
//!   plugin declares in `describe()` for the stores it may select.

pub mod cephx;
pub mod credentials;
pub mod external;
pub mod rotation;
pub mod secret;
pub mod store;

pub use cephx::{CephxFault, cephx_key_fault, cephx_key_gate};
pub use credentials::{CredentialGate, GateOutcome, Waiting, credential_gate, waiting_outcome};
pub use external::{ExternalSecretState, ensure_push_secret, wait_for_external_secret};
pub use rotation::{Rotation, RotationError, StagedRotation, commit_staged_rotation};
pub use secret::{get_secret_value, is_secret_ready};
pub use store::{
    SecretStoreRefSpec, effective_store_ref, eso_secret_store_ref, gate_store_ready,
    is_cluster_secret_store_ready, is_secret_store_ready, is_store_ref_ready,
    push_secret_store_refs, store_permissions, store_watches,
};

/// Why a secrets call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading an object failed.
    #[error("getting {what}: {source}")]
    Get {
        what: String,
        #[source]
        source: crate::Error,
    },
    /// The Secret does not exist.
    #[error("getting Secret {namespace}/{name}: not found")]
    SecretNotFound { namespace: String, name: String },
    /// The Secret exists but lacks the data key (`ErrKeyNotFound`).
    #[error("key not found in Secret: key {key:?} in Secret {namespace}/{name}")]
    KeyNotFound {
        key: String,
        namespace: String,
        name: String,
    },
    /// The value of the data key is not UTF-8 text.
    #[error("key {key:?} in Secret {namespace}/{name} is not UTF-8 text")]
    NotText {
        key: String,
        namespace: String,
        name: String,
    },
    /// A store reference names a kind that is neither SecretStore nor ClusterSecretStore.
    #[error("unknown secret store kind {kind:?} (want SecretStore or ClusterSecretStore)")]
    UnknownStoreKind { kind: String },
    /// Applying a PushSecret failed.
    #[error("applying {what}: {source}")]
    Apply {
        what: String,
        #[source]
        source: crate::Error,
    },
}

impl Error {
    /// Whether the data key was missing (`errors.Is(err, secrets.ErrKeyNotFound)`).
    pub fn is_key_not_found(&self) -> bool {
        matches!(self, Self::KeyNotFound { .. })
    }

    /// Whether the object read was missing (`apierrors.IsNotFound`).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::SecretNotFound { .. })
    }
}
