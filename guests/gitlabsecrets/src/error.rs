//! What can fail in a pass, and how each failure ends it.
//!
//! A failure of one Secret (its read, plan or write) makes that Secret not ready and is
//! named in the Ready condition; the pass goes on with the other Secrets and ends by the
//! worst [`Retry`] of its failures. A failure of the GitLabSecrets itself (its read, its
//! status update) ends the pass at once.

use wasm_operator_sdk::planner::PlanError;

use crate::declared::EntryError;
use wasm_operator_sdk::{ApiError, ReconcileError};

/// One failed operation of a pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A Secret could not be read (from the cache or past it).
    #[error("Secret {secret}: cannot read it: {source}")]
    ReadSecret {
        secret: String,
        #[source]
        source: ApiError,
    },
    /// The GitLabSecrets of the namespace that declare a Secret could not be listed.
    #[error("Secret {secret}: cannot list the GitLabSecrets that declare it: {source}")]
    ListDeclaring {
        secret: String,
        #[source]
        source: ApiError,
    },
    /// An entry of spec.secrets or spec.certificates naming the Secret does not decode.
    #[error("Secret {secret}: cannot read its entry: {source}")]
    Entry { secret: String, source: EntryError },
    /// The planner failed for a Secret or a certificate set.
    #[error("Secret {secret}: cannot plan it: {source}")]
    Plan {
        secret: String,
        #[source]
        source: PlanError,
    },
    /// The API server refused or failed the create or patch of a Secret.
    #[error("Secret {secret}: cannot write it: {source}")]
    WriteSecret {
        secret: String,
        #[source]
        source: ApiError,
    },
    /// A Secret of a certificate set was not written because an earlier write of the set,
    /// or the set's read or plan, failed.
    #[error("Secret {secret}: not written, because {earlier} of its certificate set failed")]
    SetNotWritten { secret: String, earlier: String },
    /// The GitLabSecrets could not be read.
    #[error("GitLabSecrets {object}: cannot read it: {source}")]
    ReadPrimary {
        object: String,
        #[source]
        source: ApiError,
    },
    /// The GitLabSecrets did not decode into the Rust types.
    #[error("GitLabSecrets {object}: cannot decode it: {message}")]
    DecodePrimary { object: String, message: String },
    /// The status of the GitLabSecrets could not be written.
    #[error("GitLabSecrets {object}: cannot update status: {source}")]
    UpdateStatus {
        object: String,
        #[source]
        source: ApiError,
    },
}

/// How a failure ends the pass, from the mildest to the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Retry {
    /// 422 or 413: not retried; the next change of the Secret or the GitLabSecrets starts
    /// the next pass.
    NextChange,
    /// 409 on the status update: the GitLabSecrets changed after the pass read it; requeue
    /// after a second.
    Requeue,
    /// Anything else: retried with the controller's backoff.
    Backoff,
}

impl Error {
    /// How this failure ends the pass.
    pub fn retry(&self) -> Retry {
        let api = match self {
            Self::UpdateStatus {
                source: ApiError::Conflict(_),
                ..
            } => return Retry::Requeue,
            Self::ReadSecret { source, .. }
            | Self::ListDeclaring { source, .. }
            | Self::WriteSecret { source, .. }
            | Self::ReadPrimary { source, .. }
            | Self::UpdateStatus { source, .. } => source,
            // The planner fails on inputs (a refused size, base64 past 57 characters, an
            // existing value it cannot read) that no retry changes: the next change of the
            // GitLabSecrets or the Secret starts the next pass.
            Self::Plan { .. } => return Retry::NextChange,
            Self::DecodePrimary { .. } => return Retry::Backoff,
            // The entry decodes again only once it changes.
            Self::Entry { .. } => return Retry::NextChange,
            // Follows the failure it names, which is counted on its own.
            Self::SetNotWritten { .. } => return Retry::NextChange,
        };
        match api {
            ApiError::Invalid(_) | ApiError::TooLarge(_) => Retry::NextChange,
            _ => Retry::Backoff,
        }
    }
}

impl From<Error> for ReconcileError {
    fn from(error: Error) -> Self {
        match error.retry() {
            Retry::NextChange => Self::Permanent(error.to_string()),
            Retry::Requeue | Retry::Backoff => Self::Transient(error.to_string()),
        }
    }
}

/// The result of a step.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_and_too_large_writes_wait_for_the_next_change_and_the_rest_back_off() {
        let write = |source| Error::WriteSecret {
            secret: "s".into(),
            source,
        };
        let cases = [
            (ApiError::Invalid("bad".into()), Retry::NextChange),
            (ApiError::TooLarge("big".into()), Retry::NextChange),
            (ApiError::Conflict("changed".into()), Retry::Backoff),
            (ApiError::Unavailable("down".into()), Retry::Backoff),
            (ApiError::Forbidden("no".into()), Retry::Backoff),
        ];
        for (source, retry) in cases {
            assert_eq!(write(source.clone()).retry(), retry, "{source}");
        }
    }

    #[test]
    fn only_a_conflicting_status_update_requeues_and_a_plan_failure_waits_for_a_change() {
        let status = |source| Error::UpdateStatus {
            object: "ns/demo".into(),
            source,
        };
        assert_eq!(
            status(ApiError::Conflict("changed".into())).retry(),
            Retry::Requeue
        );
        assert_eq!(
            status(ApiError::Unavailable("down".into())).retry(),
            Retry::Backoff
        );
        let plan = Error::Plan {
            secret: "demo-a".into(),
            source: PlanError {
                subject: "demo-a".into(),
                message: "a: encoding base64 takes at most 57 characters".into(),
            },
        };
        assert_eq!(plan.retry(), Retry::NextChange);
    }

    #[test]
    fn a_failure_names_the_secret_and_the_error() {
        let error = Error::WriteSecret {
            secret: "demo-gitaly-secret".into(),
            source: ApiError::Invalid("data: Too long".into()),
        };
        assert_eq!(
            error.to_string(),
            "Secret demo-gitaly-secret: cannot write it: invalid: data: Too long"
        );
    }
}
