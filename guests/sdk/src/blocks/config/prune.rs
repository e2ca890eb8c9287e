//! PruneImmutableConfigMaps: bounding the history of immutable ConfigMaps.
//!
//! The eight steps of the spec: (1) list the ConfigMaps of the namespace carrying the
//! [`CONFIG_BASE_LABEL`] of the base name; (2) keep those named `<base_name>-*`; (3) drop
//! the current one; (4) drop those not controlled by the owner; (5) sort newest first by
//! creationTimestamp; (6) nothing to do when at most `retain` remain; (7) delete from index
//! `retain` on; (8) log each deletion. Steps 2–7 are [`select_for_pruning`], a pure
//! function; a ConfigMap deleted between the list and the delete is not an error.
//!
//! DECISION: equal creationTimestamps (they have one-second granularity) are ordered by
//! name, descending, so repeated passes prune the same objects; a ConfigMap without a
//! creationTimestamp sorts as the oldest.

use k8s_openapi::api::core::v1::ConfigMap;

use super::configmap::CONFIG_BASE_LABEL;
use crate::blocks::apply::is_controlled_by;
use crate::cluster::{Cluster, ClusterExt, ListOptions, Owner, Propagation};
use crate::log;

/// Why pruning failed.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    /// Listing the ConfigMaps of the base name failed.
    #[error("listing ConfigMaps {base_name}-* in namespace {namespace}: {source}")]
    List {
        namespace: String,
        base_name: String,
        #[source]
        source: crate::Error,
    },
    /// Deleting a stale ConfigMap failed (NotFound is not a failure).
    #[error("deleting stale ConfigMap {namespace}/{name}: {source}")]
    Delete {
        namespace: String,
        name: String,
        #[source]
        source: crate::Error,
    },
}

/// The names of the ConfigMaps to delete out of `listed` (steps 2–7), in sort order
/// (newest first): those named `<base_name>-*`, not `current_name`, controlled by
/// `owner_uid`, beyond the `retain` newest.
pub fn select_for_pruning(
    listed: &[ConfigMap],
    owner_uid: &str,
    base_name: &str,
    current_name: &str,
    retain: usize,
) -> Vec<String> {
    let prefix = format!("{base_name}-");
    let mut candidates: Vec<&ConfigMap> = listed
        .iter()
        .filter(|cm| {
            let name = cm.metadata.name.as_deref().unwrap_or_default();
            name.starts_with(&prefix)
                && name != current_name
                && is_controlled_by(&cm.metadata, owner_uid)
        })
        .collect();
    if candidates.len() <= retain {
        return Vec::new();
    }
    candidates.sort_by(|a, b| {
        let key = |cm: &ConfigMap| {
            (
                cm.metadata.creation_timestamp.clone().map(|t| t.0),
                cm.metadata.name.clone(),
            )
        };
        key(b).cmp(&key(a))
    });
    candidates[retain..]
        .iter()
        .filter_map(|cm| cm.metadata.name.clone())
        .collect()
}

/// Deletes the stale immutable ConfigMaps of `base_name` in `namespace`, keeping
/// `current_name` and the `retain` newest others, and only ever touching ConfigMaps
/// `owner` controls. Idempotent; safe to run concurrently.
pub fn prune_immutable_config_maps<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    base_name: &str,
    namespace: &str,
    current_name: &str,
    retain: usize,
) -> Result<(), PruneError> {
    let options = ListOptions {
        label_selector: Some(format!("{CONFIG_BASE_LABEL}={base_name}")),
        ..Default::default()
    };
    let listed: Vec<ConfigMap> =
        cluster
            .list_typed(Some(namespace), &options)
            .map_err(|source| PruneError::List {
                namespace: namespace.to_owned(),
                base_name: base_name.to_owned(),
                source,
            })?;
    for name in select_for_pruning(&listed, &owner.uid, base_name, current_name, retain) {
        let deleted = cluster
            .delete_typed::<ConfigMap>(Some(namespace), &name, Propagation::Background)
            .map_err(|source| PruneError::Delete {
                namespace: namespace.to_owned(),
                name: name.clone(),
                source,
            })?;
        if deleted {
            log::info(&format!(
                "deleted stale immutable ConfigMap {namespace}/{name} (base {base_name})"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
