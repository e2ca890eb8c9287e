//! The `cluster` import: the WIT calls in SDK types, served by the pass's [`Checked`]
//! backend (which refuses what the plugin did not declare).

use std::sync::Arc;

use serde_json::Value;
use wasm_operator_types::{self as shared, ApiError};

use super::texts::{Texts, object_text};

use crate::backend::checked::Checked;
use crate::bindings::cluster::{self as wit, Host};
use crate::bindings::{client, egress, types};
use base64::Engine as _;

/// The cluster capability of one pass.
pub(crate) struct ClusterCtx {
    plugin: String,
    /// `None` while the plugin describes itself or computes an index: those must not use the
    /// cluster.
    cluster: Option<Checked>,
    /// The target clusters the pass may open, and the targets it opened.
    pub(crate) targets: super::targets::Targets,
    /// The Services of the last target opened, for the pass's HTTP requests (shared with
    /// the send hook).
    pub(crate) target_services: super::http::TargetServices,
    /// The certificates `egress.trust-ca` added for this pass's HTTPS requests (shared with
    /// the pass's HTTP send hook).
    pub(crate) trusted_ca: super::http::TrustedCas,
    /// The text of cached objects, shared by every pass of the runtime.
    texts: Arc<Texts>,
}

impl ClusterCtx {
    /// The capability of a reconcile pass.
    pub(crate) fn new(cluster: Checked, texts: Arc<Texts>) -> Self {
        Self {
            plugin: String::new(),
            cluster: Some(cluster),
            targets: Default::default(),
            target_services: Default::default(),
            trusted_ca: Default::default(),
            texts,
        }
    }

    /// A capability that refuses every call (for describe() and index()).
    pub(crate) fn none(plugin: &str) -> Self {
        Self {
            plugin: plugin.to_owned(),
            cluster: None,
            targets: Default::default(),
            target_services: Default::default(),
            trusted_ca: Default::default(),
            texts: Default::default(),
        }
    }

    /// The pass's own cluster (`None`) or the target it opened as resource `target`.
    pub(crate) fn view(&self, target: Option<u32>) -> Result<&Checked, ApiError> {
        match target {
            None => self.cluster(),
            Some(rep) => self.targets.opened(rep),
        }
    }

    pub(crate) fn cluster(&self) -> Result<&Checked, ApiError> {
        self.cluster.as_ref().ok_or_else(|| {
            ApiError::Forbidden(format!(
                "plugin {}: the cluster is not available outside reconcile()",
                self.plugin
            ))
        })
    }
}

/// The calls both interfaces serve (and `targets`, on an opened target), in the shared types.
impl ClusterCtx {
    pub(super) async fn do_get(
        &self,
        target: Option<u32>,
        object: types::ObjectRef,
        from: wit::ReadFrom,
    ) -> Result<Option<String>, ApiError> {
        let from = match from {
            wit::ReadFrom::Cache => shared::ReadFrom::Cache,
            wit::ReadFrom::Server => shared::ReadFrom::Server,
        };
        let found = self
            .view(target)?
            .get_shared(&object_ref(object), from)
            .await?;
        // A guest only ever gets the text: the cache's copy's, serialized once.
        Ok(found.map(|v| self.texts.of(&v).to_string()))
    }

    pub(super) async fn do_list(
        &self,
        target: Option<u32>,
        kind: types::KindRef,
        namespace: Option<String>,
        options: wit::ListOptions,
    ) -> Result<Vec<String>, ApiError> {
        let options = shared::ListOptions {
            label_selector: options.label_selector,
            field_index: options.field_index,
        };
        let listed = self
            .view(target)?
            .list_shared(&kind_ref(kind), namespace.as_deref(), &options)
            .await?;
        Ok(listed
            .iter()
            .map(|v| self.texts.of(v).to_string())
            .collect())
    }

