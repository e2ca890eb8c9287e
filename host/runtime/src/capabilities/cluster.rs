//! The `cluster` import: the WIT calls in SDK types, served by the pass's [`Checked`]
//! backend (which refuses what the plugin did not declare).

use serde_json::Value;
use wasm_operator_types::{self as shared, ApiError};

use crate::backend::checked::Checked;
use crate::bindings::cluster::{self as wit, Host};
use crate::bindings::types;

/// The cluster capability of one pass.
pub(crate) struct ClusterCtx {
    plugin: String,
    /// `None` while the plugin describes itself or computes an index: those must not use the
    /// cluster.
    cluster: Option<Checked>,
}

impl ClusterCtx {
    /// The capability of a reconcile pass.
    pub(crate) fn new(cluster: Checked) -> Self {
        Self {
            plugin: String::new(),
            cluster: Some(cluster),
        }
    }

    /// A capability that refuses every call (for describe() and index()).
    pub(crate) fn none(plugin: &str) -> Self {
        Self {
            plugin: plugin.to_owned(),
            cluster: None,
        }
    }

    fn cluster(&self) -> Result<&Checked, types::ApiError> {
        self.cluster.as_ref().ok_or_else(|| {
            to_wit(ApiError::Forbidden(format!(
                "plugin {}: the cluster is not available outside reconcile()",
                self.plugin
            )))
        })
    }
}

impl Host for ClusterCtx {
    async fn get(
        &mut self,
        object: types::ObjectRef,
        from: wit::ReadFrom,
    ) -> Result<Option<String>, types::ApiError> {
        let from = match from {
            wit::ReadFrom::Cache => shared::ReadFrom::Cache,
            wit::ReadFrom::Server => shared::ReadFrom::Server,
        };
        let found = self
            .cluster()?
            .get_shared(&object_ref(object), from)
            .await
            .map_err(to_wit)?;
        // Serialized straight from the cache's copy: a guest only ever gets the text.
        Ok(found.map(|v| v.to_string()))
    }

    async fn list(
        &mut self,
        kind: types::KindRef,
        namespace: Option<String>,
        options: wit::ListOptions,
    ) -> Result<Vec<String>, types::ApiError> {
        let kind = shared::KindRef {
            api_version: kind.api_version,
            kind: kind.kind,
            plural: kind.plural,
            namespaced: kind.namespaced,
        };
        let options = shared::ListOptions {
            label_selector: options.label_selector,
            field_index: options.field_index,
        };
        let listed = self
            .cluster()?
            .list_shared(&kind, namespace.as_deref(), &options)
            .await
            .map_err(to_wit)?;
        Ok(listed.iter().map(|v| v.to_string()).collect())
    }

    async fn apply(
        &mut self,
        object: String,
        owner: Option<wit::Owner>,
    ) -> Result<String, types::ApiError> {
        let owner = owner.map(|o| shared::Owner {
            api_version: o.api_version,
            kind: o.kind,
            name: o.name,
            uid: o.uid,
        });
        let stored = self
            .cluster()?
            .apply(parse(&object)?, owner.as_ref())
            .await
            .map_err(to_wit)?;
        Ok(stored.to_string())
    }

    async fn create(&mut self, object: String) -> Result<String, types::ApiError> {
        Ok(self
            .cluster()?
            .create(parse(&object)?)
            .await
            .map_err(to_wit)?
            .to_string())
    }

    async fn patch(
        &mut self,
        object: types::ObjectRef,
        patch_type: wit::PatchType,
        patch: String,
        resource_version: Option<String>,
    ) -> Result<String, types::ApiError> {
        let body = parse(&patch)?;
        let patch = match patch_type {
            wit::PatchType::Merge => shared::Patch::Merge(body),
            wit::PatchType::Json => shared::Patch::Json(body),
        };
        let stored = self
            .cluster()?
            .patch(&object_ref(object), &patch, resource_version.as_deref())
            .await
            .map_err(to_wit)?;
        Ok(stored.to_string())
    }

    async fn delete(
        &mut self,
        object: types::ObjectRef,
        propagation: wit::Propagation,
    ) -> Result<(), types::ApiError> {
        let propagation = match propagation {
            wit::Propagation::Background => shared::Propagation::Background,
            wit::Propagation::Foreground => shared::Propagation::Foreground,
            wit::Propagation::Orphan => shared::Propagation::Orphan,
        };
        self.cluster()?
            .delete(&object_ref(object), propagation)
            .await
            .map_err(to_wit)
    }

    async fn update_status(&mut self, object: String) -> Result<String, types::ApiError> {
        Ok(self
            .cluster()?
            .update_status(parse(&object)?)
            .await
            .map_err(to_wit)?
            .to_string())
    }

    async fn record_event(
        &mut self,
        regarding: types::ObjectRef,
        event: wit::Event,
    ) -> Result<(), types::ApiError> {
        let event = shared::Event {
            event_type: match event.event_type {
                types::EventType::Normal => shared::EventType::Normal,
                types::EventType::Warning => shared::EventType::Warning,
            },
            reason: event.reason,
            action: event.action,
            note: event.note,
        };
        self.cluster()?
            .record_event(&object_ref(regarding), &event)
            .await
            .map_err(to_wit)
    }
}

impl types::Host for ClusterCtx {}

/// The largest object or patch text a guest may send: the request body limit of
/// kube-apiserver and the embedded API server. Larger text is refused before it is parsed,
/// so a guest cannot make the host parse (and hold) more than the server would take.
pub(crate) const MAX_BODY: usize = wasm_operator_types::MAX_REQUEST_BODY;

fn parse(text: &str) -> Result<Value, types::ApiError> {
    if text.len() > MAX_BODY {
        return Err(types::ApiError::TooLarge(format!(
            "the plugin sent {} bytes; a request body is at most {MAX_BODY} bytes",
            text.len()
        )));
    }
    serde_json::from_str(text).map_err(|e| {
        types::ApiError::Invalid(format!("the plugin sent an object that is not JSON: {e}"))
    })
}

fn object_ref(r: types::ObjectRef) -> shared::ObjectRef {
    shared::ObjectRef {
        api_version: r.api_version,
        kind: r.kind,
        namespace: r.namespace,
        name: r.name,
    }
}

/// The WIT form of an API error.
pub(crate) fn to_wit(error: ApiError) -> types::ApiError {
    match error {
        ApiError::NotFound(m) => types::ApiError::NotFound(m),
        ApiError::Conflict(m) => types::ApiError::Conflict(m),
        ApiError::Invalid(m) => types::ApiError::Invalid(m),
        ApiError::TooLarge(m) => types::ApiError::TooLarge(m),
        ApiError::Forbidden(m) => types::ApiError::Forbidden(m),
        ApiError::Gone(m) => types::ApiError::Gone(m),
        ApiError::Unavailable(m) => types::ApiError::Unavailable(m),
        ApiError::Other(m) => types::ApiError::Other(m),
    }
}
