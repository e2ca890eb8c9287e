//! A [`Planner`] over the secretgen crate, in-process (native builds only: the wasm build
//! imports the planner the host links in, and never links secretgen).

use wasm_operator_sdk::planner::{
    CertificateAction, CertificatesPlan, CertificatesRequest, Entry, PlanError, Planner,
    SecretPlan, SecretRequest,
};

/// Plans with secretgen, generating keys natively.
#[derive(Debug, Clone, Copy, Default)]
pub struct SecretgenPlanner;

impl Planner for SecretgenPlanner {
    fn plan(&self, request: &SecretRequest) -> Result<SecretPlan, PlanError> {
        let request = secretgen::SecretRequest {
            name: request.name.clone(),
            entries: request.entries.clone(),
            existing: request.existing.clone(),
            ready_units: request.ready_units.clone(),
            generate: request.generate,
        };
        secretgen::plan(&request, &secretgen::NativeKeys)
            .map(secret_plan)
            .map_err(plan_error)
    }

    fn plan_certificates(
        &self,
        request: &CertificatesRequest,
    ) -> Result<CertificatesPlan, PlanError> {
        let request = secretgen::CertificatesRequest {
            certificate: request.certificate.clone(),
            ca_secret: request.ca_secret.clone(),
            tls_secret: request.tls_secret.clone(),
            chain_secret: request.chain_secret.clone(),
            ready_units: request.ready_units.clone(),
            generate: request.generate,
        };
        let plan =
            secretgen::plan_certificates(&request, &secretgen::NativeKeys).map_err(plan_error)?;
        Ok(CertificatesPlan {
            action: match plan.action {
                secretgen::CertificateAction::None => CertificateAction::None,
                secretgen::CertificateAction::Issue => CertificateAction::Issue,
                secretgen::CertificateAction::DeriveChain => CertificateAction::DeriveChain,
                secretgen::CertificateAction::Report => CertificateAction::Report,
            },
            secrets: plan.secrets.into_iter().map(secret_plan).collect(),
        })
    }
}

fn secret_plan(plan: secretgen::SecretPlan) -> SecretPlan {
    SecretPlan {
        name: plan.name,
        secret_type: plan.secret_type,
        add: plan
            .add
            .into_iter()
            .map(|e| Entry {
                key: e.key,
                value: e.value,
            })
            .collect(),
        reports: plan.reports,
        declared_units: plan.declared_units,
        next_ready_units: plan.next_ready_units,
        type_kept: plan.type_kept,
        ready: plan.ready,
    }
}

fn plan_error(error: secretgen::PlanError) -> PlanError {
    PlanError {
        message: error.message(),
        subject: error.subject,
    }
}