    pub(super) async fn do_apply(
        &self,
        target: Option<u32>,
        object: String,
        owner: Option<wit::Owner>,
    ) -> Result<String, ApiError> {
        let owner = owner.map(|o| shared::Owner {
            api_version: o.api_version,
            kind: o.kind,
            name: o.name,
            uid: o.uid,
        });
        let stored = self
            .view(target)?
            .apply(parse(&object)?, owner.as_ref())
            .await?;
        Ok(object_text(&stored))
    }

    pub(super) async fn do_create(
        &self,
        target: Option<u32>,
        object: String,
    ) -> Result<String, ApiError> {
        let stored = self.view(target)?.create(parse(&object)?).await?;
        Ok(object_text(&stored))
    }

    pub(super) async fn do_patch(
        &self,
        target: Option<u32>,
        object: types::ObjectRef,
        patch_type: wit::PatchType,
        patch: String,
        resource_version: Option<String>,
    ) -> Result<String, ApiError> {
        let body = parse(&patch)?;
        let patch = match patch_type {
            wit::PatchType::Merge => shared::Patch::Merge(body),
            wit::PatchType::Json => shared::Patch::Json(body),
        };
        let stored = self
            .view(target)?
            .patch(&object_ref(object), &patch, resource_version.as_deref())
            .await?;
        Ok(object_text(&stored))
    }

    pub(super) async fn do_delete(
        &self,
        target: Option<u32>,
        object: types::ObjectRef,
        options: shared::DeleteOptions,
    ) -> Result<(), ApiError> {
        self.view(target)?
            .delete(&object_ref(object), &options)
            .await
    }

    async fn do_update_status(&self, object: String) -> Result<String, ApiError> {
        let stored = self.cluster()?.update_status(parse(&object)?).await?;
        Ok(object_text(&stored))
    }

    async fn do_record_event(
        &self,
        regarding: types::ObjectRef,
        event: wit::Event,
    ) -> Result<(), ApiError> {
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
    }
}

/// Contract 1.0's calls: an unserved kind is `not-found`, as the API server answers it.
impl Host for ClusterCtx {
    async fn get(
        &mut self,
        object: types::ObjectRef,
        from: wit::ReadFrom,
    ) -> Result<Option<String>, types::ApiError> {
        self.do_get(None, object, from).await.map_err(to_wit)
    }

    async fn list(
        &mut self,
        kind: types::KindRef,
        namespace: Option<String>,
        options: wit::ListOptions,
    ) -> Result<Vec<String>, types::ApiError> {
        self.do_list(None, kind, namespace, options)
            .await
            .map_err(to_wit)
    }

    async fn apply(
        &mut self,
        object: String,
        owner: Option<wit::Owner>,
    ) -> Result<String, types::ApiError> {
        self.do_apply(None, object, owner).await.map_err(to_wit)
    }

    async fn create(&mut self, object: String) -> Result<String, types::ApiError> {
        self.do_create(None, object).await.map_err(to_wit)
    }

    async fn patch(
        &mut self,
        object: types::ObjectRef,
        patch_type: wit::PatchType,
        patch: String,
        resource_version: Option<String>,
    ) -> Result<String, types::ApiError> {
        self.do_patch(None, object, patch_type, patch, resource_version)
            .await
            .map_err(to_wit)
    }

    async fn delete(
        &mut self,
        object: types::ObjectRef,
        propagation: wit::Propagation,
    ) -> Result<(), types::ApiError> {
        self.do_delete(None, object, propagation_of(propagation).into())
            .await
            .map_err(to_wit)
    }

    async fn update_status(&mut self, object: String) -> Result<String, types::ApiError> {
        self.do_update_status(object).await.map_err(to_wit)
    }

    async fn record_event(
        &mut self,
        regarding: types::ObjectRef,
        event: wit::Event,
    ) -> Result<(), types::ApiError> {
        self.do_record_event(regarding, event).await.map_err(to_wit)
    }
}

