//! ResolveParentChildren: the cluster a satellite's observations belong on.
//!
//! The satellite's parent is read on the management cluster; the parent's
//! `targetClusterRef` decides which cluster its children — and so the satellite's
//! credentials and observations — live on. There is no fallback to the local cluster
//! while the parent is missing: a guess would read the wrong cluster for as long as a
//! GitOps apply has landed the satellite but not yet its parent.

use std::ops::Deref;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::de::DeserializeOwned;

use super::Error;
use crate::blocks::conditions::{FALSE, NewCondition, TRUE, find, set_condition};
use crate::cluster::{Cluster, ClusterExt};
use crate::error::ApiError;
use crate::object::object_key;

/// The reason of a gate condition whose target cluster does not resolve (shared with
/// multicluster's `TargetClusterUnavailable`).
pub const REASON_TARGET_CLUSTER_UNAVAILABLE: &str = "TargetClusterUnavailable";

pub use crate::blocks::types::TargetClusterRefSpec;

/// Looks up the cluster a `targetClusterRef` names.
pub trait ClusterResolver {
    /// The cluster `target` names; the error text when it does not resolve.
    fn resolve(&self, target: &TargetClusterRefSpec) -> Result<Box<dyn Cluster + '_>, String>;
}

/// The host's target clusters (contract 1.3), opened through `cluster`
/// ([`Cluster::open_target`]): the resolver a satellite on the management cluster passes.
/// The error text is the host's (`target cluster "edge" is not registered`).
pub struct HostTargets<'a>(pub &'a dyn Cluster);

impl ClusterResolver for HostTargets<'_> {
    fn resolve(&self, target: &TargetClusterRefSpec) -> Result<Box<dyn Cluster + '_>, String> {
        self.0.open_target(&target.name).map_err(|e| e.to_string())
    }
}

/// The cluster a satellite's observations belong on.
pub enum Children<'a> {
    /// The management cluster itself.
    Local(&'a dyn Cluster),
    /// The cluster the parent targets.
    Remote(Box<dyn Cluster + 'a>),
}

impl<'a> Deref for Children<'a> {
    type Target = dyn Cluster + 'a;

    fn deref(&self) -> &Self::Target {
        match self {
            Children::Local(cluster) => *cluster,
            Children::Remote(cluster) => cluster.as_ref(),
        }
    }
}

/// What [`resolve_parent_children`] works from; the texts are the operator's.
pub struct ResolveParams<'a, 'c, P> {
    /// The management cluster, where the parent lives.
    pub client: &'a dyn Cluster,
    /// Looks up target clusters; `None` keeps everything local.
    pub resolver: Option<&'a dyn ClusterResolver>,
    pub parent_namespace: &'a str,
    pub parent_name: &'a str,
    /// The parent's kind, for error texts.
    pub parent_kind: &'a str,
    /// Reads the `targetClusterRef` off the parent.
    pub target_cluster_ref: fn(&P) -> Option<TargetClusterRefSpec>,
    /// The satellite's own conditions.
    pub conditions: &'c mut Vec<Condition>,
    /// The satellite's generation, stamped on the conditions set.
    pub generation: i64,
    pub gate_condition_type: &'a str,
    pub waiting_for_parent_reason: &'a str,
    pub waiting_for_parent_message: &'a str,
    /// The condition demoted while the parent is missing; empty demotes nothing.
    pub projection_condition_type: &'a str,
    pub projection_demotion_reason: &'a str,
    pub projection_demotion_message: &'a str,
    pub requeue_after: Duration,
}

/// How resolving ended.
pub enum Resolution<'a, P> {
    /// The parent as read, and the cluster its children live on.
    Resolved { parent: P, children: Children<'a> },
    /// The gate condition was set False; run again after this long.
    Requeue(Duration),
}

/// Reads the parent and resolves the cluster it targets.
///
/// A missing parent sets the gate condition False with the waiting reason and message,
/// demotes the projection condition (when named, and only where it stands True), and
/// requeues. A target cluster that does not resolve sets the gate condition False under
/// [`REASON_TARGET_CLUSTER_UNAVAILABLE`] with the resolver's text, and requeues. A failed
/// read of the parent other than NotFound is [`Error::FetchParent`].
pub fn resolve_parent_children<'a, P>(
    params: ResolveParams<'a, '_, P>,
) -> Result<Resolution<'a, P>, Error>
where
    P: k8s_openapi::Resource + DeserializeOwned,
{
    let ResolveParams {
        client,
        resolver,
        parent_namespace,
        parent_name,
        conditions,
        generation,
        ..
    } = params;
    let parent = match client.get_typed::<P>(Some(parent_namespace), parent_name) {
        Ok(parent) => parent,
        Err(crate::Error::Api(ApiError::NotFound(_))) => None,
        Err(source) => {
            return Err(Error::FetchParent {
                kind: params.parent_kind.to_owned(),
                key: object_key(Some(parent_namespace), parent_name),
                source,
            });
        }
    };
    let gate_false = |conditions: &mut Vec<Condition>, reason: &str, message: &str| {
        set_condition(
            conditions,
            &NewCondition {
                type_: params.gate_condition_type,
                status: FALSE,
                reason,
                message,
                observed_generation: generation,
            },
        );
    };
    let Some(parent) = parent else {
        gate_false(
            conditions,
            params.waiting_for_parent_reason,
            params.waiting_for_parent_message,
        );
        let projection = params.projection_condition_type;
        if !projection.is_empty() && find(conditions, projection).is_some_and(|c| c.status == TRUE)
        {
            set_condition(
                conditions,
                &NewCondition {
                    type_: projection,
                    status: FALSE,
                    reason: params.projection_demotion_reason,
                    message: params.projection_demotion_message,
                    observed_generation: generation,
                },
            );
        }
        return Ok(Resolution::Requeue(params.requeue_after));
    };
    let target = (params.target_cluster_ref)(&parent);
    let children = match (resolver, target) {
        (Some(resolver), Some(target)) => match resolver.resolve(&target) {
            Ok(cluster) => Children::Remote(cluster),
            Err(text) => {
                gate_false(conditions, REASON_TARGET_CLUSTER_UNAVAILABLE, &text);
                return Ok(Resolution::Requeue(params.requeue_after));
            }
        },
        _ => Children::Local(client),
    };
    Ok(Resolution::Resolved { parent, children })
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
