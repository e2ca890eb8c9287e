//! The CinderBackend reconciler.
//!
//! Reconciles `cinder.openstack.c5c3.io/v1alpha1` CinderBackends: one volume backend — an
//! NFS export or a Ceph RBD pool — of the Cinder its `spec.cinderRef` names
//! (`cobaltcore-facts.md` §3.0, §3.4; the satellite handshake of
//! `cobaltcore-common-packages.txt`, "Package: satellite"). [`types`] is the resource and
//! the CRD is generated from it ([`CRD_YAML`]); [`describe`] is what the host loads the
//! plugin with; admission (defaulting and validation) is in `admission/`.
//!
//! The controller (`reconcile`) is the backend's side of the handshake: `detach` (the
//! service-remove finalizer, and a deleting backend), `cinder_ref` (the parent and the
//! cluster its children live on), `credentials` (the gate the Cinder's Backends step
//! reads: CredentialsReady), `projection` (ConfigProjected, from the backend's own
//! cinder-volume Deployment), with the condition vocabulary in `conditions`. The Cinder
//! renders the backend section and runs the Deployment; this plugin writes nothing but
//! the backend's finalizer and status.

mod admission;
mod cinder_ref;
mod conditions;
mod credentials;
pub mod describe;
mod detach;
mod error;
mod indexes;
mod projection;
mod reconcile;
pub mod types;

#[cfg(test)]
mod crd;
#[cfg(test)]
mod testing;

pub use types::CinderBackend;

use wasm_operator_sdk::admission::{AdmissionRequest, Defaulted, Denial, Validated};
use wasm_operator_sdk::{Cluster, Description, Outcome, ReconcileError, Reconciler, Request};

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str =
    include_str!("../../../crds/cinder.openstack.c5c3.io_cinderbackends.yaml");

/// The reconciler, as the host runs it.
pub struct CinderBackendReconciler;

impl Reconciler for CinderBackendReconciler {
    fn describe() -> Description {
        describe::describe()
    }

    fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
        reconcile::reconcile(cluster, request)
    }

    fn index(name: &str, object: &serde_json::Value) -> Vec<String> {
        indexes::keys(name, object)
    }

    fn default_object(
        _cluster: &dyn Cluster,
        request: &AdmissionRequest,
    ) -> Result<Defaulted, Denial> {
        admission::default_object(request)
    }

    fn validate_object(cluster: &dyn Cluster, request: &AdmissionRequest) -> Validated {
        admission::validate_object(cluster, request)
    }
}

wasm_operator_sdk::export_reconciler!(CinderBackendReconciler);
