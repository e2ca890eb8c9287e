//! The watches a controller runs on target clusters: for every engaged target, each kind the
//! plugin watches there that the target serves (asked when it is engaged), mapped back to
//! primaries by the owner labels. A kind the target does not serve is not watched there (a
//! pass reads it as absent); one installed later is watched once the registration changes.
//! Whenever what is engaged changes, the watches are set up anew and every primary is queued
//! once, so a primary whose target appeared, changed or went is reconciled.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::Controller;
use crate::controller::mapping;
use crate::informer::Change;
use crate::targets::{Registered, Snapshot};

impl Controller {
    /// Follows the registry's snapshots until it is dropped.
    pub(super) async fn feed_targets(self: Arc<Self>, mut registered: watch::Receiver<Snapshot>) {
        loop {
            let snapshot = registered.borrow_and_update().clone();
            let mut feeds = JoinSet::new();
            for target in snapshot.values() {
                let Registered::Engaged(target) = target else {
                    continue;
                };
                let mut served = Vec::new();
                for kind in &self.description.targets.watches {
                    // An unanswered discovery watches the kind anyway: its informer retries.
                    if !matches!(target.server.served(kind).await, Ok(false)) {
                        served.push(kind);
                    }
                }
                for informers in target.informers.values() {
                    for kind in &served {
                        let changes = informers.ensure(kind).subscribe();
                        feeds.spawn(self.clone().feed_remote(changes));
                    }
                }
            }
            self.enqueue_every_primary();
            if registered.changed().await.is_err() {
                return;
            }
            feeds.abort_all();
        }
    }

    async fn feed_remote(self: Arc<Self>, mut changes: mpsc::UnboundedReceiver<Change>) {
        let labels = self.description.targets.owner_labels();
        let primary = &self.description.primary;
        while let Some(change) = changes.recv().await {
            for request in mapping::both_sides(&change, |object| {
                mapping::by_owner_labels(primary, &labels, object)
            }) {
                self.enqueue(request);
            }
        }
    }

    fn enqueue_every_primary(&self) {
        let informer = self.primary_informer();
        for object in informer.filter(|_| true) {
            if let Some(request) = mapping::request_of(&object) {
                self.enqueue(request);
            }
        }
    }
}
