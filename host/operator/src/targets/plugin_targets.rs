//! The target clusters as one plugin's passes open them.
//!
//! Per engaged target the plugin gets a [`TargetBackend`]: reads from the cache served by
//! that target's caches of the namespace called (its own writes kept until the caches catch
//! up, as on the plugin's own cluster), everything else by the target's API server. It is
//! kept while the target stays engaged as it is, and made anew when it is re-engaged.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use wasm_operator_runtime::backend::remote::{Target, TargetClusters, TargetError};
use wasm_operator_runtime::backend::{Caller, ClusterBackend};
use wasm_operator_types::{
    ApiError, DeleteOptions, Description, Event, KindRef, ListOptions, ObjectRef, Owner, Patch,
    ReadFrom,
};

use super::{EngagedTarget, Registered, TargetRegistry};
use crate::cluster::cached::CachedCluster;
use crate::controller::index::FieldIndexes;

/// The backend made for each target, with the engagement it was made for.
type Backends = HashMap<String, (Arc<EngagedTarget>, Arc<TargetBackend>)>;

/// One plugin's view of the registry.
pub(crate) struct PluginTargets {
    registry: Arc<TargetRegistry>,
    description: Description,
    backends: Mutex<Backends>,
}

impl PluginTargets {
    pub(crate) fn new(registry: Arc<TargetRegistry>, description: Description) -> Self {
        Self {
            registry,
            description,
            backends: Mutex::default(),
        }
    }

    fn backend(&self, target: &Arc<EngagedTarget>) -> Arc<TargetBackend> {
        let mut backends = self
            .backends
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((engaged, backend)) = backends.get(&target.name)
            && Arc::ptr_eq(engaged, target)
        {
            return backend.clone();
        }
        let indexes = Arc::new(FieldIndexes::default());
        let cached = target
            .informers
            .iter()
            .map(|(ns, informers)| {
                let cluster = CachedCluster::new(
                    target.server.clone(),
                    informers.clone(),
                    indexes.clone(),
                    &self.description,
                );
                (ns.clone(), Arc::new(cluster))
            })
            .collect();
        let backend = Arc::new(TargetBackend {
            server: target.server.clone(),
            cached,
        });
        backends.insert(target.name.clone(), (target.clone(), backend.clone()));
        backend
    }
}

#[async_trait]
impl TargetClusters for PluginTargets {
    async fn open(&self, name: &str) -> Result<Target, TargetError> {
        match self.registry.snapshot().get(name) {
            None => Err(TargetError::NotRegistered(name.to_owned())),
            Some(Registered::Unavailable { reason, .. }) => Err(TargetError::Unavailable {
                name: name.to_owned(),
                reason: reason.clone(),
            }),
            Some(Registered::Engaged(target)) => Ok(Target {
                backend: self.backend(target),
                namespaces: target.namespaces.clone(),
                services: Some(target.services.clone()),
            }),
        }
    }
}

/// A target as one plugin reaches it: calls routed by namespace to that namespace's
/// caches (or the all-namespaces ones), to the server when none holds it.
struct TargetBackend {
    server: Arc<dyn ClusterBackend>,
    cached: BTreeMap<Option<String>, Arc<CachedCluster>>,
}

impl TargetBackend {
    fn on(&self, namespace: Option<&str>) -> &dyn ClusterBackend {
        let scoped = namespace.and_then(|ns| self.cached.get(&Some(ns.to_owned())));
        match scoped.or_else(|| self.cached.get(&None)) {
            Some(cached) => cached.as_ref(),
            None => self.server.as_ref(),
        }
    }
}

fn namespace_of(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
}

#[async_trait]
impl ClusterBackend for TargetBackend {
    async fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        self.on(object.namespace.as_deref()).get(object, from).await
    }

    async fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        self.on(namespace).list(kind, namespace, options).await
    }

    async fn get_shared(
        &self,
        object: &ObjectRef,
        from: ReadFrom,
    ) -> Result<Option<Arc<Value>>, ApiError> {
        self.on(object.namespace.as_deref())
            .get_shared(object, from)
            .await
    }

    async fn list_shared(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Arc<Value>>, ApiError> {
        self.on(namespace)
            .list_shared(kind, namespace, options)
            .await
    }

    async fn apply(
        &self,
        caller: &Caller,
        object: Value,
        owner: Option<&Owner>,
    ) -> Result<Value, ApiError> {
        let ns = namespace_of(&object).map(str::to_owned);
        self.on(ns.as_deref()).apply(caller, object, owner).await
    }

    async fn create(&self, caller: &Caller, object: Value) -> Result<Value, ApiError> {
        let ns = namespace_of(&object).map(str::to_owned);
        self.on(ns.as_deref()).create(caller, object).await
    }

    async fn patch(
        &self,
        caller: &Caller,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.on(object.namespace.as_deref())
            .patch(caller, object, patch, resource_version)
            .await
    }

    async fn delete(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError> {
        self.on(object.namespace.as_deref())
            .delete(object, options)
            .await
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

    async fn update_status(&self, caller: &Caller, object: Value) -> Result<Value, ApiError> {
        let ns = namespace_of(&object).map(str::to_owned);
        self.on(ns.as_deref()).update_status(caller, object).await
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
