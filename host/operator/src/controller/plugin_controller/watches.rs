//! The watched kinds of one controller: their informers and feeds, the field indexes
//! declared on them, their mappings back to primaries, and optional watches that wait
//! for their kind.
//!
//! - A required watch starts with the controller.
//! - An optional watch whose kind the cluster does not serve waits: it holds no informer
//!   (so `/readyz` does not wait for it) and starts when discovery reports its kind, with
//!   the plural and scope it declared (checked as at load; a mismatch is logged and the
//!   watch never starts).
//! - A change of a watched object first updates the indexes declared on its kind, then is
//!   mapped to primaries: by owner, label, field index over the primary, reference (a
//!   field naming the primary), or through an index on another watched kind to what that
//!   kind's own watch maps to.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use wasm_operator_types::{KindRef, Mapping, Request, Watch};

use super::Controller;
use crate::controller::mapping;
use crate::informer::{Change, key_of};
use crate::operator::kinds::KindError;

/// How often an optional watch asks discovery again without a CRD event.
const OPTIONAL_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

impl Controller {
    /// Starts the feed of every watch: at once for a required one, when its kind appears
    /// for an optional one.
    pub(super) fn start_watches(self: &Arc<Self>) -> Vec<JoinHandle<()>> {
        self.description
            .watches
            .iter()
            .enumerate()
            .map(|(i, watch)| {
                let this = self.clone();
                if watch.optional {
                    tokio::spawn(this.wait_then_feed(i))
                } else {
                    let changes = self.informers.ensure(&watch.kind).subscribe();
                    tokio::spawn(this.feed_watched(i, changes))
                }
            })
            .collect()
    }

    /// Waits until the cluster serves the kind of optional watch `i` as declared, then
    /// feeds it.
    async fn wait_then_feed(self: Arc<Self>, i: usize) {
        let watch = &self.description.watches[i];
        let mut changes = self.kinds.changes();
        loop {
            let plugin = self.plugin();
            let checked = self
                .kinds
                .check_one(
                    self.name(),
                    format!("watches[{i}].kind"),
                    &watch.kind,
                    plugin.access(),
                    true,
                )
                .await;
            match checked {
                Ok(()) => break,
                Err(error @ (KindError::NotServed { .. } | KindError::Unavailable { .. })) => {
                    tracing::debug!(plugin = self.name(), %error, "optional watch waits for its kind");
                }
                Err(error) => {
                    tracing::error!(plugin = self.name(), %error, "optional watch does not start");
                    return;
                }
            }
            let _ = tokio::time::timeout(OPTIONAL_RETRY, changes.changed()).await;
        }
        tracing::info!(plugin = self.name(), kind = %watch.kind, "optional watch starts: its kind is served");
        let changes = self.informers.ensure(&watch.kind).subscribe();
        self.feed_watched(i, changes).await;
    }

    /// Feeds the changes of watch `i` into the indexes on its kind and the queue.
    async fn feed_watched(self: Arc<Self>, i: usize, mut changes: mpsc::UnboundedReceiver<Change>) {
        let watch = &self.description.watches[i];
        while let Some(change) = changes.recv().await {
            self.reindex_watched(&watch.kind, &change).await;
            for request in self.map(watch, &change) {
                self.enqueue(request);
            }
        }
    }

    /// Updates the indexes declared on `kind` for the changed object.
    async fn reindex_watched(&self, kind: &KindRef, change: &Change) {
        let Some(object) = change.object().and_then(mapping::request_of) else {
            return;
        };
        let plugin = self.plugin();
        for declared in self
            .description
            .watched_indexes
            .iter()
            .filter(|x| same_kind(&x.kind, kind))
        {
            let name = &declared.index.name;
            let Some(new) = &change.new else {
                self.indexes.set(name, &object, Vec::new());
                continue;
            };
            match plugin.index(&self.runtime, name, new).await {
                Ok(keys) => self.indexes.set(name, &object, keys),
                Err(error) => tracing::warn!(
                    plugin = self.name(),
                    index = name.as_str(),
                    %error,
                    "field index failed; the object keeps its previous keys"
                ),
            }
        }
    }

    /// The primaries a change of a watched object maps to.
    fn map(&self, watch: &Watch, change: &Change) -> Vec<Request> {
        let primary = &self.description.primary;
        match &watch.mapping {
            Mapping::Owner => mapping::both_sides(change, |o| mapping::by_owner(primary, o)),
            Mapping::Label(label) => {
                mapping::both_sides(change, |o| mapping::by_label(primary, label, o))
            }
            Mapping::Reference(path) => {
                mapping::both_sides(change, |o| mapping::by_reference(primary, path, o))
            }
            Mapping::FieldIndex(index) => change
                .object()
                .and_then(key_of)
                .map(|key| self.indexes.lookup(index, &key))
                .unwrap_or_default(),
            Mapping::Via { kind, index } => self.map_via(kind, index, change),
        }
    }

    /// Two steps: the watched objects of `kind` whose index `index` names the changed
    /// object, each mapped by `kind`'s own watch.
    fn map_via(&self, kind: &KindRef, index: &str, change: &Change) -> Vec<Request> {
        let Some(key) = change.object().and_then(key_of) else {
            return Vec::new();
        };
        let Some(step) = self
            .description
            .watches
            .iter()
            .find(|w| same_kind(&w.kind, kind) && !matches!(w.mapping, Mapping::Via { .. }))
        else {
            return Vec::new();
        };
        let Some(informer) = self.informers.get(&kind.api_version, &kind.kind) else {
            return Vec::new();
        };
        let mut requests: Vec<Request> = self
            .indexes
            .lookup(index, &key)
            .iter()
            .filter_map(|r| {
                informer.get(&wasm_operator_types::object_key(
                    r.namespace.as_deref(),
                    &r.name,
                ))
            })
            .flat_map(|intermediate| {
                let change = Change {
                    old: None,
                    new: Some(intermediate),
                };
                self.map(step, &change)
            })
            .collect();
        requests.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        requests.dedup();
        requests
    }
}

fn same_kind(a: &KindRef, b: &KindRef) -> bool {
    a.api_version == b.api_version && a.kind == b.kind
}
