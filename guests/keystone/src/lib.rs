//! The Keystone reconciler.
//!
//! Reconciles `keystone.openstack.c5c3.io/v1alpha1` Keystones into a running OpenStack
//! Keystone (`cobaltcore-common-packages.txt`, "Reconciler Integration Pattern", and
//! `cobaltcore-facts.md` §1–2). [`types`] is the resource and the CRD is generated from it
//! ([`CRD_YAML`]); a pass is the table of named steps of `reconcile.rs`, one file per step
//! under `steps/`; [`describe`] is what the host loads the plugin with.

mod admission;
mod conditions;
mod db_jobs;
mod deletion;
pub mod describe;
mod error;
mod federation;
mod finalizers;
mod identity_backend;
mod indexes;
mod labels;
mod pass;
mod pod;
mod reconcile;
mod release;
mod rotation;
mod steps;
pub mod types;

/// The rendered configuration files (public for the crate's tests against the real oslo
/// tools, not an interface).
#[doc(hidden)]
pub mod config;

/// The key steps and the rotation script (public for the crate's tests against the real
/// Keystone, not an interface).
#[doc(hidden)]
pub mod testkit;

#[cfg(test)]
mod crd;
#[cfg(test)]
mod testing;

pub use error::{Error, UpgradeError};
pub use reconcile::reconcile;
pub use release::ParseError;
pub use types::Keystone;

use wasm_operator_sdk::admission::{AdmissionRequest, Defaulted, Denial, Validated};
use wasm_operator_sdk::{Cluster, Description, Outcome, ReconcileError, Reconciler, Request};

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str = include_str!("../../../crds/keystone.openstack.c5c3.io_keystones.yaml");

/// The reconciler, as the host runs it.
pub struct KeystoneReconciler;

impl Reconciler for KeystoneReconciler {
    fn describe() -> Description {
        describe::describe()
    }

    fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
        reconcile(cluster, request)
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

wasm_operator_sdk::export_reconciler!(KeystoneReconciler);
