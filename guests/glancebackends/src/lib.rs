//! The GlanceBackend reconciler.
//!
//! Reconciles `glance.openstack.c5c3.io/v1alpha1` GlanceBackends: one S3-compatible image
//! store of the Glance its `spec.glanceRef` names (`cobaltcore-facts.md` §3.0, §3.3; the
//! satellite handshake of `cobaltcore-common-packages.txt`, "Package: satellite").
//! [`types`] is the resource and the CRD is generated from it ([`CRD_YAML`]);
//! [`describe`] is what the host loads the plugin with; admission (defaulting and
//! validation, with the single-default check against the other backends of the same
//! Glance) is in `admission/`.
//!
//! The controller (`reconcile`) is the backend's side of the handshake: `glance_ref` (the
//! parent and the cluster its children live on), `credentials` (the gate the Glance's
//! Backends step reads: CredentialsReady), `projection` (ConfigProjected, from the
//! Glance's Deployment), with the condition vocabulary in `conditions`. The Glance renders
//! the store sections; this plugin writes nothing but the backend's status.

mod admission;
mod conditions;
mod credentials;
pub mod describe;
mod error;
mod glance_ref;
mod indexes;
mod projection;
mod reconcile;
pub mod types;

#[cfg(test)]
mod crd;
#[cfg(test)]
mod testing;

pub use types::GlanceBackend;

use wasm_operator_sdk::admission::{AdmissionRequest, Defaulted, Denial, Validated};
use wasm_operator_sdk::{Cluster, Description, Outcome, ReconcileError, Reconciler, Request};

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str =
    include_str!("../../../crds/glance.openstack.c5c3.io_glancebackends.yaml");

/// The reconciler, as the host runs it.
pub struct GlanceBackendReconciler;

impl Reconciler for GlanceBackendReconciler {
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

wasm_operator_sdk::export_reconciler!(GlanceBackendReconciler);
