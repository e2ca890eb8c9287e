//! [`commit_staged_rotation`]: what [`decide_commit`] decided, done on the cluster.

use k8s_openapi::api::core::v1::Secret;
use serde_json::{Map, Value, json};

use super::{CommitDecision, ROTATION_COMPLETED_AT, Rotation, decide_commit};
use crate::cluster::{Cluster, ClusterExt, Event, EventType, Propagation};
use crate::error::ApiError;
use crate::log;
use crate::object::ObjectRef;

/// The event action of every rotation event.
const ACTION: &str = "Rotate";

/// One staged rotation: the two Secrets, and the object events regard.
#[derive(Debug, Clone, Copy)]
pub struct StagedRotation<'a> {
    pub rotation: Rotation,
    pub namespace: &'a str,
    /// The staging Secret the CronJob writes.
    pub staging: &'a str,
    /// The Secret the rotation is committed onto.
    pub target: &'a str,
    /// The object the events are about (the CR).
    pub regarding: &'a ObjectRef,
}

/// Why committing a staged rotation failed.
#[derive(Debug, thiserror::Error)]
pub enum RotationError {
    /// Reading a Secret failed.
    #[error("reading Secret {namespace}/{name}: {source}")]
    Read {
        namespace: String,
        name: String,
        #[source]
        source: crate::Error,
    },
    /// The target Secret does not exist.
    #[error("the target Secret {namespace}/{name} of the staged rotation does not exist")]
    TargetNotFound { namespace: String, name: String },
    /// Updating the target failed (a Conflict: it changed since it was read).
    #[error("committing the staged rotation onto Secret {namespace}/{name}: {source}")]
    UpdateTarget {
        namespace: String,
        name: String,
        #[source]
        source: crate::Error,
    },
    /// Clearing or deleting the staging Secret failed (other than NotFound or Conflict).
    #[error("{doing} the staging Secret {namespace}/{name}: {source}")]
    Staging {
        /// `clearing` or `deleting`.
        doing: &'static str,
        namespace: String,
        name: String,
        #[source]
        source: crate::Error,
    },
}

/// Commits `staged` (see the module): `Ok(true)` when the rotation was applied onto the
/// target. A missing staging Secret is nothing to commit; a missing target is
/// [`RotationError::TargetNotFound`].
pub fn commit_staged_rotation<C: Cluster + ?Sized>(
    cluster: &C,
    staged: &StagedRotation<'_>,
) -> Result<bool, RotationError> {
    let ns = staged.namespace;
    let read = |name: &str| {
        cluster
            .get_typed::<Secret>(Some(ns), name)
            .map_err(|source| RotationError::Read {
                namespace: ns.to_owned(),
                name: name.to_owned(),
                source,
            })
    };
    let Some(staging) = read(staged.staging)? else {
        return Ok(false);
    };
    let target = read(staged.target)?.ok_or_else(|| RotationError::TargetNotFound {
        namespace: ns.to_owned(),
        name: staged.target.to_owned(),
    })?;
    let rotation = staged.rotation;
    match decide_commit(rotation, &staging, &target) {
        CommitDecision::NothingStaged => Ok(false),
        CommitDecision::InvalidAnnotation { value } => {
            let note = format!(
                "Staging Secret {ns}/{}: annotation {ROTATION_COMPLETED_AT} {value:?} is not an \
                 RFC 3339 time; the rotation is not applied",
                staged.staging
            );
            record(
                cluster,
                staged,
                EventType::Warning,
                rotation.reason_annotation_invalid(),
                note,
            );
            Ok(false)
        }
        CommitDecision::Rejected(rejection) => {
            let cleared = if rotation.clears_rejected_staging() {
                clear_staging(cluster, staged, &staging)?;
                "; the staging Secret is cleared"
            } else {
                ""
            };
            let note = format!(
                "Staged rotation in Secret {ns}/{} rejected: {rejection}{cleared}",
                staged.staging
            );
            record(
                cluster,
                staged,
                EventType::Warning,
                rotation.reason_rejected(),
                note,
            );
            Ok(false)
        }
        CommitDecision::AlreadyCommitted => {
            delete_staging(cluster, staged, &staging)?;
            Ok(false)
        }
        CommitDecision::Commit { completed_at } => {
            update_target(cluster, staged, &staging, &target, &completed_at)?;
            delete_staging(cluster, staged, &staging)?;
            let note = format!(
                "Committed the rotation completed at {completed_at} from Secret {ns}/{} onto \
                 {ns}/{}",
                staged.staging, staged.target
            );
            record(
                cluster,
                staged,
                EventType::Normal,
                rotation.reason_rotated(),
                note,
            );
            Ok(true)
        }
    }
}