/// Contract 1.1's calls.
impl client::Host for ClusterCtx {
    async fn served(&mut self, kind: types::KindRef) -> Result<bool, types::CallError> {
        async { self.cluster()?.served(&kind_ref(kind)).await }
            .await
            .map_err(to_call_error)
    }

    async fn get(
        &mut self,
        object: types::ObjectRef,
        from: wit::ReadFrom,
    ) -> Result<Option<String>, types::CallError> {
        self.do_get(None, object, from).await.map_err(to_call_error)
    }

    async fn list(
        &mut self,
        kind: types::KindRef,
        namespace: Option<String>,
        options: wit::ListOptions,
    ) -> Result<Vec<String>, types::CallError> {
        self.do_list(None, kind, namespace, options)
            .await
            .map_err(to_call_error)
    }

    async fn apply(
        &mut self,
        object: String,
        owner: Option<wit::Owner>,
    ) -> Result<String, types::CallError> {
        self.do_apply(None, object, owner)
            .await
            .map_err(to_call_error)
    }

    async fn create(&mut self, object: String) -> Result<String, types::CallError> {
        self.do_create(None, object).await.map_err(to_call_error)
    }

    async fn create_subresource(
        &mut self,
        object: types::ObjectRef,
        subresource: String,
        body: String,
    ) -> Result<String, types::CallError> {
        async {
            let body = parse(&body)?;
            let stored = self
                .cluster()?
                .create_subresource(&object_ref(object), &subresource, body)
                .await?;
            Ok(object_text(&stored))
        }
        .await
        .map_err(to_call_error)
    }

    async fn patch(
        &mut self,
        object: types::ObjectRef,
        patch_type: wit::PatchType,
        patch: String,
        resource_version: Option<String>,
    ) -> Result<String, types::CallError> {
        self.do_patch(None, object, patch_type, patch, resource_version)
            .await
            .map_err(to_call_error)
    }

    async fn delete(
        &mut self,
        object: types::ObjectRef,
        options: client::DeleteOptions,
    ) -> Result<(), types::CallError> {
        self.do_delete(None, object, delete_options(options))
            .await
            .map_err(to_call_error)
    }

    async fn update_status(&mut self, object: String) -> Result<String, types::CallError> {
        self.do_update_status(object).await.map_err(to_call_error)
    }

    async fn record_event(
        &mut self,
        regarding: types::ObjectRef,
        event: wit::Event,
    ) -> Result<(), types::CallError> {
        self.do_record_event(regarding, event)
            .await
            .map_err(to_call_error)
    }
}

impl types::Host for ClusterCtx {}

/// Contract 1.1's `egress`: what the pass's HTTPS requests trust besides the platform roots.
impl egress::Host for ClusterCtx {
    async fn trust_ca(
        &mut self,
        secret: types::ObjectRef,
        key: String,
    ) -> Result<(), types::CallError> {
        let secret = object_ref(secret);
        async {
            if secret.api_version != "v1" || secret.kind != "Secret" {
                return Err(ApiError::Invalid(format!(
                    "trust-ca reads a v1 Secret, not {}/{}",
                    secret.api_version, secret.kind
                )));
            }
            // Where the pass's Services resolve: its last opened target, or its own cluster.
            let cluster = match self.targets.last_opened() {
                Some(target) => target,
                None => self.cluster()?,
            };
            let found = cluster
                .get_shared(&secret, shared::ReadFrom::Cache)
                .await?
                .ok_or_else(|| ApiError::NotFound(format!("{secret} does not exist")))?;
            let encoded = found
                .pointer(&format!(
                    "/data/{}",
                    key.replace('~', "~0").replace('/', "~1")
                ))
                .and_then(Value::as_str)
                .ok_or_else(|| ApiError::NotFound(format!("{secret} has no data key {key:?}")))?;
            let pem = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| {
                    ApiError::Invalid(format!("{secret} key {key:?} is not base64: {e}"))
                })?;
            let certs = super::http::parse_pem(&pem)
                .map_err(|m| ApiError::Invalid(format!("{secret} key {key:?} {m}")))?;
            self.trusted_ca
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(certs);
            Ok(())
        }
        .await
        .map_err(to_call_error)
    }
}

