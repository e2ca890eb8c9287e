//! A plugin's view of a [`ClusterBackend`]: every call checked against the verbs and kinds
//! the plugin declared, and made under its identity (field manager, event reporter).
//!
//! The WIT `cluster` capability and the native `Cluster` both go through it, so the verb a
//! call needs is decided in one place: get → get, list → list, apply → patch (server-side
//! apply is a PATCH), create → create, patch → patch, delete → delete, update-status →
//! update-status, create-subresource → create on that subresource (declared apart from the
//! kind's verbs). Events are the host's own writes and need no declaration.
//!
//! Where: a namespaced kind only in the pass's primary's namespace unless `plugins.toml`
//! grants more, a cluster-scoped kind only when granted (see [`super::access`]). What:
//! owner references (the `owner` of an apply, `metadata.ownerReferences` in a body or a
//! patch) only to the pass's primary with its current uid, no service-account-token
//! Secrets (see [`super::bodies`]), and events only about the primary or an object it owns.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use tokio::sync::OnceCell;
use wasm_operator_types::{
    self as shared, ApiError, DeleteOptions, Event, KindRef, ListOptions, ObjectRef, Owner, Patch,
    ReadFrom, Request, Verb,
};

use super::access::{Access, Permissions};
use super::bodies::{self, Primary};
use super::remote::{Remote, Target};
use super::{Caller, ClusterBackend};

/// A backend as one plugin may use it.
pub struct Checked {
    backend: Arc<dyn ClusterBackend>,
    caller: Caller,
    permissions: Arc<Permissions>,
    /// The pass's primary; its uid is read once, when an owner or an event needs it.
    primary: ObjectRef,
    primary_uid: OnceCell<Option<String>>,
    /// Whether the last write of the pass was answered 409 Conflict.
    conflicted: Arc<AtomicBool>,
    /// Whether writes are refused (an admission call: it reads, it never writes).
    read_only: bool,
    /// Set on a view of a target cluster: its scope and owner labels.
    remote: Option<Arc<Remote>>,
}

fn object_ref(object: &Value) -> Result<ObjectRef, ApiError> {
    ObjectRef::from_object(object).map_err(|e| ApiError::Invalid(e.to_string()))
}

fn namespace_of(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
}

impl Checked {
    /// `backend` as `caller` in a pass over `primary`, limited to `permissions`.
    pub(crate) fn new(
        backend: Arc<dyn ClusterBackend>,
        caller: Caller,
        permissions: Arc<Permissions>,
        primary: ObjectRef,
    ) -> Self {
        Self {
            backend,
            caller,
            permissions,
            primary,
            primary_uid: OnceCell::new(),
            conflicted: Arc::new(AtomicBool::new(false)),
            read_only: false,
            remote: None,
        }
    }

    /// A view of `target` (registered as `name`) for the same pass: the same plugin checks,
    /// the registration's namespace scope, and owners written as the owner labels of
    /// `owner_labels`. The primary's uid is read here, on this (the primary's) cluster.
    pub(crate) async fn on_target(
        &self,
        name: &str,
        target: Target,
        owner_labels: [String; 3],
    ) -> Result<Self, ApiError> {
        let uid = self.primary().await?.uid;
        Ok(Self {
            backend: target.backend,
            caller: self.caller.clone(),
            permissions: self.permissions.clone(),
            primary: self.primary.clone(),
            primary_uid: OnceCell::new_with(Some(uid.clone())),
            conflicted: self.conflicted.clone(),
            read_only: self.read_only,
            remote: Some(Arc::new(Remote::new(
                name,
                owner_labels,
                &self.primary,
                uid.as_deref(),
                target.namespaces,
            ))),
        })
    }

    /// This view with every write (apply, create, patch, delete, update-status,
    /// create-subresource, events) refused with `forbidden`: what an admission call gets.
    pub(crate) fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Refuses `what` when this view is read-only.
    fn writable(&self, what: &str, target: &dyn std::fmt::Display) -> Result<(), ApiError> {
        if !self.read_only {
            return Ok(());
        }
        tracing::warn!(plugin = %self.caller.plugin, %target, what, "refused a write during admission");
        Err(ApiError::Forbidden(format!(
            "plugin {}: admission may not write to the cluster (a {what} of {target})",
            self.caller.plugin
        )))
    }

    /// A flag that holds whether the last write (apply, create, patch, delete,
    /// update-status, create-subresource) made through this view was answered 409 Conflict:
    /// a pass that fails after it ended in a conflict (a stale read, a failed precondition,
    /// an object that already exists).
    pub fn conflicted(&self) -> Arc<AtomicBool> {
        self.conflicted.clone()
    }

    /// Notes whether a write's `result` was a conflict, and passes it on.
    fn note<T>(&self, result: Result<T, ApiError>) -> Result<T, ApiError> {
        let conflict = matches!(result, Err(ApiError::Conflict(_)));
        self.conflicted.store(conflict, Ordering::Relaxed);
        result
    }

