//! The GitLabSecrets reconciler.
//!
//! Reconciles `apps.gitlab.com/v2alpha1` GitLabSecrets into the Secrets the GitLab chart
//! would otherwise generate with its shared-secrets hook Job ("The reconciler" in
//! `gitlabsecrets-reconciler.txt`). What to add to each Secret is decided by the secretgen
//! planner, reached through [`Planner`]: inside wasm the host links the secretgen component
//! to the `planner` import; natively [`reconcile()`] takes any [`Planner`] (with the
//! `secretgen` feature, `SecretgenPlanner` plans in-process).
//!
//! A pass is a table of named steps (`reconcile.rs`); each Secret, or each certificate set,
//! goes through the same recipe (`converge.rs`). [`types`] is the resource, and the CRD is
//! generated from it ([`CRD_YAML`]); [`describe`] is what the host loads the plugin with.

mod converge;
mod declared;
pub mod describe;
mod error;
mod events;
mod freshness;
mod grouping;
mod labels;
mod pass;
mod reconcile;
mod reconcile_certificates;
mod reconcile_secrets;
mod status;
pub mod types;
mod write;

#[cfg(any(test, all(not(target_arch = "wasm32"), feature = "secretgen")))]
mod native_planner;

#[cfg(test)]
mod crd;
// The behaviour tests plan with secretgen in-process, natively and under wasmtime alike.
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

pub use error::Error;
#[cfg(any(test, all(not(target_arch = "wasm32"), feature = "secretgen")))]
pub use native_planner::SecretgenPlanner;
pub use reconcile::reconcile;
pub use status::{MAX_MESSAGE_BYTES, Reason};
pub use types::GitLabSecrets;
pub use wasm_operator_sdk::Planner;

use wasm_operator_sdk::{Cluster, Description, Outcome, ReconcileError, Reconciler, Request};

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str = include_str!("../../../crds/apps.gitlab.com_gitlabsecrets.yaml");

/// The reconciler, as the host runs it.
pub struct GitLabSecretsReconciler;

impl Reconciler for GitLabSecretsReconciler {
    fn describe() -> Description {
        describe::describe()
    }

    fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
        #[cfg(target_arch = "wasm32")]
        return reconcile(cluster, &wasm_operator_sdk::planner::WitPlanner, request);
        #[cfg(all(not(target_arch = "wasm32"), any(test, feature = "secretgen")))]
        return reconcile(cluster, &SecretgenPlanner, request);
        #[cfg(all(not(target_arch = "wasm32"), not(any(test, feature = "secretgen"))))]
        {
            let _ = (cluster, request);
            Err(ReconcileError::Permanent(
                "gitlabsecrets was built natively without a planner: enable its `secretgen` \
                 feature, or call gitlabsecrets::reconcile with one"
                    .into(),
            ))
        }
    }

    fn index(name: &str, object: &serde_json::Value) -> Vec<String> {
        describe::index(name, object)
    }
}

wasm_operator_sdk::export_reconciler!(GitLabSecretsReconciler);
