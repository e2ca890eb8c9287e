//! A cluster held in memory, so a boundary measurement times the guest and the WIT
//! crossing, not the API server: reads answer from a map, writes echo what was sent.

use std::collections::HashMap;

use async_trait::async_trait;
use serde_json::Value;
use wasm_operator_sdk::{
    ApiError, DeleteOptions, Event, KindRef, ListOptions, ObjectRef, Owner, Patch, ReadFrom,
};

use wasm_operator_runtime::backend::{Caller, ClusterBackend};

/// Objects by `kind/namespace/name`; every write succeeds and stores nothing.
#[derive(Default)]
pub struct MemoryCluster {
    objects: HashMap<String, Value>,
}

fn key(object: &ObjectRef) -> String {
    format!(
        "{}/{}/{}",
        object.kind,
        object.namespace.as_deref().unwrap_or_default(),
        object.name
    )
}

impl MemoryCluster {
    /// A cluster holding `objects`.
    pub fn with(objects: impl IntoIterator<Item = Value>) -> Result<Self, ApiError> {
        let mut map = HashMap::new();
        for object in objects {
            let reference =
                ObjectRef::from_object(&object).map_err(|e| ApiError::Invalid(e.to_string()))?;
            map.insert(key(&reference), object);
        }
        Ok(Self { objects: map })
    }
}

#[async_trait]
impl ClusterBackend for MemoryCluster {
    async fn get(&self, object: &ObjectRef, _from: ReadFrom) -> Result<Option<Value>, ApiError> {
        Ok(self.objects.get(&key(object)).cloned())
    }

    async fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        _options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        let prefix = format!("{}/{}/", kind.kind, namespace.unwrap_or_default());
        Ok(self
            .objects
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .map(|(_, v)| v.clone())
            .collect())
    }

    async fn apply(
        &self,
        _caller: &Caller,
        object: Value,
        _owner: Option<&Owner>,
    ) -> Result<Value, ApiError> {
        Ok(object)
    }

    async fn create(&self, _caller: &Caller, object: Value) -> Result<Value, ApiError> {
        Ok(object)
    }

    async fn patch(
        &self,
        _caller: &Caller,
        object: &ObjectRef,
        _patch: &Patch,
        _resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.objects
            .get(&key(object))
            .cloned()
            .ok_or_else(|| ApiError::NotFound(key(object)))
    }

    async fn delete(&self, _object: &ObjectRef, _options: &DeleteOptions) -> Result<(), ApiError> {
        Ok(())
    }

    async fn update_status(&self, _caller: &Caller, object: Value) -> Result<Value, ApiError> {
        Ok(object)
    }

    async fn record_event(
        &self,
        _caller: &Caller,
        _regarding: &ObjectRef,
        _event: &Event,
    ) -> Result<(), ApiError> {
        Ok(())
    }
}
