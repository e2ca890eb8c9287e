//! A plugin's reads served from the shared watch caches.
//!
//! `get` and `list` "from the cache" are answered by the [informer](crate::informer) of the
//! kind when one runs and has synced, and go to the API server otherwise; `get` past the
//! cache always goes to the server. A `list` with a field index is answered from the
//! plugin's [field indexes](crate::controller::index), over its primary kind or over the
//! watched kind the index is declared on. Writes go to the server; the objects they
//! answer are served by later cache reads until the informer has caught up with them
//! ([`MutationCache`]), so a pass starts from the plugin's own last write.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use wasm_operator_types::LabelSelector;
use wasm_operator_types::{
    ApiError, DeleteOptions, Description, Event, KindRef, ListOptions, ObjectRef, Owner, Patch,
    ReadFrom, object::object_key,
};

use super::mutation_cache::MutationCache;
use crate::controller::index::FieldIndexes;
use crate::informer::Informers;
use wasm_operator_runtime::backend::{Caller, ClusterBackend};

/// The cluster as one plugin's controller serves it.
pub struct CachedCluster {
    server: Arc<dyn ClusterBackend>,
    informers: Arc<Informers>,
    indexes: Arc<FieldIndexes>,
    /// The kind each field index of the plugin is declared on.
    index_kinds: HashMap<String, KindRef>,
    /// The plugin's writes the informers may not have seen yet.
    written: MutationCache,
    /// The primary kind and the selector narrowing its watch, when the plugin declared one:
    /// with no informer of every object of that kind, reads of it are served from the
    /// narrowed one (an object the selector does not match reads as absent there).
    selected_primary: Option<(KindRef, String)>,
}

impl CachedCluster {
    /// Reads through `informers` (and `indexes`, declared by `description`), everything
    /// else on `server`.
    pub fn new(
        server: Arc<dyn ClusterBackend>,
        informers: Arc<Informers>,
        indexes: Arc<FieldIndexes>,
        description: &Description,
    ) -> Self {
        let index_kinds = description
            .indexes
            .iter()
            .map(|i| (i.name.clone(), description.primary.clone()))
            .chain(
                description
                    .watched_indexes
                    .iter()
                    .map(|i| (i.index.name.clone(), i.kind.clone())),
            )
            .collect();
        Self {
            server,
            informers,
            indexes,
            index_kinds,
            written: MutationCache::default(),
            selected_primary: description
                .primary_selector
                .clone()
                .map(|selector| (description.primary.clone(), selector)),
        }
    }

    /// `result`, its object kept for later cache reads when it succeeded.
    fn keep(&self, result: Result<Value, ApiError>) -> Result<Value, ApiError> {
        if let Ok(written) = &result {
            self.written.record(written);
        }
        result
    }

    fn synced(&self, api_version: &str, kind: &str) -> Option<Arc<crate::informer::Informer>> {
        self.informers
            .get(api_version, kind)
            .or_else(|| {
                let (primary, selector) = self.selected_primary.as_ref()?;
                (primary.api_version == api_version && primary.kind == kind)
                    .then(|| {
                        self.informers
                            .get_selected(api_version, kind, Some(selector))
                    })
                    .flatten()
            })
            .filter(|informer| informer.is_synced())
    }
}

fn namespace_of(object: &Value) -> Option<&str> {
    object.get("metadata")?.get("namespace")?.as_str()
}

#[async_trait]
impl ClusterBackend for CachedCluster {
    async fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        Ok(self
            .get_shared(object, from)
            .await?
            .map(Arc::unwrap_or_clone))
    }

    async fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        Ok(self
            .list_shared(kind, namespace, options)
            .await?
            .into_iter()
            .map(Arc::unwrap_or_clone)
            .collect())
    }

    async fn get_shared(
        &self,
        object: &ObjectRef,
        from: ReadFrom,
    ) -> Result<Option<Arc<Value>>, ApiError> {
        if from == ReadFrom::Cache
            && let Some(informer) = self.synced(&object.api_version, &object.kind)
        {
            let key = object_key(object.namespace.as_deref(), &object.name);
            return Ok(self.written.read(object, informer.get(&key)));
        }
        self.server.get_shared(object, from).await
    }

    async fn list_shared(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Arc<Value>>, ApiError> {
        let selector = options
            .label_selector
            .as_deref()
            .map(LabelSelector::parse)
            .transpose()
            .map_err(|e| ApiError::Invalid(format!("label selector: {e}")))?;
        let in_scope = |o: &Value| {
            namespace.is_none_or(|ns| namespace_of(o) == Some(ns))
                && selector.as_ref().is_none_or(|s| s.matches(o))
        };
        if let Some((index, key)) = &options.field_index {
            match self.index_kinds.get(index) {
                None => {
                    return Err(ApiError::Invalid(format!(
                        "field index {index} is not declared in describe()"
                    )));
                }
                Some(on) if on.api_version != kind.api_version || on.kind != kind.kind => {
                    return Err(ApiError::Invalid(format!(
                        "field index {index} is defined on {on}, not on {kind}"
                    )));
                }
                Some(_) => {}
            }
            let informer = self.synced(&kind.api_version, &kind.kind).ok_or_else(|| {
                ApiError::Unavailable(format!(
                    "the cache of {}/{} has not synced yet",
                    kind.api_version, kind.kind
                ))
            })?;
            let found = self
                .indexes
                .lookup(index, key)
                .iter()
                .filter_map(|r| informer.get(&object_key(r.namespace.as_deref(), &r.name)))
                .filter(|o| in_scope(o))
                .collect();
            return Ok(self.written.read_all(&kind.api_version, &kind.kind, found));
        }
        match self.synced(&kind.api_version, &kind.kind) {
            Some(informer) => {
                Ok(self
                    .written
                    .read_all(&kind.api_version, &kind.kind, informer.filter(in_scope)))
            }
            None => self.server.list_shared(kind, namespace, options).await,
        }
    }

    async fn apply(
        &self,
        caller: &Caller,
        object: Value,
        owner: Option<&Owner>,
    ) -> Result<Value, ApiError> {
        self.keep(self.server.apply(caller, object, owner).await)
    }

    async fn create(&self, caller: &Caller, object: Value) -> Result<Value, ApiError> {
        self.keep(self.server.create(caller, object).await)
    }

    async fn patch(
        &self,
        caller: &Caller,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.keep(
            self.server
                .patch(caller, object, patch, resource_version)
                .await,
        )
    }

    async fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        self.server.served(kind).await
    }

    async fn create_subresource(
        &self,
        caller: &Caller,
        object: &ObjectRef,
        subresource: &str,
        body: Value,
    ) -> Result<Value, ApiError> {
        self.server
            .create_subresource(caller, object, subresource, body)
            .await
    }

    async fn delete(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError> {
        self.written.forget(object);
        self.server.delete(object, options).await
    }

    async fn update_status(&self, caller: &Caller, object: Value) -> Result<Value, ApiError> {
        self.keep(self.server.update_status(caller, object).await)
    }

    async fn record_event(
        &self,
        caller: &Caller,
        regarding: &ObjectRef,
        event: &Event,
    ) -> Result<(), ApiError> {
        self.server.record_event(caller, regarding, event).await
    }
}
