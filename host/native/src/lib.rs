//! Reconcilers run natively: the same reconciler crate, linked into the host, against the
//! same [`ClusterBackend`] and the same permission checks as its `.wasm` build. This is how
//! the cost of wasm is measured (same code, same host, same cluster).

use std::sync::Arc;

use serde_json::Value;
use tokio::runtime::Handle;
use wasm_operator_sdk::{
    self as sdk, ApiError, DeleteOptions, Event, KindRef, ListOptions, ObjectRef, Outcome, Owner,
    Patch, ReadFrom, ReconcileError, Reconciler, Request,
};

use wasm_operator_runtime::backend::ClusterBackend;

use wasm_operator_runtime::backend::access::Access;
use wasm_operator_runtime::backend::checked::Checked;

/// The SDK's [`Cluster`](sdk::Cluster), served natively by the plugin's [`Checked`] view
/// of a backend. Its calls block the calling thread: use it from a blocking thread (see
/// [`reconcile_native`]).
pub struct NativeCluster {
    cluster: Checked,
    handle: Handle,
}

impl NativeCluster {
    /// The cluster of a pass of the plugin `description` describes over `request`'s
    /// primary, with `access` beyond its namespace (as `plugins.toml` grants it), on the
    /// current tokio runtime.
    pub fn new(
        backend: Arc<dyn ClusterBackend>,
        description: &sdk::Description,
        access: Access,
        request: &Request,
        handle: Handle,
    ) -> Self {
        Self {
            cluster: Checked::for_pass(backend, description, access, request),
            handle,
        }
    }
}

impl sdk::Cluster for NativeCluster {
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        self.handle.block_on(self.cluster.get(object, from))
    }

    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        self.handle
            .block_on(self.cluster.list(kind, namespace, options))
    }

    fn apply(&self, object: &Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        self.handle
            .block_on(self.cluster.apply(object.clone(), owner))
    }

    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        self.handle.block_on(self.cluster.create(object.clone()))
    }

    fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.handle
            .block_on(self.cluster.patch(object, patch, resource_version))
    }

    fn delete_with(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError> {
        self.handle.block_on(self.cluster.delete(object, options))
    }

    fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        self.handle.block_on(self.cluster.served(kind))
    }

    fn create_subresource(
        &self,
        object: &ObjectRef,
        subresource: &str,
        body: &Value,
    ) -> Result<Value, ApiError> {
        self.handle.block_on(
            self.cluster
                .create_subresource(object, subresource, body.clone()),
        )
    }

    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        self.handle
            .block_on(self.cluster.update_status(object.clone()))
    }

    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        self.handle
            .block_on(self.cluster.record_event(regarding, event))
    }
}

/// Runs one pass of `R` natively on tokio's blocking pool, with no access beyond its
/// primary's namespace.
pub async fn reconcile_native<R: Reconciler + 'static>(
    backend: Arc<dyn ClusterBackend>,
    request: Request,
) -> Result<Outcome, ReconcileError> {
    reconcile_native_with::<R>(backend, Access::default(), request).await
}

/// [`reconcile_native`] with `access` granted, as the `.wasm` build gets it from
/// `plugins.toml`.
pub async fn reconcile_native_with<R: Reconciler + 'static>(
    backend: Arc<dyn ClusterBackend>,
    access: Access,
    request: Request,
) -> Result<Outcome, ReconcileError> {
    let cluster = NativeCluster::new(backend, &R::describe(), access, &request, Handle::current());
    tokio::task::spawn_blocking(move || R::reconcile(&cluster, &request))
        .await
        .map_err(|e| ReconcileError::Transient(format!("the native pass did not finish: {e}")))?
}
