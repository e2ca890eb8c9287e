//! The `cluster` import: every call checked against the plugin's declared permissions, then
//! served by the pass's [`ClusterBackend`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;
use wasm_operator_sdk::{self as sdk, ApiError, Verb};

use crate::bindings::cluster::{self as wit, Host};
use crate::bindings::types;
use crate::cluster::{Caller, ClusterBackend};

/// The verbs a plugin may use, per `(apiVersion, kind)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    verbs: BTreeMap<(String, String), BTreeSet<Verb>>,
}

impl Permissions {
    /// The permissions a plugin declared.
    pub fn from_declared(declared: &[sdk::Permission]) -> Self {
        let mut verbs: BTreeMap<(String, String), BTreeSet<Verb>> = BTreeMap::new();
        for p in declared {
            verbs
                .entry((p.kind.api_version.clone(), p.kind.kind.clone()))
                .or_default()
                .extend(p.verbs.iter().copied());
        }
        Self { verbs }
    }

    /// `Ok` when `verb` on the kind is declared; `forbidden` naming both otherwise.
    pub fn check(
        &self,
        plugin: &str,
        verb: Verb,
        api_version: &str,
        kind: &str,
    ) -> Result<(), ApiError> {
        let allowed = self
            .verbs
            .get(&(api_version.to_owned(), kind.to_owned()))
            .is_some_and(|v| v.contains(&verb));
        if allowed {
            Ok(())
        } else {
            tracing::warn!(
                plugin,
                verb = verb.as_str(),
                api_version,
                kind,
                "refused an undeclared call"
            );
            Err(ApiError::Forbidden(format!(
                "plugin {plugin} did not declare verb {} on {api_version}/{kind} in describe()",
                verb.as_str()
            )))
        }
    }
}

/// The cluster capability of one pass.
pub struct ClusterCtx {
    caller: Caller,
    permissions: Arc<Permissions>,
    /// `None` while the plugin describes itself: describe() must not use the cluster.
    backend: Option<Arc<dyn ClusterBackend>>,
}

impl ClusterCtx {
    /// The capability of a pass of `caller`, served by `backend`.
    pub fn new(
        caller: Caller,
        permissions: Arc<Permissions>,
        backend: Arc<dyn ClusterBackend>,
    ) -> Self {
        Self {
            caller,
            permissions,
            backend: Some(backend),
        }
    }

    /// A capability that refuses every call (for describe() and index()).
    pub fn none(caller: Caller) -> Self {
        Self {
            caller,
            permissions: Arc::default(),
            backend: None,
        }
    }

    fn allow(
        &self,
        verb: Verb,
        api_version: &str,
        kind: &str,
    ) -> Result<&dyn ClusterBackend, ApiError> {
        let backend = self.backend.as_deref().ok_or_else(|| {
            ApiError::Forbidden(format!(
                "plugin {}: the cluster is not available outside reconcile()",
                self.caller.plugin
            ))
        })?;
        self.permissions
            .check(&self.caller.plugin, verb, api_version, kind)?;
        Ok(backend)
    }
}

impl Host for ClusterCtx {
    async fn get(
        &mut self,
        object: types::ObjectRef,
        from: wit::ReadFrom,
    ) -> Result<Option<String>, types::ApiError> {
        let object = object_ref(object);
        let from = match from {
            wit::ReadFrom::Cache => sdk::ReadFrom::Cache,
            wit::ReadFrom::Server => sdk::ReadFrom::Server,
        };
        let backend = self
            .allow(Verb::Get, &object.api_version, &object.kind)
            .map_err(to_wit)?;
        backend
            .get(&object, from)
            .await
            .map(|o| o.map(|v| v.to_string()))
            .map_err(to_wit)
    }

    async fn list(
        &mut self,
        kind: types::KindRef,
        namespace: Option<String>,
        options: wit::ListOptions,
    ) -> Result<Vec<String>, types::ApiError> {
        let kind = sdk::KindRef {
            api_version: kind.api_version,
            kind: kind.kind,
            plural: kind.plural,
            namespaced: kind.namespaced,
        };
        let backend = self
            .allow(Verb::List, &kind.api_version, &kind.kind)
            .map_err(to_wit)?;
        let options = sdk::ListOptions {
            label_selector: options.label_selector,
            field_index: options.field_index,
        };
        let listed = backend
            .list(&kind, namespace.as_deref(), &options)
            .await
            .map_err(to_wit)?;
        Ok(listed.iter().map(Value::to_string).collect())
    }

