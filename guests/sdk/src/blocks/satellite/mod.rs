//! The mechanics shared by satellite controllers and the parents that aggregate them.
//!
//! A satellite is a namespaced configuration CR attached to a parent service CR by name.
//! It observes its own effect through the Deployment the parent runs. The condition
//! vocabulary, messages and requeue intervals stay in the operator: each helper either
//! hands back a decision or takes the condition texts as parameters.
//!
//! - [`resolve`]: [`resolve_parent_children`] — read the parent, resolve the cluster it
//!   targets, or set the gate condition and requeue.
//! - [`observe`]: [`secret_name_for_volume`], [`section_present`], [`section_projected`] —
//!   whether a satellite's section reached the config the parent's Deployment mounts.
//! - [`mod@collect`]: [`collect()`] — a parent's satellites as one pass sees them.
//! - [`unserved`]: [`UnservedIsAbsent`] — the cluster a satellite controller reads, where
//!   a kind not served yet (the parent's CRD, ESO's) has no objects.

pub mod collect;
pub mod observe;
pub mod resolve;
pub mod unserved;

pub use collect::{CollectParams, Collection, collect};
pub use observe::{ObserveParams, secret_name_for_volume, section_present, section_projected};
pub use resolve::{
    Children, ClusterResolver, HostTargets, REASON_TARGET_CLUSTER_UNAVAILABLE, Resolution,
    ResolveParams, TargetClusterRefSpec, resolve_parent_children,
};
pub use unserved::UnservedIsAbsent;

/// Why a satellite helper failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the parent failed for a reason other than NotFound.
    #[error("fetching parent {kind} {key}: {source}")]
    FetchParent {
        kind: String,
        key: String,
        #[source]
        source: crate::Error,
    },
    /// Reading the parent's Deployment failed for a reason other than NotFound.
    #[error("fetching Deployment {key}: {source}")]
    FetchDeployment {
        key: String,
        #[source]
        source: crate::Error,
    },
    /// Reading the Secret the Deployment mounts failed for a reason other than NotFound.
    #[error("fetching projection Secret {key}: {source}")]
    FetchSecret {
        key: String,
        #[source]
        source: crate::Error,
    },
}
