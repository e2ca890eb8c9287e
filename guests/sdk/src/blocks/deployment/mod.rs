//! Deployments and Services (EnsureDeployment, EnsureService, IsDeploymentReady).
//!
//! Both are applied through [`ensure_object`](crate::blocks::apply::ensure_object). Each
//! keeps a read before the apply, for one decision only: a Deployment whose selector
//! changed is deleted and re-created (the selector is immutable), and its replica count is
//! kept when the builder leaves replicas unset (an HPA owns it); a Service fails fast when
//! the builder sets a server-assigned immutable field to a value other than the one the
//! server assigned.

mod deploy;
mod service;

pub use deploy::{DeploymentPlan, ensure_deployment, is_deployment_ready, plan_deployment};
pub use service::{ServiceConflict, ensure_service, service_conflict};

/// Why ensuring a Deployment or a Service failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the existing object failed.
    #[error("fetching {what}: {source}")]
    Get {
        what: String,
        #[source]
        source: crate::Error,
    },
    /// Deleting a Deployment whose selector changed failed.
    #[error("deleting {what} to change its selector: {source}")]
    Delete {
        what: String,
        #[source]
        source: crate::Error,
    },
    /// The apply failed.
    #[error("applying {what}: {source}")]
    Apply {
        what: String,
        #[source]
        source: crate::Error,
    },
    /// The builder set a server-assigned immutable field of a Service to a value that
    /// conflicts with the assigned one.
    #[error("{what}: {conflict}")]
    Immutable {
        what: String,
        conflict: ServiceConflict,
    },
}