/// Copies the staged data (keys the staging Secret lacks removed) and the completion
/// annotation onto the target, at the resourceVersion it was read at.
fn update_target<C: Cluster + ?Sized>(
    cluster: &C,
    staged: &StagedRotation<'_>,
    staging: &Secret,
    target: &Secret,
    completed_at: &str,
) -> Result<(), RotationError> {
    let staged_data = staging.data.clone().unwrap_or_default();
    let mut data = Map::new();
    for key in target.data.iter().flatten().map(|(k, _)| k) {
        data.insert(key.clone(), Value::Null);
    }
    for (key, value) in &staged_data {
        data.insert(key.clone(), json!(value));
    }
    let patch = json!({
        "metadata": {"annotations": {ROTATION_COMPLETED_AT: completed_at}},
        "data": data,
    });
    patch_as_read(cluster, staged.namespace, staged.target, patch, target).map_err(|source| {
        RotationError::UpdateTarget {
            namespace: staged.namespace.to_owned(),
            name: staged.target.to_owned(),
            source,
        }
    })
}

/// Merge-patches the Secret `name`, only if it is still at the resourceVersion of `read`.
fn patch_as_read<C: Cluster + ?Sized>(
    cluster: &C,
    namespace: &str,
    name: &str,
    patch: Value,
    read: &Secret,
) -> crate::Result<()> {
    let version = read.metadata.resource_version.as_deref();
    cluster
        .merge_patch::<Secret>(Some(namespace), name, patch, version)
        .map(drop)
}

/// Removes the staged data and the completion annotation, unless the staging Secret
/// changed since it was read (Conflict) or is gone.
fn clear_staging<C: Cluster + ?Sized>(
    cluster: &C,
    staged: &StagedRotation<'_>,
    staging: &Secret,
) -> Result<(), RotationError> {
    let patch = json!({"metadata": {"annotations": {ROTATION_COMPLETED_AT: null}}, "data": null});
    let result = patch_as_read(cluster, staged.namespace, staged.staging, patch, staging);
    tolerate_gone_or_changed(result, "clearing", staged)
}

/// Deletes the staging Secret as it was read (uid and resourceVersion preconditions).
fn delete_staging<C: Cluster + ?Sized>(
    cluster: &C,
    staged: &StagedRotation<'_>,
    staging: &Secret,
) -> Result<(), RotationError> {
    let result = cluster
        .delete_unchanged(staging, Propagation::Background)
        .map(drop);
    tolerate_gone_or_changed(result, "deleting", staged)
}

fn tolerate_gone_or_changed(
    result: crate::Result<()>,
    doing: &'static str,
    staged: &StagedRotation<'_>,
) -> Result<(), RotationError> {
    match result {
        Ok(()) | Err(crate::Error::Api(ApiError::NotFound(_) | ApiError::Conflict(_))) => Ok(()),
        Err(source) => Err(RotationError::Staging {
            doing,
            namespace: staged.namespace.to_owned(),
            name: staged.staging.to_owned(),
            source,
        }),
    }
}

fn record<C: Cluster + ?Sized>(
    cluster: &C,
    staged: &StagedRotation<'_>,
    event_type: EventType,
    reason: &str,
    note: String,
) {
    let event = Event {
        event_type,
        reason: reason.to_owned(),
        action: ACTION.to_owned(),
        note,
    };
    if let Err(e) = cluster.record_event(staged.regarding, &event) {
        log::warn(&format!(
            "{}: cannot record {reason}: {e}",
            staged.regarding
        ));
    }
}
