//! The Glance reconciler.
//!
//! Reconciles `glance.openstack.c5c3.io/v1alpha1` Glances — the OpenStack image service —
//! as the minimal parent of facts §4: the pipeline of [`reconcile`] (Secrets,
//! DBConnectionSecret, Backends, Config, Database, Deployment), with the Backends step
//! aggregating the GlanceBackends that name the Glance (the satellite handshake of
//! `cobaltcore-common-packages.txt`). [`types`] is the resource and the CRD is generated
//! from it ([`CRD_YAML`]); `backend` is the Glance side's view of a GlanceBackend;
//! [`describe`] is what the host loads the plugin with.

mod backend;
mod conditions;
pub mod describe;
mod error;
pub mod indexes;
mod pass;
pub mod reconcile;
mod steps;
mod targeting;
pub mod types;

#[cfg(test)]
mod crd;
#[cfg(test)]
mod testing;

pub use types::Glance;

use wasm_operator_sdk::{Cluster, Description, Outcome, ReconcileError, Reconciler, Request};

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str = include_str!("../../../crds/glance.openstack.c5c3.io_glances.yaml");

/// The reconciler, as the host runs it.
pub struct GlanceReconciler;

impl Reconciler for GlanceReconciler {
    fn describe() -> Description {
        describe::describe()
    }

    fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
        reconcile::reconcile(cluster, request)
    }

    fn index(name: &str, object: &serde_json::Value) -> Vec<String> {
        indexes::keys(name, object)
    }
}

wasm_operator_sdk::export_reconciler!(GlanceReconciler);
