//! Step 1 — the Glance the backend attaches to (facts §3.3 "resolve parent"), read on
//! the management cluster as `{ns}/{spec.glanceRef.name}` through the SDK's
//! [`resolve_parent_children`], and the cluster its children live on.
//!
//! | Case | CredentialsReady | ConfigProjected | Pass |
//! |---|---|---|---|
//! | the Glance does not exist (or its kind is not served) | False `WaitingForParent` "parent Glance ns/g does not exist; the cluster this backend's credentials belong on is unknown" | a True one demoted to False `WaitingForProjection` "parent Glance ns/g does not exist; nothing mounts this backend's rendered store section"; absent or False left | ends, 15 s |
//! | the Glance names a `targetClusterRef` the host cannot open | False `TargetClusterUnavailable` with the host's text ("target cluster \"t\" is not registered") | unchanged | ends, 15 s |
//! | the Glance names a `targetClusterRef` the host opens | — | — | goes on, its credentials and the Glance's Deployment read on that cluster |
//! | reading the Glance fails otherwise | unchanged | unchanged | error "fetching parent Glance ns/g: …" |
//! | the Glance, no `targetClusterRef` | — | — | goes on, on the management cluster |
//!
//! The resolver is the host's (the SDK's `HostTargets`, contract 1.3): the backend stays on the
//! management cluster, next to its Glance; what it observes lives where the Glance's
//! children do.
//!
//! The Glance kind is another plugin's (`guests/glance`); this crate reads only what it
//! needs of it ([`Glance`]).

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
use crate::types::GlanceBackend;

/// The Glance kind a backend attaches to (same group and version).
pub const GLANCE_KIND: &str = "Glance";
/// Its plural.
pub const GLANCE_PLURAL: &str = "glances";

/// What the backend reads of its Glance: its name and where its children live.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Glance {
    #[serde(default)]
    pub(crate) metadata: ObjectMeta,
    #[serde(default)]
    pub(crate) spec: GlanceSpec,
}

wasm_operator_sdk::custom_resource!(
    Glance,
    "glance.openstack.c5c3.io",
    "v1alpha1",
    "Glance",
    "glances",
    k8s_openapi::NamespaceResourceScope
);

/// The Glance's spec, as far as it is read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GlanceSpec {
    #[serde(default)]
    pub(crate) target_cluster_ref: Option<TargetClusterRefSpec>,
}

impl Glance {
    /// Its name, which is also its Deployment's.
    pub(crate) fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Its namespace.
    pub(crate) fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
}

fn target_cluster_ref(glance: &Glance) -> Option<TargetClusterRefSpec> {
    glance.spec.target_cluster_ref.clone()
}

/// Where the backend's Glance is, and the texts of its conditions while it is missing:
/// built by the caller, since the resolution borrows them.
pub(crate) struct Parent {
    namespace: String,
    name: String,
    waiting: String,
    demoted: String,
}

impl Parent {
    /// The Glance `backend` names.
    pub(crate) fn of(backend: &GlanceBackend) -> Self {
        let namespace = backend.namespace().to_owned();
        let name = backend.spec.glance_ref.name.clone();
        let key = format!("{namespace}/{name}");
        Self {
            waiting: format!(
                "parent Glance {key} does not exist; the cluster this backend's credentials \
                 belong on is unknown"
            ),
            demoted: format!(
                "parent Glance {key} does not exist; nothing mounts this backend's rendered \
                 store section"
            ),
            namespace,
            name,
        }
    }
}

/// Runs step 1 for `backend`, whose Glance is `parent`, against the management cluster
/// `cluster`, opening target clusters through `resolver`.
pub(crate) fn run<'a>(
    cluster: &'a dyn Cluster,
    resolver: &'a dyn ClusterResolver,
    backend: &mut GlanceBackend,
    parent: &'a Parent,
) -> Result<Resolution<'a, Glance>, Error> {
    let generation = backend.generation();
    let status = backend.status.get_or_insert_with(Default::default);
    let resolution = resolve_parent_children(ResolveParams {
        client: cluster,
        resolver: Some(resolver),
        parent_namespace: &parent.namespace,
        parent_name: &parent.name,
        parent_kind: GLANCE_KIND,
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
#[path = "glance_ref_tests.rs"]
mod tests;
