//! The cluster a plugin's `cluster` capability serves from.
//!
//! [`ClusterBackend`] is the host-side shape of the WIT `cluster` interface; the operator
//! implements it with a kube-rs client and with its shared informer caches. [`checked`]
//! stands in front of every backend a guest reaches and enforces the verbs and kinds the
//! plugin declared, in the namespaces it was granted.

pub mod access;
mod bodies;
pub mod checked;
pub mod remote;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use wasm_operator_types::{
    ApiError, DeleteOptions, Event, KindRef, ListOptions, ObjectRef, Owner, Patch, ReadFrom,
};

/// The name and field manager of the host's own writes (failure reports, refusal events);
/// no plugin may take it (`describe()` validation refuses it).
pub const HOST_IDENTITY: &str = "wasm-operator";

/// Who makes a call: the plugin's name (event reporter) and its field manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The plugin's name.
    pub plugin: String,
    /// The field manager of its applies and writes.
    pub field_manager: String,
}

impl Caller {
    /// The host itself.
    pub fn host() -> Self {
        Self {
            plugin: HOST_IDENTITY.into(),
            field_manager: HOST_IDENTITY.into(),
        }
    }
}

/// A cluster the host can serve plugins from.
#[async_trait]
pub trait ClusterBackend: Send + Sync {
    /// Reads one object; `None` when it does not exist.
    async fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError>;

    /// Lists the objects of a kind in one namespace or all.
    async fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError>;

    /// [`get`](Self::get) for a caller that only reads the object: a backend that holds
    /// objects (a cache) shares them instead of copying.
    async fn get_shared(
        &self,
        object: &ObjectRef,
        from: ReadFrom,
    ) -> Result<Option<Arc<Value>>, ApiError> {
        Ok(self.get(object, from).await?.map(Arc::new))
    }

    /// [`list`](Self::list) for a caller that only reads the objects (see
    /// [`get_shared`](Self::get_shared)).
    async fn list_shared(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Arc<Value>>, ApiError> {
        Ok(self
            .list(kind, namespace, options)
            .await?
            .into_iter()
            .map(Arc::new)
            .collect())
    }

    /// Server-side applies `object` under the caller's field manager with force.
    async fn apply(
        &self,
        caller: &Caller,
        object: Value,
        owner: Option<&Owner>,
    ) -> Result<Value, ApiError>;

    /// Creates `object`.
    async fn create(&self, caller: &Caller, object: Value) -> Result<Value, ApiError>;

    /// Patches one object, conditional on `resource_version` when given.
    async fn patch(
        &self,
        caller: &Caller,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError>;

    /// Deletes one object, under `options.preconditions` (409 when they fail).
    async fn delete(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError>;

    /// Whether the cluster serves `kind` (its api-version, kind and plural), from discovery.
    async fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        Err(ApiError::Unavailable(format!(
            "this cluster backend cannot tell whether {kind} is served"
        )))
    }

    /// Creates `body` on subresource `subresource` of `object` (e.g. a TokenRequest on a
    /// ServiceAccount's `token`); the server's answer.
    async fn create_subresource(
        &self,
        caller: &Caller,
        object: &ObjectRef,
        subresource: &str,
        body: Value,
    ) -> Result<Value, ApiError> {
        let _ = (caller, body);
        Err(ApiError::Other(format!(
            "this cluster backend cannot create {subresource} of {object}"
        )))
    }

    /// Replaces the status subresource of `object`.
    async fn update_status(&self, caller: &Caller, object: Value) -> Result<Value, ApiError>;

    /// Records an event about `regarding`, aggregating repeats into a series.
    async fn record_event(
        &self,
        caller: &Caller,
        regarding: &ObjectRef,
        event: &Event,
    ) -> Result<(), ApiError>;
}