/// The largest object or patch text a guest may send: the request body limit of
/// kube-apiserver and the embedded API server. Larger text is refused before it is parsed,
/// so a guest cannot make the host parse (and hold) more than the server would take.
pub(crate) const MAX_BODY: usize = wasm_operator_types::MAX_REQUEST_BODY;

pub(super) fn parse(text: &str) -> Result<Value, ApiError> {
    if text.len() > MAX_BODY {
        return Err(ApiError::TooLarge(format!(
            "the plugin sent {} bytes; a request body is at most {MAX_BODY} bytes",
            text.len()
        )));
    }
    serde_json::from_str(text)
        .map_err(|e| ApiError::Invalid(format!("the plugin sent an object that is not JSON: {e}")))
}

pub(super) fn delete_options(options: client::DeleteOptions) -> shared::DeleteOptions {
    shared::DeleteOptions {
        propagation: propagation_of(options.propagation),
        preconditions: shared::Preconditions {
            uid: options.preconditions.uid,
            resource_version: options.preconditions.resource_version,
        },
    }
}

pub(super) fn kind_ref(k: types::KindRef) -> shared::KindRef {
    shared::KindRef {
        api_version: k.api_version,
        kind: k.kind,
        plural: k.plural,
        namespaced: k.namespaced,
    }
}

fn propagation_of(p: wit::Propagation) -> shared::Propagation {
    match p {
        wit::Propagation::Background => shared::Propagation::Background,
        wit::Propagation::Foreground => shared::Propagation::Foreground,
        wit::Propagation::Orphan => shared::Propagation::Orphan,
    }
}

pub(super) fn object_ref(r: types::ObjectRef) -> shared::ObjectRef {
    shared::ObjectRef {
        api_version: r.api_version,
        kind: r.kind,
        namespace: r.namespace,
        name: r.name,
    }
}

/// The 1.1 form of an API error.
pub(crate) fn to_call_error(error: ApiError) -> types::CallError {
    match error {
        ApiError::NotServed(m) => types::CallError::NotServed(m),
        other => types::CallError::Api(to_wit(other)),
    }
}

/// The 1.0 form of an API error: an unserved kind is `not-found`, as the API server
/// answers it.
pub(crate) fn to_wit(error: ApiError) -> types::ApiError {
    match error {
        ApiError::NotFound(m) | ApiError::NotServed(m) => types::ApiError::NotFound(m),
        ApiError::Conflict(m) => types::ApiError::Conflict(m),
        ApiError::Invalid(m) => types::ApiError::Invalid(m),
        ApiError::TooLarge(m) => types::ApiError::TooLarge(m),
        ApiError::Forbidden(m) => types::ApiError::Forbidden(m),
        ApiError::Gone(m) => types::ApiError::Gone(m),
        ApiError::Unavailable(m) => types::ApiError::Unavailable(m),
        ApiError::Other(m) => types::ApiError::Other(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_not_served_is_not_found_to_a_1_0_plugin_and_not_served_to_a_1_1_plugin() {
        let error = || ApiError::NotServed("no example.com/v1/Widget".into());
        assert!(matches!(
            to_wit(error()),
            types::ApiError::NotFound(m) if m == "no example.com/v1/Widget"
        ));
        assert!(matches!(
            to_call_error(error()),
            types::CallError::NotServed(m) if m == "no example.com/v1/Widget"
        ));
        assert!(matches!(
            to_call_error(ApiError::Unavailable("later".into())),
            types::CallError::Api(types::ApiError::Unavailable(m)) if m == "later"
        ));
    }
}
