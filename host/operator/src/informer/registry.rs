//! The informers of one host: one per kind, started on first use, stopped when dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::api::Api;

use crate::cluster::raw::RawObject;
use tokio::task::AbortHandle;
use wasm_operator_types::KindRef;

use super::{Informer, api_resource};

/// What an informer watches: `(apiVersion, kind, label selector)`.
type Key = (String, String, Option<String>);

/// The running informers by what they watch, with their watch tasks.
type ByKind = HashMap<Key, (Arc<Informer>, AbortHandle)>;

/// Every informer of a host, keyed by `(apiVersion, kind)` and, for a plugin that narrows its
/// primary watch (contract 1.4), its label selector: such an informer holds only the objects
/// the selector matches, and serves only that plugin's primary.
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
        self.ensure_selected(kind, None)
    }

    /// The informer of the objects of `kind` that `selector` matches (every object for
    /// `None`), started now if it is not running yet. The selector was checked at load.
    pub fn ensure_selected(&self, kind: &KindRef, selector: Option<&str>) -> Arc<Informer> {
        let key = (
            kind.api_version.clone(),
            kind.kind.clone(),
            selector.map(str::to_owned),
        );
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
        let task = tokio::spawn(informer.clone().run(api, selector.map(str::to_owned)));
        running.insert(key, (informer.clone(), task.abort_handle()));
        informer
    }

    /// The running informer of every `apiVersion`/`kind` object, if any.
    pub(crate) fn get(&self, api_version: &str, kind: &str) -> Option<Arc<Informer>> {
        self.get_selected(api_version, kind, None)
    }

    /// The running informer of the `apiVersion`/`kind` objects `selector` matches, if any.
    pub(crate) fn get_selected(
        &self,
        api_version: &str,
        kind: &str,
        selector: Option<&str>,
    ) -> Option<Arc<Informer>> {
        self.lock()
            .get(&(
                api_version.to_owned(),
                kind.to_owned(),
                selector.map(str::to_owned),
            ))
            .map(|(informer, _)| informer.clone())
    }

    /// The `apiVersion/kind` of every running informer that has not synced yet, sorted.
    pub(crate) fn unsynced(&self) -> Vec<String> {
        let mut kinds: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, (informer, _))| !informer.is_synced())
            .map(|((v, k, selector), _)| match selector {
                Some(selector) => format!("{v}/{k} ({selector})"),
                None => format!("{v}/{k}"),
            })
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
