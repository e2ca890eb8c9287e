//! The `targets` import (contract 1.3): target clusters a pass opens by name, each a
//! [`Checked`] view of the target's backend with the plugin's checks and the target's scope
//! (see [`crate::backend::remote`]).

use std::sync::Arc;

use wasm_operator_types::ApiError;
use wasmtime::component::Resource;

use super::ClusterCtx;
use super::cluster::{delete_options, kind_ref, to_call_error};
use crate::backend::checked::Checked;
use crate::backend::remote::{TargetClusters, TargetError};
use crate::bindings::{client, cluster as wit, targets, types};

/// The guest's handle of an opened target (its representation indexes [`Targets::opened`]).
pub struct OpenTarget;

/// The targets of one pass: where they are resolved, and those opened so far.
#[derive(Default)]
pub(crate) struct Targets {
    /// `None`: the host engages no target clusters (every open fails `not-registered`).
    clusters: Option<Arc<dyn TargetClusters>>,
    /// The owner label keys the plugin declared; `None` when it declared no prefix.
    owner_labels: Option<[String; 3]>,
    opened: Vec<Option<Checked>>,
}

impl Targets {
    /// The targets `clusters` resolves, for a plugin whose owner labels are `owner_labels`.
    pub(crate) fn new(
        clusters: Option<Arc<dyn TargetClusters>>,
        owner_labels: Option<[String; 3]>,
    ) -> Self {
        Self {
            clusters,
            owner_labels,
            opened: Vec::new(),
        }
    }

    /// The target the pass opened last and still holds open.
    pub(crate) fn last_opened(&self) -> Option<&Checked> {
        self.opened.iter().rev().find_map(Option::as_ref)
    }

    /// The target opened as resource `rep`.
    pub(crate) fn opened(&self, rep: u32) -> Result<&Checked, ApiError> {
        self.opened
            .get(rep as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| ApiError::Other(format!("target handle {rep} is not open")))
    }
}

fn rep(target: &Resource<OpenTarget>) -> Option<u32> {
    Some(target.rep())
}

impl targets::Host for ClusterCtx {}

impl targets::HostTarget for ClusterCtx {
    async fn open(&mut self, name: String) -> Result<Resource<OpenTarget>, targets::TargetError> {
        let not_registered = || {
            targets::TargetError::NotRegistered(format!(
                "target cluster {name:?} is not registered"
            ))
        };
        let unavailable = |reason: String| targets::TargetError::Unavailable(reason);
        let Some(labels) = self.targets.owner_labels.clone() else {
            return Err(unavailable(format!(
                "the plugin declared no owner label prefix in describe-targets, so it may not open target cluster {name:?}"
            )));
        };
        let Some(clusters) = self.targets.clusters.clone() else {
            return Err(not_registered());
        };
        let target = match clusters.open(&name).await {
            Ok(target) => target,
            Err(TargetError::NotRegistered(_)) => return Err(not_registered()),
            Err(e @ TargetError::Unavailable { .. }) => return Err(unavailable(e.to_string())),
        };
        if let Some(services) = &target.services {
            *self
                .target_services
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(services.clone());
        }
        let own = self.cluster().map_err(|e| unavailable(e.to_string()))?;
        let view = own
            .on_target(&name, target, labels)
            .await
            .map_err(|e| unavailable(format!("reading the primary: {e}")))?;
        let rep = u32::try_from(self.targets.opened.len())
            .map_err(|_| unavailable("too many targets opened in one pass".into()))?;
        self.targets.opened.push(Some(view));
        Ok(Resource::new_own(rep))
    }

    async fn served(
        &mut self,
        target: Resource<OpenTarget>,
        kind: types::KindRef,
    ) -> Result<bool, types::CallError> {
        async { self.view(rep(&target))?.served(&kind_ref(kind)).await }
            .await
            .map_err(to_call_error)
    }

    async fn get(
        &mut self,
        target: Resource<OpenTarget>,
        object: types::ObjectRef,
        from: wit::ReadFrom,
    ) -> Result<Option<String>, types::CallError> {
        self.do_get(rep(&target), object, from)
            .await
            .map_err(to_call_error)
    }

    async fn list(
        &mut self,
        target: Resource<OpenTarget>,
        kind: types::KindRef,
        namespace: Option<String>,
        options: wit::ListOptions,
    ) -> Result<Vec<String>, types::CallError> {
        self.do_list(rep(&target), kind, namespace, options)
            .await
            .map_err(to_call_error)
    }

    async fn apply(
        &mut self,
        target: Resource<OpenTarget>,
        object: String,
        owner: Option<wit::Owner>,
    ) -> Result<String, types::CallError> {
        self.do_apply(rep(&target), object, owner)
            .await
            .map_err(to_call_error)
    }

    async fn create(
        &mut self,
        target: Resource<OpenTarget>,
        object: String,
    ) -> Result<String, types::CallError> {
        self.do_create(rep(&target), object)
            .await
            .map_err(to_call_error)
    }

    async fn patch(
        &mut self,
        target: Resource<OpenTarget>,
        object: types::ObjectRef,
        patch_type: wit::PatchType,
        patch: String,
        resource_version: Option<String>,
    ) -> Result<String, types::CallError> {
        self.do_patch(rep(&target), object, patch_type, patch, resource_version)
            .await
            .map_err(to_call_error)
    }

    async fn delete(
        &mut self,
        target: Resource<OpenTarget>,
        object: types::ObjectRef,
        options: client::DeleteOptions,
    ) -> Result<(), types::CallError> {
        self.do_delete(rep(&target), object, delete_options(options))
            .await
            .map_err(to_call_error)
    }

    async fn create_subresource(
        &mut self,
        target: Resource<OpenTarget>,
        object: types::ObjectRef,
        subresource: String,
        body: String,
    ) -> Result<String, types::CallError> {
        async {
            let body = super::cluster::parse(&body)?;
            let stored = self
                .view(rep(&target))?
                .create_subresource(&super::cluster::object_ref(object), &subresource, body)
                .await?;
            Ok(super::texts::object_text(&stored))
        }
        .await
        .map_err(to_call_error)
    }

    async fn drop(&mut self, target: Resource<OpenTarget>) -> wasmtime::Result<()> {
        if let Some(slot) = self.targets.opened.get_mut(target.rep() as usize) {
            *slot = None;
        }
        Ok(())
    }
}
