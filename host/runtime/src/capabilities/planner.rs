//! The `planner` import of reconcilers that call a planner: each call runs the planner
//! plugin the runtime links now (see [`Runtime::link_planner`]) in a fresh store of its own,
//! with its own limits and the host's `crypto`. Replacing the planner plugin relinks every
//! importer from its next call on.
//!
//! A planner that fails its pass (a trap, its deadline) comes back to the reconciler as a
//! `plan-error` naming the Secret, so the reconciler reports it instead of trapping itself.

use wasm_operator_planner as planner;

use crate::Runtime;
use crate::bindings::planner as export;
use crate::bindings::planner_import::{
    CertificatesPlan, CertificatesRequest, Host, PlanError, SecretPlan, SecretRequest,
};

/// The planner capability of one pass.
pub(crate) struct PlannerCtx {
    runtime: Runtime,
}

impl PlannerCtx {
    /// Calls go to the planner `runtime` links at the time of the call.
    pub(crate) fn new(runtime: Runtime) -> Self {
        Self { runtime }
    }

    fn unlinked(subject: &str) -> PlanError {
        PlanError {
            subject: subject.to_owned(),
            message: "no planner plugin is loaded".into(),
        }
    }
}

// The import and the export of `planner` are generated in two worlds, so the same records
// exist twice; values cross through `wasm-operator-planner`'s records (the `From` impls of
// `bindings::planner_records`).

impl Host for PlannerCtx {
    async fn plan(&mut self, request: SecretRequest) -> Result<SecretPlan, PlanError> {
        let Some(linked) = self.runtime.planner() else {
            return Err(Self::unlinked(&request.name));
        };
        let subject = request.name.clone();
        let request = export::SecretRequest::from(planner::SecretRequest::from(request));
        match linked.plan(&self.runtime, &request).await {
            Ok(Ok(plan)) => Ok(planner::SecretPlan::from(plan).into()),
            Ok(Err(error)) => Err(planner::PlanError::from(error).into()),
            Err(failed) => Err(PlanError {
                subject,
                message: failed.to_string(),
            }),
        }
    }

    async fn plan_certificates(
        &mut self,
        request: CertificatesRequest,
    ) -> Result<CertificatesPlan, PlanError> {
        let Some(linked) = self.runtime.planner() else {
            return Err(Self::unlinked("certificates"));
        };
        let request =
            export::CertificatesRequest::from(planner::CertificatesRequest::from(request));
        match linked.plan_certificates(&self.runtime, &request).await {
            Ok(Ok(plan)) => Ok(planner::CertificatesPlan::from(plan).into()),
            Ok(Err(error)) => Err(planner::PlanError::from(error).into()),
            Err(failed) => Err(PlanError {
                subject: "certificates".into(),
                message: failed.to_string(),
            }),
        }
    }
}
