//! A managed store of a targeted Barbican (facts §3.6 "Remote target"): its credentials
//! Secret is minted on the Barbican's target cluster, where no owner reference collects
//! it (the host writes the store as the owner labels instead). Before anything is minted,
//! the store records that cluster in the annotation [`CHILDREN_CLUSTER`] and holds
//! [`FINALIZER`], both in one merge patch; its deletion sweeps its Secrets from the cluster
//! the annotation names — the Barbican may be gone by then — and releases the finalizer.
//! A brownfield store mints nothing, and a store of a local Barbican has an owned Secret:
//! neither holds the finalizer.
//!
//! | Case | What the pass does |
//! |---|---|
//! | managed, its Barbican targets `t`, the annotation or the finalizer missing | one merge patch (at the resourceVersion read) adds both, annotation `t`; run again at once |
//! | deleting, without the finalizer | nothing (done, no write) |
//! | deleting, the annotated cluster opens | the store's labelled Secrets deleted there, the finalizer released |
//! | deleting, it does not open, under 5 min since the deletionTimestamp | CredentialsReady False `TargetClusterUnavailable` (the wait message), 15 s |
//! | deleting, it has not opened for 5 min | Warning `RemoteChildrenAbandoned`, the finalizer released without a sweep |

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::json;
use wasm_operator_sdk::blocks::remote_children::{
    self, Deletion, FINALIZER, REASON_ABANDONED, RemoteOwner, TARGET_CLUSTER_UNAVAILABLE,
    TARGET_POLLING, abandoned_message, sweep,
};
use wasm_operator_sdk::{Cluster, ClusterExt, Event, EventType, KindRef, ObjectRef, log};

use crate::barbican_ref::Barbican;
use crate::conditions::{self, CREDENTIALS_READY};
use crate::error::Error;
use crate::types::BarbicanSecretStore;

/// The annotation naming the cluster a store's minted Secrets live on.
pub(crate) const CHILDREN_CLUSTER: &str = "openstack.c5c3.io/children-cluster";

/// The target a managed store of `barbican` mints on; `None` for a brownfield store or a
/// local Barbican.
pub(crate) fn target_of(barbican: &Barbican, store: &BarbicanSecretStore) -> Option<String> {
    let managed = store
        .spec
        .open_bao
        .as_ref()
        .is_some_and(|o| o.instance_ref.is_some());
    let target = barbican.spec.target_cluster_ref.as_ref()?;
    managed.then(|| target.name.clone())
}

/// Records `target` in the annotation and adds [`FINALIZER`] unless both are there;
/// `true` when they were written (the pass ends and runs again).
pub(crate) fn hold(
    cluster: &dyn Cluster,
    store: &mut BarbicanSecretStore,
    target: &str,
) -> Result<bool, Error> {
    let annotated = store
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CHILDREN_CLUSTER))
        .is_some_and(|t| t == target);
    let held = wasm_operator_sdk::has_finalizer(&store.metadata, FINALIZER);
    if annotated && held {
        return Ok(false);
    }
    let mut finalizers = store.metadata.finalizers.clone().unwrap_or_default();
    if !held {
        finalizers.push(FINALIZER.to_owned());
    }
    let patch = json!({"metadata": {
        "annotations": {CHILDREN_CLUSTER: target},
        "finalizers": finalizers,
    }});
    let version = store.metadata.resource_version.clone();
    let patched: BarbicanSecretStore = cluster
        .merge_patch(
            Some(store.namespace()),
            store.name(),
            patch,
            version.as_deref(),
        )
        .map_err(|source| Error::Cluster {
            what: format!(
                "recording target cluster {target:?} and finalizer {FINALIZER} on \
                 BarbicanSecretStore {}/{}",
                store.namespace(),
                store.name()
            ),
            source,
        })?;
    store.metadata = patched.metadata;
    Ok(true)
}

/// The deletion of `store` (see the module table): `Ok(None)` when nothing is held or it
/// was released, `Some(after)` while it waits for its cluster.
pub(crate) fn delete(
    cluster: &dyn Cluster,
    store: &mut BarbicanSecretStore,
    now: Timestamp,
) -> Result<Option<Duration>, Error> {
    let target = store
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CHILDREN_CLUSTER))
        .cloned()
        .unwrap_or_default();
    let opened = remote_children::open(cluster, Some(&target));
    match remote_children::deletion(
        &store.metadata,
        &target,
        opened.error.as_deref(),
        &Time(now),
    ) {
        Deletion::NotHeld => return Ok(None),
        Deletion::Sweep => {
            let children = opened.target.as_deref().unwrap_or(cluster);
            let owner = RemoteOwner {
                kind: "BarbicanSecretStore",
                namespace: store.namespace(),
                name: store.name(),
            };
            let sent =
                sweep(children, owner, &[KindRef::of::<Secret>()]).map_err(|e| Error::Cluster {
                    what: format!("{} on target cluster {target:?}", e.what),
                    source: e.source.into(),
                })?;
            log::debug(&format!(
                "BarbicanSecretStore {}/{}: {sent} Secrets deleted on target cluster {target:?}",
                store.namespace(),
                store.name()
            ));
        }
        Deletion::Wait(message) => {
            conditions::set(
                store,
                CREDENTIALS_READY,
                false,
                TARGET_CLUSTER_UNAVAILABLE,
                &message,
            );
            return Ok(Some(TARGET_POLLING));
        }
        Deletion::Abandon => {
            let regarding =
                ObjectRef::of::<BarbicanSecretStore>(Some(store.namespace()), store.name());
            let event = Event {
                event_type: EventType::Warning,
                reason: REASON_ABANDONED.to_owned(),
                action: "Reconcile".to_owned(),
                note: abandoned_message("BarbicanSecretStore"),
            };
            if let Err(e) = cluster.record_event(&regarding, &event) {
                log::warn(&format!(
                    "recording event {REASON_ABANDONED} on {regarding}: {e}"
                ));
            }
        }
    }
    cluster
        .remove_finalizer(store, FINALIZER)
        .map_err(|source| Error::Cluster {
            what: format!(
                "removing finalizer {FINALIZER} from BarbicanSecretStore {}/{}",
                store.namespace(),
                store.name()
            ),
            source,
        })?;
    Ok(None)
}

#[cfg(test)]
#[path = "remote_tests.rs"]
mod tests;