    async fn apply(
        &mut self,
        object: String,
        owner: Option<wit::Owner>,
    ) -> Result<String, types::ApiError> {
        let object = parse(&object)?;
        let r = sdk::ObjectRef::from_object(&object)
            .map_err(|e| to_wit(ApiError::Invalid(e.to_string())))?;
        let backend = self
            .allow(Verb::Patch, &r.api_version, &r.kind)
            .map_err(to_wit)?;
        let owner = owner.map(|o| sdk::Owner {
            api_version: o.api_version,
            kind: o.kind,
            name: o.name,
            uid: o.uid,
        });
        let stored = backend
            .apply(&self.caller, object, owner.as_ref())
            .await
            .map_err(to_wit)?;
        Ok(stored.to_string())
    }

    async fn create(&mut self, object: String) -> Result<String, types::ApiError> {
        let object = parse(&object)?;
        let r = sdk::ObjectRef::from_object(&object)
            .map_err(|e| to_wit(ApiError::Invalid(e.to_string())))?;
        let backend = self
            .allow(Verb::Create, &r.api_version, &r.kind)
            .map_err(to_wit)?;
        Ok(backend
            .create(&self.caller, object)
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
        let object = object_ref(object);
        let body = parse(&patch)?;
        let patch = match patch_type {
            wit::PatchType::Merge => sdk::Patch::Merge(body),
            wit::PatchType::Json => sdk::Patch::Json(body),
        };
        let backend = self
            .allow(Verb::Patch, &object.api_version, &object.kind)
            .map_err(to_wit)?;
        let stored = backend
            .patch(&self.caller, &object, &patch, resource_version.as_deref())
            .await
            .map_err(to_wit)?;
        Ok(stored.to_string())
    }

    async fn delete(
        &mut self,
        object: types::ObjectRef,
        propagation: wit::Propagation,
    ) -> Result<(), types::ApiError> {
        let object = object_ref(object);
        let propagation = match propagation {
            wit::Propagation::Background => sdk::Propagation::Background,
            wit::Propagation::Foreground => sdk::Propagation::Foreground,
            wit::Propagation::Orphan => sdk::Propagation::Orphan,
        };
        let backend = self
            .allow(Verb::Delete, &object.api_version, &object.kind)
            .map_err(to_wit)?;
        backend.delete(&object, propagation).await.map_err(to_wit)
    }

    async fn update_status(&mut self, object: String) -> Result<String, types::ApiError> {
        let object = parse(&object)?;
        let r = sdk::ObjectRef::from_object(&object)
            .map_err(|e| to_wit(ApiError::Invalid(e.to_string())))?;
        let backend = self
            .allow(Verb::UpdateStatus, &r.api_version, &r.kind)
            .map_err(to_wit)?;
        Ok(backend
            .update_status(&self.caller, object)
            .await
            .map_err(to_wit)?
            .to_string())
    }

    async fn record_event(
        &mut self,
        regarding: types::ObjectRef,
        event: wit::Event,
    ) -> Result<(), types::ApiError> {
        let backend = self.backend.as_deref().ok_or_else(|| {
            to_wit(ApiError::Forbidden(format!(
                "plugin {}: no events outside reconcile()",
                self.caller.plugin
            )))
        })?;
        let event = sdk::Event {
            event_type: match event.event_type {
                types::EventType::Normal => sdk::EventType::Normal,
                types::EventType::Warning => sdk::EventType::Warning,
            },
            reason: event.reason,
            action: event.action,
            note: event.note,
        };
        backend
            .record_event(&self.caller, &object_ref(regarding), &event)
            .await
            .map_err(to_wit)
    }
}

impl types::Host for ClusterCtx {}

fn parse(text: &str) -> Result<Value, types::ApiError> {
    serde_json::from_str(text).map_err(|e| {
        types::ApiError::Invalid(format!("the plugin sent an object that is not JSON: {e}"))
    })
}

fn object_ref(r: types::ObjectRef) -> sdk::ObjectRef {
    sdk::ObjectRef {
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

#[cfg(test)]
mod tests {
    use super::*;
    use sdk::KindRef;

    #[test]
    fn an_undeclared_verb_is_forbidden_naming_the_plugin_verb_and_kind() {
        let permissions = Permissions::from_declared(&[sdk::Permission {
            kind: KindRef::of::<k8s_openapi::api::core::v1::Secret>(),
            verbs: vec![Verb::Get, Verb::List],
        }]);
        assert!(permissions.check("p", Verb::Get, "v1", "Secret").is_ok());
        let err = permissions
            .check("p", Verb::Delete, "v1", "Secret")
            .expect_err("undeclared");
        assert_eq!(
            err,
            ApiError::Forbidden(
                "plugin p did not declare verb delete on v1/Secret in describe()".into()
            )
        );
        assert!(
            permissions
                .check("p", Verb::Get, "v1", "ConfigMap")
                .is_err()
        );
    }
}
