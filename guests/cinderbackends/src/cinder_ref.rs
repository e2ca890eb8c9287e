//! Step 1 — the Cinder the backend attaches to (facts §3.4, §3.1 ResolveParentChildren),
//! read on the management cluster as `{ns}/{spec.cinderRef.name}` through the SDK's
//! [`resolve_parent_children`], and the cluster its children live on.
//!
//! | Case | CredentialsReady | ConfigProjected | Pass |
//! |---|---|---|---|
//! | the Cinder does not exist (or its kind is not served) | False `WaitingForParent` "parent Cinder ns/c does not exist; the cluster this backend's volume service runs on is unknown" | a True one demoted to False `WaitingForProjection` "parent Cinder ns/c does not exist; nothing mounts this backend's rendered section"; absent or False left | ends, 15 s |
//! | the Cinder names a `targetClusterRef` the host cannot open | False `TargetClusterUnavailable` with the host's text ("target cluster \"t\" is not registered") | unchanged | ends, 15 s |
//! | the Cinder names a `targetClusterRef` the host opens | — | — | goes on, what it observes read on that cluster |
//! | reading the Cinder fails otherwise | unchanged | unchanged | error "fetching parent Cinder ns/c: …" |
//! | the Cinder, no `targetClusterRef` | — | — | goes on, on the management cluster |
//!
//! The resolver is the host's (the SDK's `HostTargets`, contract 1.3): the backend stays on
//! the management cluster, next to its Cinder; what it observes (its credentials, the
//! Cinder's Deployments) lives where the Cinder's children do.
//!
//! The Cinder kind is another plugin's (`guests/cinder`); this crate reads only what it
//! needs of it ([`Cinder`]).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::satellite::{
    ClusterResolver, Resolution, ResolveParams, TargetClusterRefSpec, resolve_parent_children,
};

use crate::conditions::{
    CONFIG_PROJECTED, CREDENTIALS_READY, WAITING_FOR_PARENT, WAITING_FOR_PROJECTION,
};
use crate::error::Error;
use crate::reconcile::SECRET_POLLING;
use crate::types::CinderBackend;

/// The Cinder kind a backend attaches to (same group and version).
pub const CINDER_KIND: &str = "Cinder";
/// Its plural.
pub const CINDER_PLURAL: &str = "cinders";

/// What the backend reads of its Cinder: its name and where its children live.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Cinder {
    #[serde(default)]
    pub(crate) metadata: ObjectMeta,
    #[serde(default)]
    pub(crate) spec: CinderSpec,
}

wasm_operator_sdk::custom_resource!(
    Cinder,
    "cinder.openstack.c5c3.io",
    "v1alpha1",
    "Cinder",
    "cinders",
    k8s_openapi::NamespaceResourceScope
);

/// The Cinder's spec, as far as it is read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CinderSpec {
    #[serde(default)]
    pub(crate) target_cluster_ref: Option<TargetClusterRefSpec>,
}

impl Cinder {
    /// Its name.
    pub(crate) fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Its namespace.
    pub(crate) fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
}

fn target_cluster_ref(cinder: &Cinder) -> Option<TargetClusterRefSpec> {
    cinder.spec.target_cluster_ref.clone()
}

/// Where the backend's Cinder is, and the texts of its conditions while it is missing:
/// built by the caller, since the resolution borrows them.
pub(crate) struct Parent {
    namespace: String,
    name: String,
    waiting: String,
    demoted: String,
}

impl Parent {
    /// The Cinder `backend` names.
    pub(crate) fn of(backend: &CinderBackend) -> Self {
        let namespace = backend.namespace().to_owned();
        let name = backend.spec.cinder_ref.name.clone();
        let key = format!("{namespace}/{name}");
        Self {
            waiting: format!(
                "parent Cinder {key} does not exist; the cluster this backend's volume \
                 service runs on is unknown"
            ),
            demoted: format!(
                "parent Cinder {key} does not exist; nothing mounts this backend's rendered \
                 section"
            ),
            namespace,
            name,
        }
    }
}

/// Runs step 1 for `backend`, whose Cinder is `parent`, against the management cluster
/// `cluster`, opening target clusters through `resolver`.
pub(crate) fn run<'a>(
    cluster: &'a dyn Cluster,
    resolver: &'a dyn ClusterResolver,
    backend: &mut CinderBackend,
    parent: &'a Parent,
) -> Result<Resolution<'a, Cinder>, Error> {
    let generation = backend.generation();
    let status = backend.status.get_or_insert_with(Default::default);
    let resolution = resolve_parent_children(ResolveParams {
        client: cluster,
        resolver: Some(resolver),
        parent_namespace: &parent.namespace,
        parent_name: &parent.name,
        parent_kind: CINDER_KIND,
        target_cluster_ref,
        conditions: &mut status.conditions,
        generation,
        gate_condition_type: CREDENTIALS_READY,
        waiting_for_parent_reason: WAITING_FOR_PARENT,
        waiting_for_parent_message: &parent.waiting,
        projection_condition_type: CONFIG_PROJECTED,
        projection_demotion_reason: WAITING_FOR_PROJECTION,
        projection_demotion_message: &parent.demoted,
        requeue_after: SECRET_POLLING,
    })?;
    Ok(resolution)
}

#[cfg(test)]
#[path = "cinder_ref_tests.rs"]
mod tests;
