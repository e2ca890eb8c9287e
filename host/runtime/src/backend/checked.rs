//! A plugin's view of a [`ClusterBackend`]: every call checked against the verbs and kinds
//! the plugin declared, and made under its identity (field manager, event reporter).
//!
//! The WIT `cluster` capability and the native `Cluster` both go through it, so the verb a
//! call needs is decided in one place: get → get, list → list, apply → patch (server-side
//! apply is a PATCH), create → create, patch → patch, delete → delete, update-status →
//! update-status. Events are the host's own writes and need no declaration.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;
use wasm_operator_types::{
    self as shared, ApiError, Event, KindRef, ListOptions, ObjectRef, Owner, Patch, Propagation,
    ReadFrom, Verb,
};

use super::{Caller, ClusterBackend};

/// The verbs a plugin may use, per `(apiVersion, kind)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Permissions {
    verbs: BTreeMap<(String, String), BTreeSet<Verb>>,
}

impl Permissions {
    /// The permissions a plugin declared.
    pub(crate) fn from_declared(declared: &[shared::Permission]) -> Self {
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
    pub(crate) fn check(
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
            return Ok(());
        }
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

/// A backend as one plugin may use it.
pub struct Checked {
    backend: Arc<dyn ClusterBackend>,
    caller: Caller,
    permissions: Arc<Permissions>,
}

fn object_ref(object: &Value) -> Result<ObjectRef, ApiError> {
    ObjectRef::from_object(object).map_err(|e| ApiError::Invalid(e.to_string()))
}

impl Checked {
    /// `backend` as `caller`, limited to `permissions`.
    pub(crate) fn new(
        backend: Arc<dyn ClusterBackend>,
        caller: Caller,
        permissions: Arc<Permissions>,
    ) -> Self {
        Self {
            backend,
            caller,
            permissions,
        }
    }

    /// The plugin described by `description`, on `backend`.
    pub fn for_plugin(backend: Arc<dyn ClusterBackend>, description: &shared::Description) -> Self {
        let caller = Caller {
            plugin: description.name.clone(),
            field_manager: description.field_manager.clone(),
        };
        Self::new(
            backend,
            caller,
            Arc::new(Permissions::from_declared(&description.permissions)),
        )
    }

    fn allow(&self, verb: Verb, api_version: &str, kind: &str) -> Result<(), ApiError> {
        self.permissions
            .check(&self.caller.plugin, verb, api_version, kind)
    }

    /// Reads one object (`get`).
    pub async fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        self.allow(Verb::Get, &object.api_version, &object.kind)?;
        self.backend.get(object, from).await
    }

    /// Lists a kind (`list`).
    pub async fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        self.allow(Verb::List, &kind.api_version, &kind.kind)?;
        self.backend.list(kind, namespace, options).await
    }

    /// [`get`](Self::get), sharing a cached object instead of copying it.
    pub(crate) async fn get_shared(
        &self,
        object: &ObjectRef,
        from: ReadFrom,
    ) -> Result<Option<Arc<Value>>, ApiError> {
        self.allow(Verb::Get, &object.api_version, &object.kind)?;
        self.backend.get_shared(object, from).await
    }

    /// [`list`](Self::list), sharing cached objects instead of copying them.
    pub(crate) async fn list_shared(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Arc<Value>>, ApiError> {
        self.allow(Verb::List, &kind.api_version, &kind.kind)?;
        self.backend.list_shared(kind, namespace, options).await
    }

    /// Server-side applies (`patch`).
    pub async fn apply(&self, object: Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        let r = object_ref(&object)?;
        self.allow(Verb::Patch, &r.api_version, &r.kind)?;
        self.backend.apply(&self.caller, object, owner).await
    }

    /// Creates (`create`).
    pub async fn create(&self, object: Value) -> Result<Value, ApiError> {
        let r = object_ref(&object)?;
        self.allow(Verb::Create, &r.api_version, &r.kind)?;
        self.backend.create(&self.caller, object).await
    }

    /// Patches (`patch`).
    pub async fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.allow(Verb::Patch, &object.api_version, &object.kind)?;
        self.backend
            .patch(&self.caller, object, patch, resource_version)
            .await
    }

    /// Deletes (`delete`).
    pub async fn delete(
        &self,
        object: &ObjectRef,
        propagation: Propagation,
    ) -> Result<(), ApiError> {
        self.allow(Verb::Delete, &object.api_version, &object.kind)?;
        self.backend.delete(object, propagation).await
    }

    /// Writes the status subresource (`update-status`).
    pub async fn update_status(&self, object: Value) -> Result<Value, ApiError> {
        let r = object_ref(&object)?;
        self.allow(Verb::UpdateStatus, &r.api_version, &r.kind)?;
        self.backend.update_status(&self.caller, object).await
    }

    /// Records an event as the plugin.
    pub async fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        self.backend
            .record_event(&self.caller, regarding, event)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::KindRef;

    #[test]
    fn an_undeclared_verb_is_forbidden_naming_the_plugin_verb_and_kind() {
        let permissions = Permissions::from_declared(&[shared::Permission {
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
