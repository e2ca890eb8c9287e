//! A [`Planner`] over the secretgen crate, in-process: natively with the `secretgen`
//! feature, and in the unit tests (also under wasmtime). The shipped wasm build imports the
//! planner the host links in, and never links secretgen. The records are the
//! same types on both sides (`wasm-operator-planner`); only secretgen's typed error becomes
//! the interface's `PlanError`.

use wasm_operator_sdk::planner::{
    CertificatesPlan, CertificatesRequest, PlanError, Planner, SecretPlan, SecretRequest,
};

/// Plans with secretgen, generating keys natively.
#[derive(Debug, Clone, Copy, Default)]
pub struct SecretgenPlanner;

impl Planner for SecretgenPlanner {
    fn plan(&self, request: &SecretRequest) -> Result<SecretPlan, PlanError> {
        secretgen::plan(request, &secretgen::NativeKeys).map_err(plan_error)
    }

    fn plan_certificates(
        &self,
        request: &CertificatesRequest,
    ) -> Result<CertificatesPlan, PlanError> {
        secretgen::plan_certificates(request, &secretgen::NativeKeys).map_err(plan_error)
    }
}

pub(crate) fn plan_error(error: secretgen::PlanError) -> PlanError {
    PlanError {
        message: error.message(),
        subject: error.subject,
    }
}
