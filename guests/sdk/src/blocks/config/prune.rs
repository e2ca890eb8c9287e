//! PruneImmutableConfigMaps and its Secret twin: bounding the history of immutable
//! ConfigMaps and Secrets (facts §2.17).
//!
//! The eight steps of the spec: (1) list the objects of the kind in the namespace
//! carrying the [`CONFIG_BASE_LABEL`] of the base name; (2) keep those named
//! `<base_name>-*`; (3) drop the current one; (4) drop those not controlled by the owner;
//! (5) sort newest first by creationTimestamp; (6) nothing to do when at most `retain`
//! remain; (7) delete from index `retain` on; (8) log each deletion. Steps 2–7 are
//! [`select_for_pruning`], a pure function over either kind; an object deleted between
//! the list and the delete is not an error.
//!
//! DECISION: equal creationTimestamps (they have one-second granularity) are ordered by
//! name, descending, so repeated passes prune the same objects; an object without a
//! creationTimestamp sorts as the oldest.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{Metadata, Resource};
use serde::de::DeserializeOwned;

use super::immutable::CONFIG_BASE_LABEL;
use crate::blocks::apply::is_controlled_by;
use crate::cluster::{Cluster, ClusterExt, ListOptions, Owner, Propagation};
use crate::log;

/// Why pruning failed.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    /// Listing the objects of the base name failed.
    #[error("listing {kind}s {base_name}-* in namespace {namespace}: {source}")]
    List {
        /// `ConfigMap` or `Secret`.
        kind: &'static str,
        namespace: String,
        base_name: String,
        #[source]
        source: crate::Error,
    },
    /// Deleting a stale object failed (NotFound is not a failure).
    #[error("deleting stale {kind} {namespace}/{name}: {source}")]
    Delete {
        /// `ConfigMap` or `Secret`.
        kind: &'static str,
        namespace: String,
        name: String,
        #[source]
        source: crate::Error,
    },
}

/// The names of the objects to delete out of `listed` (steps 2–7), in sort order (newest
/// first): those named `<base_name>-*`, not `current_name`, controlled by `owner_uid`,
/// beyond the `retain` newest.
pub fn select_for_pruning<K: Metadata<Ty = ObjectMeta>>(
    listed: &[K],
    owner_uid: &str,
    base_name: &str,
    current_name: &str,
    retain: usize,
) -> Vec<String> {
    let prefix = format!("{base_name}-");
    let mut candidates: Vec<&ObjectMeta> = listed
        .iter()
        .map(Metadata::metadata)
        .filter(|meta| {
            let name = meta.name.as_deref().unwrap_or_default();
            name.starts_with(&prefix) && name != current_name && is_controlled_by(meta, owner_uid)
        })
        .collect();
    if candidates.len() <= retain {
        return Vec::new();
    }
    candidates.sort_by(|a, b| {
        let key = |meta: &ObjectMeta| {
            (
                meta.creation_timestamp.clone().map(|t| t.0),
                meta.name.clone(),
            )
        };
        key(b).cmp(&key(a))
    });
    candidates[retain..]
        .iter()
        .filter_map(|meta| meta.name.clone())
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
    prune_immutable::<C, ConfigMap>(cluster, owner, base_name, namespace, current_name, retain)
}

/// [`prune_immutable_config_maps`] for the immutable Secrets of
/// [`create_immutable_secret`](super::create_immutable_secret).
pub fn prune_immutable_secrets<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    base_name: &str,
    namespace: &str,
    current_name: &str,
    retain: usize,
) -> Result<(), PruneError> {
    prune_immutable::<C, Secret>(cluster, owner, base_name, namespace, current_name, retain)
}

fn prune_immutable<C, K>(
    cluster: &C,
    owner: &Owner,
    base_name: &str,
    namespace: &str,
    current_name: &str,
    retain: usize,
) -> Result<(), PruneError>
where
    C: Cluster + ?Sized,
    K: Resource + Metadata<Ty = ObjectMeta> + DeserializeOwned,
    K::Scope: 'static,
{
    let options = ListOptions {
        label_selector: Some(format!("{CONFIG_BASE_LABEL}={base_name}")),
        ..Default::default()
    };
    let listed: Vec<K> = cluster
        .list_typed(Some(namespace), &options)
        .map_err(|source| PruneError::List {
            kind: K::KIND,
            namespace: namespace.to_owned(),
            base_name: base_name.to_owned(),
            source,
        })?;
    for name in select_for_pruning(&listed, &owner.uid, base_name, current_name, retain) {
        let deleted = cluster
            .delete_typed::<K>(Some(namespace), &name, Propagation::Background)
            .map_err(|source| PruneError::Delete {
                kind: K::KIND,
                namespace: namespace.to_owned(),
                name: name.clone(),
                source,
            })?;
        if deleted {
            log::info(&format!(
                "deleted stale immutable {} {namespace}/{name} (base {base_name})",
                K::KIND
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
