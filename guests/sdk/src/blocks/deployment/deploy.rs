//! EnsureDeployment and IsDeploymentReady.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::Error;
use crate::blocks::apply::{ensure_object, name_of};
use crate::cluster::{Cluster, ClusterExt, Owner, Propagation, ReadFrom};
use crate::object::object_key;

/// What [`ensure_deployment`] does before it applies.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeploymentPlan {
    /// Delete the existing Deployment first: its selector differs from the desired one.
    pub recreate: bool,
    /// Apply with this replica count: the builder left replicas unset, and the existing
    /// Deployment's count is owned by an applier (an earlier builder of this operator set
    /// it) and by no updater (an HPA, `kubectl scale`), so leaving it out of the apply
    /// would remove it and reset the Deployment to one replica.
    pub keep_replicas: Option<i32>,
}

/// Decides what [`ensure_deployment`] does given the existing and the desired Deployment.
pub fn plan_deployment(existing: Option<&Deployment>, desired: &Deployment) -> DeploymentPlan {
    let Some(existing_deployment) = existing else {
        return DeploymentPlan::default();
    };
    let existing = &existing_deployment.spec;
    let desired = &desired.spec;
    let recreate = !same_selector(&existing.selector, &desired.selector);
    let keep_replicas = match desired.replicas {
        Some(_) => None,
        None if recreate => None,
        None if replicas_owned_by(&existing_deployment.metadata, "Apply")
            && !replicas_owned_by(&existing_deployment.metadata, "Update") =>
        {
            existing.replicas
        }
        // An updater owns the count (the apply leaves it to them), or no one does (the
        // server's default stays when the apply leaves it out).
        None => None,
    };
    DeploymentPlan {
        recreate,
        keep_replicas,
    }
}

/// Whether a managedFields entry of `operation` (`Apply` or `Update`) owns
/// `spec.replicas`.
fn replicas_owned_by(metadata: &ObjectMeta, operation: &str) -> bool {
    metadata.managed_fields.iter().flatten().any(|entry| {
        entry.operation.as_deref() == Some(operation)
            && entry
                .fields_v1
                .as_ref()
                .is_some_and(|fields| fields.0.pointer("/f:spec/f:replicas").is_some())
    })
}

/// Selectors compare equal when their labels and expressions do, an absent list and an
/// empty one being the same.
fn same_selector(a: &LabelSelector, b: &LabelSelector) -> bool {
    let labels = |s: &LabelSelector| s.match_labels.clone().unwrap_or_default();
    let expressions = |s: &LabelSelector| s.match_expressions.clone().unwrap_or_default();
    labels(a) == labels(b) && expressions(a) == expressions(b)
}

/// Whether every desired replica is ready and the Deployment is Available: readyReplicas ≥
/// spec.replicas (1 when unset) and an `Available` condition with status `True`.
pub fn is_deployment_ready(deployment: &Deployment) -> bool {
    let desired = deployment.spec.replicas.unwrap_or(1);
    let Some(status) = deployment.status.as_ref() else {
        return false;
    };
    let available =
        status.conditions.iter().flatten().any(|c| {
            c.type_.as_deref() == Some("Available") && c.status.as_deref() == Some("True")
        });
    status.ready_replicas.unwrap_or(0) >= desired && available
}

/// Creates or updates `deployment` under `owner` and returns it as the server stored it
/// (status included: [`is_deployment_ready`] tells whether it is ready).
///
/// A Deployment whose selector changed is deleted (background propagation) and re-created:
/// the change is confirmed on the server first and the delete carries the uid and
/// resourceVersion read there as preconditions, so a lagging cache never deletes the
/// Deployment just re-created (a Deployment changed in between is a conflict, an error);
/// replicas left unset by the builder are left out of the apply, so an HPA's count stays
/// (an apply carrying the count it read would undo a scale made between the read and the
/// apply), except while this operator still owns them from an earlier builder that set
/// them: then the count the server holds is applied. Who owns them is read on the server
/// (the cache keeps no managedFields), so a Deployment whose builder leaves replicas unset
/// costs one server read per pass.
pub fn ensure_deployment<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    deployment: &Deployment,
) -> Result<Deployment, Error> {
    let (namespace, name) = name_of(deployment).map_err(|source| Error::Apply {
        what: "Deployment".into(),
        source,
    })?;
    let what = format!("Deployment {}", object_key(namespace, name));
    let get = |from: ReadFrom| -> Result<Option<Deployment>, Error> {
        cluster
            .get_typed_from(namespace, name, from)
            .map_err(|source| Error::Get {
                what: what.clone(),
                source,
            })
    };
    let mut existing = get(ReadFrom::Cache)?;
    let mut plan = plan_deployment(existing.as_ref(), deployment);
    if plan.recreate || (existing.is_some() && deployment.spec.replicas.is_none()) {
        // The cache may not show yet the Deployment an earlier pass re-created, nor the
        // replicas an HPA set since, and it keeps no managedFields (who owns replicas):
        // confirm on the server before deleting anything or deciding on a replica count.
        existing = get(ReadFrom::Server)?;
        plan = plan_deployment(existing.as_ref(), deployment);
    }
    if let (true, Some(stale)) = (plan.recreate, &existing) {
        cluster
            .delete_unchanged(stale, Propagation::Background)
            .map_err(|source| Error::Delete {
                what: what.clone(),
                source,
            })?;
    }
    let mut desired = deployment.clone();
    if let Some(replicas) = plan.keep_replicas {
        desired.spec.replicas = Some(replicas);
    }
    ensure_object(cluster, owner, &desired).map_err(|source| Error::Apply { what, source })
}

#[cfg(test)]
#[path = "deploy_tests.rs"]
mod tests;
