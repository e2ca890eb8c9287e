//! The informers of one host: one per kind, started on first use, stopped when dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::api::Api;

use crate::cluster::raw::RawObject;
use tokio::task::AbortHandle;
use wasm_operator_types::KindRef;

use super::{Informer, api_resource};

/// The running informers by `(apiVersion, kind)`, with their watch tasks.
type ByKind = HashMap<(String, String), (Arc<Informer>, AbortHandle)>;

/// Every informer of a host, keyed by `(apiVersion, kind)`.
///
/// The key determines the resource watched because every kind reaching [`ensure`](Self::ensure)
/// comes from a description whose kinds were checked against API discovery at load
/// (`operator::kinds`): its plural and scope are the served ones, so no plugin can make a
/// cache watch another resource under a kind's name, or watch a namespaced kind
/// cluster-wide under `--namespace`.
pub struct Informers {
    client: kube::Client,
    namespace: Option<String>,
    running: Mutex<ByKind>,
}

impl Informers {
    /// Informers over `client`, watching only `namespace` (for namespaced kinds) when given.
    pub fn new(client: kube::Client, namespace: Option<String>) -> Self {
        Self {
            client,
            namespace,
            running: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ByKind> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The informer of `kind`, started now if it is not running yet.
    pub fn ensure(&self, kind: &KindRef) -> Arc<Informer> {
        let key = (kind.api_version.clone(), kind.kind.clone());
        let mut running = self.lock();
        if let Some((informer, _)) = running.get(&key) {
            return informer.clone();
        }
        let informer = Arc::new(Informer::new(kind.clone()));
        let resource = api_resource(kind);
        let api: Api<RawObject> = match (&self.namespace, kind.namespaced) {
            (Some(ns), true) => Api::namespaced_with(self.client.clone(), ns, &resource),
            _ => Api::all_with(self.client.clone(), &resource),
        };
        let task = tokio::spawn(informer.clone().run(api));
        running.insert(key, (informer.clone(), task.abort_handle()));
        informer
    }

    /// The running informer of `apiVersion`/`kind`, if any.
    pub(crate) fn get(&self, api_version: &str, kind: &str) -> Option<Arc<Informer>> {
        self.lock()
            .get(&(api_version.to_owned(), kind.to_owned()))
            .map(|(informer, _)| informer.clone())
    }

    /// The `apiVersion/kind` of every running informer that has not synced yet, sorted.
    pub(crate) fn unsynced(&self) -> Vec<String> {
        let mut kinds: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, (informer, _))| !informer.is_synced())
            .map(|((v, k), _)| format!("{v}/{k}"))
            .collect();
        kinds.sort();
        kinds
    }
}

impl Drop for Informers {
    fn drop(&mut self) {
        for (_, task) in self.lock().values() {
            task.abort();
        }
    }
}
