//! Step 1 — the Barbican the store attaches to (facts §3.6 "resolve parent"), read on
//! the management cluster as `{ns}/{spec.barbicanRef.name}` through the SDK's
//! [`resolve_parent_children`], and the cluster its children live on.
//!
//! | Case | CredentialsReady | ConfigProjected | Pass |
//! |---|---|---|---|
//! | the Barbican does not exist (or its kind is not served) | False `WaitingForParent` "parent Barbican ns/b does not exist; the cluster this store's credentials belong on is unknown" | a True one demoted to False `WaitingForProjection` "parent Barbican ns/b does not exist; nothing mounts this store's rendered secret-store section"; absent or False left | ends, 15 s |
//! | the Barbican names a `targetClusterRef` the host cannot open | False `TargetClusterUnavailable` with the host's text ("target cluster \"t\" is not registered") | unchanged | ends, 15 s |
//! | the Barbican names a `targetClusterRef` the host opens | — | — | goes on, the store's Secrets read and minted on that cluster |
//! | reading the Barbican fails otherwise | unchanged | unchanged | error "fetching parent Barbican ns/b: …" |
//! | the Barbican, no `targetClusterRef` | — | — | goes on, on the management cluster |
//!
//! DECISION: a missing Barbican also demotes a True ConfigProjected (the SDK's opt-in
//! demotion; CobaltCore's store controller leaves it): nothing mounts the section while
//! the Barbican is gone, and a True condition would keep Ready True over a store no
//! Barbican serves.
//!
//! The resolver is the host's (the SDK's `HostTargets`, contract 1.3): the store stays on
//! the management cluster, next to its Barbican; its credentials, its minted Secret and the
//! Barbican's Deployment live where the Barbican's children do ([`remote`](crate::remote)
//! for what a managed store of a targeted Barbican holds).
//!
//! The Barbican kind is another plugin's; this crate reads only what it needs of it
//! ([`Barbican`]) and never creates its CRD.

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
use crate::types::BarbicanSecretStore;

/// The Barbican kind a store attaches to (same group and version).
pub const BARBICAN_KIND: &str = "Barbican";
/// Its plural.
pub const BARBICAN_PLURAL: &str = "barbicans";

/// What the store reads of its Barbican: its name and where its children live.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Barbican {
    #[serde(default)]
    pub(crate) metadata: ObjectMeta,
    #[serde(default)]
    pub(crate) spec: BarbicanSpec,
}

wasm_operator_sdk::custom_resource!(
    Barbican,
    "barbican.openstack.c5c3.io",
    "v1alpha1",
    "Barbican",
    "barbicans",
    k8s_openapi::NamespaceResourceScope
);

/// The Barbican's spec, as far as it is read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BarbicanSpec {
    #[serde(default)]
    pub(crate) target_cluster_ref: Option<TargetClusterRefSpec>,
}

impl Barbican {
    /// Its name, which is also its Deployment's.
    pub(crate) fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Its namespace.
    pub(crate) fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
}

fn target_cluster_ref(barbican: &Barbican) -> Option<TargetClusterRefSpec> {
    barbican.spec.target_cluster_ref.clone()
}

/// Where the store's Barbican is, and the texts of its conditions while it is missing:
/// built by the caller, since the resolution borrows them.
pub(crate) struct Parent {
    namespace: String,
    name: String,
    waiting: String,
    demoted: String,
}

impl Parent {
    /// The Barbican `store` names.
    pub(crate) fn of(store: &BarbicanSecretStore) -> Self {
        let namespace = store.namespace().to_owned();
        let name = store.spec.barbican_ref.name.clone();
        let key = format!("{namespace}/{name}");
        Self {
            waiting: format!(
                "parent Barbican {key} does not exist; the cluster this store's credentials \
                 belong on is unknown"
            ),
            demoted: format!(
                "parent Barbican {key} does not exist; nothing mounts this store's rendered \
                 secret-store section"
            ),
            namespace,
            name,
        }
    }
}

/// Runs step 1 for `store`, whose Barbican is `parent`, against the management cluster
/// `cluster`, opening target clusters through `resolver`.
pub(crate) fn run<'a>(
    cluster: &'a dyn Cluster,
    resolver: &'a dyn ClusterResolver,
    store: &mut BarbicanSecretStore,
    parent: &'a Parent,
) -> Result<Resolution<'a, Barbican>, Error> {
    let generation = store.generation();
    let status = store.status.get_or_insert_with(Default::default);
    let resolution = resolve_parent_children(ResolveParams {
        client: cluster,
        resolver: Some(resolver),
        parent_namespace: &parent.namespace,
        parent_name: &parent.name,
        parent_kind: BARBICAN_KIND,
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
