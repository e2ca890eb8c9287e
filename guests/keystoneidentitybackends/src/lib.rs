//! The KeystoneIdentityBackend reconciler.
//!
//! Reconciles `keystone.openstack.c5c3.io/v1alpha1` KeystoneIdentityBackends: one
//! external identity backend (LDAP, OIDC or SAML) serving one domain of the Keystone its
//! `spec.keystoneRef` names (`cobaltcore-facts.md` §3.0, §3.2). [`types`] is the resource
//! and the CRD is generated from it ([`CRD_YAML`]); [`describe`] is what the host loads
//! the plugin with; admission (defaulting and validation, with the checks against the
//! other backends of the same Keystone) is in `admission/`.
//!
//! The controller (`reconcile`) runs facts §3.2 steps 1–8, one module per concern:
//! `finalizer`, `keystone_ref` (the parent), `admin_credentials`, `domain`,
//! `federation_objects` and `groups`, `projection` (ConfigProjected), `deletion`, with
//! the condition vocabulary in `conditions`; `identity` is its Keystone v3 client.

mod admin_credentials;
mod admission;
mod conditions;
mod deletion;
pub mod describe;
mod domain;
mod error;
mod federation_objects;
mod finalizer;
mod groups;
mod identity;
mod indexes;
mod keystone_ref;
mod pass;
mod projection;
mod reconcile;
pub mod types;

#[cfg(test)]
mod crd;
#[cfg(test)]
mod testing;

pub use types::KeystoneIdentityBackend;

use wasm_operator_sdk::admission::{AdmissionRequest, Defaulted, Denial, Validated};
use wasm_operator_sdk::{Cluster, Description, Outcome, ReconcileError, Reconciler, Request};

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str =
    include_str!("../../../crds/keystone.openstack.c5c3.io_keystoneidentitybackends.yaml");

/// The reconciler, as the host runs it.
pub struct KeystoneIdentityBackendReconciler;

impl Reconciler for KeystoneIdentityBackendReconciler {
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

wasm_operator_sdk::export_reconciler!(KeystoneIdentityBackendReconciler);