    /// A pass of the plugin described by `description` over `request`'s primary, on
    /// `backend`, with `access` beyond the primary's namespace.
    pub fn for_pass(
        backend: Arc<dyn ClusterBackend>,
        description: &shared::Description,
        access: Access,
        request: &Request,
    ) -> Self {
        let caller = Caller {
            plugin: description.name.clone(),
            field_manager: description.field_manager.clone(),
        };
        Self::new(
            backend,
            caller,
            Arc::new(Permissions::of(description, access)),
            request.object(&description.primary),
        )
    }

    fn allow(
        &self,
        verb: Verb,
        api_version: &str,
        kind: &str,
        target: Option<&str>,
    ) -> Result<(), ApiError> {
        self.permissions.check(
            &self.caller.plugin,
            verb,
            (api_version, kind),
            target,
            self.primary.namespace.as_deref(),
        )?;
        match &self.remote {
            Some(remote) => remote.check_namespace(&self.caller.plugin, target),
            None => Ok(()),
        }
    }

    /// A write's answer as the plugin reads it (see [`Remote::present`]).
    fn presented(&self, result: Result<Value, ApiError>) -> Result<Value, ApiError> {
        match &self.remote {
            Some(remote) => result.map(|v| Arc::unwrap_or_clone(remote.present(Arc::new(v)))),
            None => result,
        }
    }

    /// `body` as it is written: on a target, its owner as the owner labels.
    fn written(&self, mut body: Value, owner: bool) -> Result<Value, ApiError> {
        if let Some(remote) = &self.remote {
            remote.ownerize(&self.caller.plugin, &mut body, owner)?;
        }
        Ok(body)
    }

    /// The primary, with its uid read only when `owners` says a write names owners (the
    /// Secret-type checks need no uid).
    async fn primary_for(&self, owners: bool) -> Result<Primary, ApiError> {
        if owners {
            return self.primary().await;
        }
        Ok(Primary {
            object: self.primary.clone(),
            uid: None,
        })
    }

    /// The primary with its uid as the cache (or the server) has it now.
    async fn primary(&self) -> Result<Primary, ApiError> {
        let uid = self
            .primary_uid
            .get_or_try_init(|| async {
                let found = self
                    .backend
                    .get_shared(&self.primary, ReadFrom::Cache)
                    .await?;
                Ok::<_, ApiError>(found.and_then(|o| {
                    o.pointer("/metadata/uid")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                }))
            })
            .await?;
        Ok(Primary {
            object: self.primary.clone(),
            uid: uid.clone(),
        })
    }

    /// Checks the owner references and the Secret type of an apply or create body.
    async fn check_body(&self, target: &ObjectRef, body: &Value) -> Result<(), ApiError> {
        self.primary_for(bodies::body_names_owners(body))
            .await?
            .check_body(&self.caller.plugin, target, body)
    }

