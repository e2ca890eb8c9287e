//! What a reconciler implements: [`Reconciler`], and how a failed pass ends
//! ([`ReconcileError`]). The description and request types are the shared ones of
//! `wasm-operator-types`.

use serde_json::Value;

use crate::admission::{AdmissionRequest, Defaulted, Denial, Validated};
use crate::cluster::Cluster;

pub use wasm_operator_types::plugin::{
    Description, FieldIndex, KindIndex, Mapping, Outcome, Permission, Predicate, Request,
    SubresourcePermission, TargetDescription, Verb, Watch,
};

/// How a failed pass ends.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReconcileError {
    /// Retried with the controller's backoff.
    #[error("{0}")]
    Transient(String),
    /// Not retried; the next change starts the next pass.
    #[error("{0} (not retried)")]
    Permanent(String),
    /// Retried after this delay instead of the backoff (e.g. a server's Retry-After).
    #[error("{message} (retried after {after:?})")]
    RetryAfter {
        after: std::time::Duration,
        message: String,
    },
}

impl From<crate::error::Error> for ReconcileError {
    fn from(error: crate::error::Error) -> Self {
        match &error {
            crate::error::Error::Api(api) if !api.is_retryable() => {
                Self::Permanent(error.to_string())
            }
            _ => Self::Transient(error.to_string()),
        }
    }
}

/// A failed cluster call ends the pass: retried with the backoff (a 403 included: the
/// administrator may grant what was missing), except a refusal no retry changes (422,
/// 413), which is permanent. Lets `?` end a pass on any call,
/// `record_event` included.
impl From<crate::error::ApiError> for ReconcileError {
    fn from(error: crate::error::ApiError) -> Self {
        crate::error::Error::from(error).into()
    }
}

impl From<wasm_operator_types::MissingField> for ReconcileError {
    fn from(error: wasm_operator_types::MissingField) -> Self {
        crate::error::Error::from(error).into()
    }
}

/// A reconciler, written against [`Cluster`]; exported with [`crate::export_reconciler!`].
pub trait Reconciler {
    /// Describes the plugin; must not use the cluster.
    fn describe() -> Description;

    /// Runs one pass for `request`.
    fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError>;

    /// The keys of field index `name` for the primary `object`; empty for an unknown index.
    fn index(name: &str, object: &Value) -> Vec<String> {
        let _ = (name, object);
        Vec::new()
    }

    /// Defaults a write of a kind [`Description::admission`] names for `default`: the object
    /// to store, or a refusal. `cluster` reads within the declared permissions and refuses
    /// writes. By default the object is stored as it came.
    fn default_object(
        cluster: &dyn Cluster,
        request: &AdmissionRequest,
    ) -> Result<Defaulted, Denial> {
        let _ = cluster;
        Ok(crate::admission::unchanged(request))
    }

    /// Validates a write of a kind [`Description::admission`] names for `validate`. By
    /// default every write is allowed.
    fn validate_object(cluster: &dyn Cluster, request: &AdmissionRequest) -> Validated {
        let _ = (cluster, request);
        Validated::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;

    #[test]
    fn a_failed_cluster_call_ends_a_pass_with_question_mark_permanent_only_when_no_retry_helps() {
        // 422 and 413 are permanent; a 403 is retried, as the GitLabSecrets spec retries
        // every failure but those two.
        type Case = (ApiError, fn(&ReconcileError) -> bool);
        let cases: [Case; 4] = [
            (
                ApiError::Conflict("stale".into()),
                |e| matches!(e, ReconcileError::Transient(m) if m == "conflict: stale"),
            ),
            (
                ApiError::Invalid("bad".into()),
                |e| matches!(e, ReconcileError::Permanent(m) if m == "invalid: bad"),
            ),
            (ApiError::TooLarge("big".into()), |e| {
                matches!(e, ReconcileError::Permanent(_))
            }),
            (
                ApiError::Forbidden("no".into()),
                |e| matches!(e, ReconcileError::Transient(m) if m == "forbidden: no"),
            ),
        ];
        for (error, expected) in cases {
            let pass = |e: ApiError| -> Result<(), ReconcileError> { Err(e)? };
            let ended = pass(error.clone()).expect_err("the pass ends");
            assert!(expected(&ended), "{error:?} became {ended:?}");
        }
    }
}
