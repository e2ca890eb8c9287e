//! The Cinder reconciler.
//!
//! Reconciles `cinder.openstack.c5c3.io/v1alpha1` Cinders — the OpenStack block storage
//! service — as the minimal parent of facts §4: the pipeline of [`reconcile`], with the
//! Backends and BackupBackend steps aggregating the CinderBackends and the
//! CinderBackupBackend that name the Cinder (the satellite handshake of
//! `cobaltcore-common-packages.txt`) and the VolumeServices and BackupService steps
//! running them. [`types`] is the resource and the CRD is generated from it
//! ([`CRD_YAML`]); `satellites` is the Cinder side's view of both satellite kinds, `ceph`
//! the Ceph client files, `workload` the pods; [`describe`] is what the host loads the
//! plugin with.

mod ceph;
mod conditions;
pub mod describe;
mod error;
pub mod indexes;
mod pass;
pub mod reconcile;
mod satellites;
mod steps;
mod targeting;
pub mod types;
mod workload;

#[cfg(test)]
mod crd;
#[cfg(test)]
mod testing;

pub use types::Cinder;

use wasm_operator_sdk::{Cluster, Description, Outcome, ReconcileError, Reconciler, Request};

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str = include_str!("../../../crds/cinder.openstack.c5c3.io_cinders.yaml");

/// The reconciler, as the host runs it.
pub struct CinderReconciler;

impl Reconciler for CinderReconciler {
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

wasm_operator_sdk::export_reconciler!(CinderReconciler);