    /// Reads one object (`get`).
    pub async fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        self.allow(
            Verb::Get,
            &object.api_version,
            &object.kind,
            object.namespace.as_deref(),
        )?;
        if self.remote.is_some() {
            let found = self.get_shared(object, from).await?;
            return Ok(found.map(Arc::unwrap_or_clone));
        }
        self.backend.get(object, from).await
    }

    /// Lists a kind (`list`).
    pub async fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        self.allow(Verb::List, &kind.api_version, &kind.kind, namespace)?;
        self.no_index_on_target(options)?;
        if self.remote.is_some() {
            let listed = self.list_shared(kind, namespace, options).await?;
            return Ok(listed.into_iter().map(Arc::unwrap_or_clone).collect());
        }
        self.backend.list(kind, namespace, options).await
    }

    /// Refuses a field-index list on a target: indexes live on the primary's cluster.
    fn no_index_on_target(&self, options: &ListOptions) -> Result<(), ApiError> {
        match (&self.remote, &options.field_index) {
            (Some(remote), Some((index, _))) => Err(ApiError::Forbidden(format!(
                "plugin {}: field index {index:?} is not served on target cluster {:?}; indexes live on the primary's cluster",
                self.caller.plugin, remote.name
            ))),
            _ => Ok(()),
        }
    }

    /// [`get`](Self::get), sharing a cached object instead of copying it.
    pub(crate) async fn get_shared(
        &self,
        object: &ObjectRef,
        from: ReadFrom,
    ) -> Result<Option<Arc<Value>>, ApiError> {
        self.allow(
            Verb::Get,
            &object.api_version,
            &object.kind,
            object.namespace.as_deref(),
        )?;
        let found = self.backend.get_shared(object, from).await?;
        Ok(match &self.remote {
            Some(remote) => found.map(|o| remote.present(o)),
            None => found,
        })
    }

    /// [`list`](Self::list), sharing cached objects instead of copying them.
    pub(crate) async fn list_shared(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Arc<Value>>, ApiError> {
        self.allow(Verb::List, &kind.api_version, &kind.kind, namespace)?;
        self.no_index_on_target(options)?;
        let listed = self.backend.list_shared(kind, namespace, options).await?;
        Ok(match &self.remote {
            Some(remote) => listed.into_iter().map(|o| remote.present(o)).collect(),
            None => listed,
        })
    }

    /// Server-side applies (`patch`).
    pub async fn apply(&self, object: Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        let r = object_ref(&object)?;
        self.writable("server-side apply", &r)?;
        self.allow(Verb::Patch, &r.api_version, &r.kind, namespace_of(&object))?;
        self.check_body(&r, &object).await?;
        if let Some(owner) = owner {
            self.primary()
                .await?
                .check_owner(&self.caller.plugin, owner, &r)?;
        }
        if self.remote.is_some() {
            let object = self.written(object, owner.is_some())?;
            let stored = self.backend.apply(&self.caller, object, None).await;
            return self.presented(self.note(stored));
        }
        self.note(self.backend.apply(&self.caller, object, owner).await)
    }

    /// Creates (`create`).
    pub async fn create(&self, object: Value) -> Result<Value, ApiError> {
        let r = object_ref(&object)?;
        self.writable("create", &r)?;
        self.allow(Verb::Create, &r.api_version, &r.kind, namespace_of(&object))?;
        self.check_body(&r, &object).await?;
        let object = self.written(object, false)?;
        let stored = self.backend.create(&self.caller, object).await;
        self.presented(self.note(stored))
    }

    /// Patches (`patch`).
    pub async fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.writable("patch", object)?;
        self.allow(
            Verb::Patch,
            &object.api_version,
            &object.kind,
            object.namespace.as_deref(),
        )?;
        self.primary_for(bodies::patch_names_owners(patch))
            .await?
            .check_patch(&self.caller.plugin, object, patch)?;
        let remote_patch = match &self.remote {
            Some(remote) => Some(remote.ownerize_patch(&self.caller.plugin, patch)?),
            None => None,
        };
        let result = self
            .backend
            .patch(
                &self.caller,
                object,
                remote_patch.as_ref().unwrap_or(patch),
                resource_version,
            )
            .await;
        self.presented(self.note(result))
    }

    /// Deletes (`delete`).
    pub async fn delete(
        &self,
        object: &ObjectRef,
        options: &DeleteOptions,
    ) -> Result<(), ApiError> {
        self.writable("delete", object)?;
        self.allow(
            Verb::Delete,
            &object.api_version,
            &object.kind,
            object.namespace.as_deref(),
        )?;
        self.note(self.backend.delete(object, options).await)
    }

    /// Whether the cluster serves `kind`, which the plugin must have declared.
    pub async fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        if !self.permissions.declares(&kind.api_version, &kind.kind) {
            tracing::warn!(plugin = %self.caller.plugin, %kind, "refused a kind probe");
            return Err(ApiError::Forbidden(format!(
                "plugin {}: did not declare {kind} in describe(), so it may not probe it",
                self.caller.plugin
            )));
        }
        self.backend.served(kind).await
    }

    /// Creates `body` on a subresource of `object` (`create-subresource`): the plugin must
    /// have declared `create` on that subresource of the kind, and the object must be within
    /// its namespace reach, as for any other verb.
    pub async fn create_subresource(
        &self,
        object: &ObjectRef,
        subresource: &str,
        body: Value,
    ) -> Result<Value, ApiError> {
        self.writable(subresource, object)?;
        self.permissions.check_subresource(
            &self.caller.plugin,
            Verb::Create,
            (&object.api_version, &object.kind, subresource),
            object.namespace.as_deref(),
            self.primary.namespace.as_deref(),
        )?;
        if let Some(remote) = &self.remote {
            remote.check_namespace(&self.caller.plugin, object.namespace.as_deref())?;
        }
        let result = self
            .backend
            .create_subresource(&self.caller, object, subresource, body)
            .await;
        self.note(result)
    }

    /// Writes the status subresource (`update-status`).
    pub async fn update_status(&self, object: Value) -> Result<Value, ApiError> {
        let r = object_ref(&object)?;
        self.writable("status update", &r)?;
        self.allow(
            Verb::UpdateStatus,
            &r.api_version,
            &r.kind,
            namespace_of(&object),
        )?;
        self.note(self.backend.update_status(&self.caller, object).await)
    }

    /// Records an event as the plugin: only about its primary, or an object its primary
    /// owns.
    pub async fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        self.writable("event", regarding)?;
        if *regarding != self.primary {
            let uid = self.primary().await?.uid;
            let owned = match (&uid, regarding.namespace == self.primary.namespace) {
                (Some(uid), true) => self
                    .backend
                    .get_shared(regarding, ReadFrom::Cache)
                    .await?
                    .is_some_and(|o| owned_by(&o, uid)),
                _ => false,
            };
            if !owned {
                tracing::warn!(plugin = self.caller.plugin, regarding = %regarding, "refused an event");
                return Err(ApiError::Forbidden(format!(
                    "plugin {}: may record events only about its primary {}/{} and objects it \
                     owns; {}/{regarding} is neither",
                    self.caller.plugin,
                    self.primary.api_version,
                    self.primary,
                    regarding.api_version,
                )));
            }
        }
        self.backend
            .record_event(&self.caller, regarding, event)
            .await
    }
}

/// Whether `object`'s owner references name `uid`.
fn owned_by(object: &Value, uid: &str) -> bool {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|r| r.get("uid").and_then(Value::as_str) == Some(uid))
}
