//! The `planner` import of reconcilers that call a planner: each call runs the planner
//! plugin the runtime links now (see [`Runtime::link_planner`]) in a fresh store of its own,
//! with its own limits and the host's `crypto`. Replacing the planner plugin relinks every
//! importer from its next call on.
//!
//! A planner that fails its pass (a trap, its deadline) comes back to the reconciler as a
//! `plan-error` naming the Secret, so the reconciler reports it instead of trapping itself.

use crate::Runtime;
use crate::bindings::planner as export;
use crate::bindings::planner_import::{
    CertificateAction, CertificatesPlan, CertificatesRequest, Entry, Host, PlanError, SecretPlan,
    SecretRequest,
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

impl Host for PlannerCtx {
    async fn plan(&mut self, request: SecretRequest) -> Result<SecretPlan, PlanError> {
        let Some(planner) = self.runtime.planner() else {
            return Err(Self::unlinked(&request.name));
        };
        let subject = request.name.clone();
        match planner.plan(&self.runtime, &secret_request(request)).await {
            Ok(Ok(plan)) => Ok(secret_plan(plan)),
            Ok(Err(error)) => Err(plan_error(error)),
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
        let Some(planner) = self.runtime.planner() else {
            return Err(Self::unlinked("certificates"));
        };
        let request = export::CertificatesRequest {
            certificate: request.certificate,
            ca_secret: request.ca_secret,
            tls_secret: request.tls_secret,
            chain_secret: request.chain_secret,
            ready_units: request.ready_units,
            generate: request.generate,
        };
        match planner.plan_certificates(&self.runtime, &request).await {
            Ok(Ok(plan)) => Ok(CertificatesPlan {
                action: match plan.action {
                    export::CertificateAction::None => CertificateAction::None,
                    export::CertificateAction::Issue => CertificateAction::Issue,
                    export::CertificateAction::DeriveChain => CertificateAction::DeriveChain,
                    export::CertificateAction::Report => CertificateAction::Report,
                },
                secrets: plan.secrets.into_iter().map(secret_plan).collect(),
            }),
            Ok(Err(error)) => Err(plan_error(error)),
            Err(failed) => Err(PlanError {
                subject: "certificates".into(),
                message: failed.to_string(),
            }),
        }
    }
}

// The import and the export of `planner` are generated in two worlds, so the same records
// exist twice; these move values across.

fn secret_request(r: SecretRequest) -> export::SecretRequest {
    export::SecretRequest {
        name: r.name,
        entries: r.entries,
        existing: r.existing,
        ready_units: r.ready_units,
        generate: r.generate,
    }
}

fn secret_plan(p: export::SecretPlan) -> SecretPlan {
    SecretPlan {
        name: p.name,
        secret_type: p.secret_type,
        add: p
            .add
            .into_iter()
            .map(|e| Entry {
                key: e.key,
                value: e.value,
            })
            .collect(),
        reports: p.reports,
        declared_units: p.declared_units,
        next_ready_units: p.next_ready_units,
        type_kept: p.type_kept,
        ready: p.ready,
    }
}

fn plan_error(e: export::PlanError) -> PlanError {
    PlanError {
        subject: e.subject,
        message: e.message,
    }
}
