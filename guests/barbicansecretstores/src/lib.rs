//! The BarbicanSecretStore reconciler.
//!
//! Reconciles `barbican.openstack.c5c3.io/v1alpha1` BarbicanSecretStores: one OpenBao (or
//! API-compatible Vault) secret store of the Barbican its `spec.barbicanRef` names
//! (`cobaltcore-facts.md` §3.0, §3.1, §3.6; the satellite handshake of
//! `cobaltcore-common-packages.txt`, "Package: satellite"). [`types`] is the resource and
//! the CRD is generated from it ([`CRD_YAML`]); [`describe`] is what the host loads the
//! plugin with; admission (defaulting and validation, with the single-default and
//! one-OpenBao-store checks against the other stores of the same Barbican) is in
//! `admission/`.
//!
//! The controller (`reconcile`) is the store's side of the handshake: `barbican_ref` (the
//! parent and the cluster its children live on), the gate the Barbican's SecretStores step
//! reads (CredentialsReady) — `brownfield` (validating a server's AppRole credentials) or
//! `managed` and `minting` (an OpenBaoCluster's provisioning, ProvisioningReady, and the
//! AppRole credentials Secret the plugin mints) — over `pass` (the shared failure
//! reporting), and `projection` (ConfigProjected, from the Barbican's Deployment), with
//! the condition vocabulary in `conditions`. `openbao` is the OpenBao HTTP client, over
//! the plugin's egress.

mod admission;
mod barbican_ref;
mod brownfield;
mod conditions;
pub mod describe;
mod error;
mod indexes;
mod instance;
mod managed;
mod minting;
mod openbao;
mod pass;
mod projection;
mod reconcile;
mod remote;
pub mod types;

#[cfg(test)]
mod crd;
#[cfg(test)]
mod testing;

pub use types::BarbicanSecretStore;

use wasm_operator_sdk::admission::{AdmissionRequest, Defaulted, Denial, Validated};
use wasm_operator_sdk::{Cluster, Description, Outcome, ReconcileError, Reconciler, Request};

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str =
    include_str!("../../../crds/barbican.openstack.c5c3.io_barbicansecretstores.yaml");

/// The reconciler, as the host runs it.
pub struct BarbicanSecretStoreReconciler;

impl Reconciler for BarbicanSecretStoreReconciler {
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

wasm_operator_sdk::export_reconciler!(BarbicanSecretStoreReconciler);
