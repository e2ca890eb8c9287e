//! The Barbican reconciler.
//!
//! Reconciles `barbican.openstack.c5c3.io/v1alpha1` Barbicans — the OpenStack key manager —
//! as the minimal parent of facts §4: the pipeline of [`reconcile`] (Secrets,
//! DBConnectionSecret, SecretStores, Config, Database, Deployment), with the SecretStores
//! step aggregating the BarbicanSecretStores that name the Barbican (the satellite
//! handshake of `cobaltcore-common-packages.txt`). [`types`] is the resource and the CRD
//! is generated from it ([`CRD_YAML`]); `store` is the Barbican side's view of a
//! BarbicanSecretStore; [`describe`] is what the host loads the plugin with.

mod conditions;
pub mod describe;
mod error;
pub mod indexes;
mod pass;
pub mod reconcile;
mod steps;
mod store;
mod targeting;
pub mod types;

#[cfg(test)]
mod crd;
#[cfg(test)]
mod testing;

pub use types::Barbican;

use wasm_operator_sdk::{Cluster, Description, Outcome, ReconcileError, Reconciler, Request};

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str = include_str!("../../../crds/barbican.openstack.c5c3.io_barbicans.yaml");

/// The reconciler, as the host runs it.
pub struct BarbicanReconciler;

impl Reconciler for BarbicanReconciler {
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

wasm_operator_sdk::export_reconciler!(BarbicanReconciler);
