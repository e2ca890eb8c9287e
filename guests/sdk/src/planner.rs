//! The GitLabSecrets planner as a reconciler sees it.
//!
//! [`Planner`] is the WIT `planner` interface in Rust types, the way [`Cluster`] is the WIT
//! `cluster` interface: the records below mirror the WIT records one to one. Inside wasm,
//! [`WitPlanner`] calls the `planner` import, which the host links to the secretgen
//! component; natively, a caller implements [`Planner`] over the secretgen crate.
//!
//! A reconciler that never calls a planner imports nothing: the import is only referenced
//! from [`WitPlanner`].
//!
//! [`Cluster`]: crate::Cluster

pub use wasm_operator_planner::{
    CertificateAction, CertificatesPlan, CertificatesRequest, Entry, PlanError, Planner,
    SecretPlan, SecretRequest,
};

/// The [`Planner`] the host links in, called across the component boundary (wasm32 only).
#[cfg(target_arch = "wasm32")]
pub struct WitPlanner;

#[cfg(target_arch = "wasm32")]
impl Planner for WitPlanner {
    fn plan(&self, request: &SecretRequest) -> Result<SecretPlan, PlanError> {
        planner_import::plan(&request.into())
            .map(Into::into)
            .map_err(Into::into)
    }

    fn plan_certificates(
        &self,
        request: &CertificatesRequest,
    ) -> Result<CertificatesPlan, PlanError> {
        planner_import::plan_certificates(&request.into())
            .map(Into::into)
            .map_err(Into::into)
    }
}

// The records are converted by the `From` impls next to the bindings (`crate::wit`).
#[cfg(target_arch = "wasm32")]
use crate::wit::bindings::gitlab::secretgen::planner as planner_import;
