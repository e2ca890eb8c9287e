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
mod wit {
    use super::*;
    use crate::wit::bindings::wasm_operator::plugin::planner as w;

    impl Planner for WitPlanner {
        fn plan(&self, request: &SecretRequest) -> Result<SecretPlan, PlanError> {
            let request = w::SecretRequest {
                name: request.name.clone(),
                entries: request.entries.clone(),
                existing: request.existing.clone(),
                ready_units: request.ready_units.clone(),
                generate: request.generate,
            };
            w::plan(&request).map(secret_plan).map_err(plan_error)
        }

        fn plan_certificates(
            &self,
            request: &CertificatesRequest,
        ) -> Result<CertificatesPlan, PlanError> {
            let request = w::CertificatesRequest {
                certificate: request.certificate.clone(),
                ca_secret: request.ca_secret.clone(),
                tls_secret: request.tls_secret.clone(),
                chain_secret: request.chain_secret.clone(),
                ready_units: request.ready_units.clone(),
                generate: request.generate,
            };
            let plan = w::plan_certificates(&request).map_err(plan_error)?;
            Ok(CertificatesPlan {
                action: match plan.action {
                    w::CertificateAction::None => CertificateAction::None,
                    w::CertificateAction::Issue => CertificateAction::Issue,
                    w::CertificateAction::DeriveChain => CertificateAction::DeriveChain,
                    w::CertificateAction::Report => CertificateAction::Report,
                },
                secrets: plan.secrets.into_iter().map(secret_plan).collect(),
            })
        }
    }

    fn secret_plan(plan: w::SecretPlan) -> SecretPlan {
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

    fn plan_error(error: w::PlanError) -> PlanError {
        PlanError {
            subject: error.subject,
            message: error.message,
        }
    }
}
