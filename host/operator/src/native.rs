//! Reconcilers run natively: the same reconciler crate, linked into the host, against the
//! same [`ClusterBackend`] and the same permission checks as its `.wasm` build. This is how
//! the cost of wasm is measured (same code, same host, same cluster).

use std::sync::Arc;

use serde_json::Value;
use tokio::runtime::Handle;
use wasm_operator_sdk::{
    self as sdk, ApiError, Event, KindRef, ListOptions, ObjectRef, Outcome, Owner, Patch,
    Propagation, ReadFrom, ReconcileError, Reconciler, Request, Verb,
};

use crate::capabilities::cluster::Permissions;
use crate::cluster::{Caller, ClusterBackend};

/// The SDK's [`Cluster`](sdk::Cluster), served natively by a [`ClusterBackend`]. Its calls
/// block the calling thread: use it from a blocking thread (see [`reconcile_native`]).
pub struct NativeCluster {
    backend: Arc<dyn ClusterBackend>,
    caller: Caller,
    permissions: Permissions,
    handle: Handle,
}

impl NativeCluster {
    /// The cluster of the plugin `description` describes, on the current tokio runtime.
    pub fn new(
        backend: Arc<dyn ClusterBackend>,
        description: &sdk::Description,
        handle: Handle,
    ) -> Self {
        Self {
            backend,
            caller: Caller {
                plugin: description.name.clone(),
                field_manager: description.field_manager.clone(),
            },
            permissions: Permissions::from_declared(&description.permissions),
            handle,
        }
    }

    fn allow(&self, verb: Verb, api_version: &str, kind: &str) -> Result<(), ApiError> {
        self.permissions
            .check(&self.caller.plugin, verb, api_version, kind)
    }
}

impl sdk::Cluster for NativeCluster {
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        self.allow(Verb::Get, &object.api_version, &object.kind)?;
        self.handle.block_on(self.backend.get(object, from))
    }

    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        self.allow(Verb::List, &kind.api_version, &kind.kind)?;
        self.handle
            .block_on(self.backend.list(kind, namespace, options))
    }

    fn apply(&self, object: &Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        let r = ObjectRef::from_object(object).map_err(|e| ApiError::Invalid(e.to_string()))?;
        self.allow(Verb::Patch, &r.api_version, &r.kind)?;
        self.handle
            .block_on(self.backend.apply(&self.caller, object.clone(), owner))
    }

    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        let r = ObjectRef::from_object(object).map_err(|e| ApiError::Invalid(e.to_string()))?;
        self.allow(Verb::Create, &r.api_version, &r.kind)?;
        self.handle
            .block_on(self.backend.create(&self.caller, object.clone()))
    }

    fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.allow(Verb::Patch, &object.api_version, &object.kind)?;
        self.handle.block_on(
            self.backend
                .patch(&self.caller, object, patch, resource_version),
        )
    }

    fn delete(&self, object: &ObjectRef, propagation: Propagation) -> Result<(), ApiError> {
        self.allow(Verb::Delete, &object.api_version, &object.kind)?;
        self.handle
            .block_on(self.backend.delete(object, propagation))
    }

    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        let r = ObjectRef::from_object(object).map_err(|e| ApiError::Invalid(e.to_string()))?;
        self.allow(Verb::UpdateStatus, &r.api_version, &r.kind)?;
        self.handle
            .block_on(self.backend.update_status(&self.caller, object.clone()))
    }

    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        self.handle
            .block_on(self.backend.record_event(&self.caller, regarding, event))
    }
}

/// Runs one pass of `R` natively on tokio's blocking pool.
pub async fn reconcile_native<R: Reconciler + 'static>(
    backend: Arc<dyn ClusterBackend>,
    request: Request,
) -> Result<Outcome, ReconcileError> {
    let cluster = NativeCluster::new(backend, &R::describe(), Handle::current());
    tokio::task::spawn_blocking(move || R::reconcile(&cluster, &request))
        .await
        .map_err(|e| ReconcileError::Transient(format!("the native pass did not finish: {e}")))?
}
