//! The CinderBackupBackend reconciler.
//!
//! Reconciles `cinder.openstack.c5c3.io/v1alpha1` CinderBackupBackends: the single backup
//! target — an NFS export or a Ceph RBD pool — of the Cinder its `spec.cinderRef` names
//! (`cobaltcore-facts.md` §3.0, §3.5; the satellite handshake of
//! `cobaltcore-common-packages.txt`, "Package: satellite"). [`types`] is the resource and
//! the CRD is generated from it ([`CRD_YAML`]); [`describe`] is what the host loads the
//! plugin with; admission (defaulting and validation, with the one-per-Cinder check
//! against the other targets of the namespace) is in `admission/`.
//!
//! The controller (`reconcile`) is the target's side of the handshake: `cinder_ref` (the
//! parent and the cluster its children live on), `credentials` (the gate the Cinder's
//! BackupBackend step reads: CredentialsReady), `projection` (ConfigProjected, from the
//! Secret the Cinder's backup Deployment mounts), with the condition vocabulary in
//! `conditions`. No finalizer: the backup service registers under the Cinder's own
//! identity, so a detaching target leaves nothing to unregister. The Cinder renders the
//! driver section; this plugin writes nothing but the target's status.

mod admission;
mod cinder_ref;
mod conditions;
mod credentials;
pub mod describe;
mod error;
mod indexes;
mod projection;
mod reconcile;
pub mod types;

#[cfg(test)]
mod crd;
#[cfg(test)]
mod testing;

pub use types::CinderBackupBackend;

use wasm_operator_sdk::admission::{AdmissionRequest, Defaulted, Denial, Validated};
use wasm_operator_sdk::{Cluster, Description, Outcome, ReconcileError, Reconciler, Request};

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str =
    include_str!("../../../crds/cinder.openstack.c5c3.io_cinderbackupbackends.yaml");

/// The reconciler, as the host runs it.
pub struct CinderBackupBackendReconciler;

impl Reconciler for CinderBackupBackendReconciler {
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

wasm_operator_sdk::export_reconciler!(CinderBackupBackendReconciler);
