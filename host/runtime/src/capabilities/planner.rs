//! The `planner` import of reconcilers that call a planner: each call runs the planner
//! plugin the runtime links now (see [`Runtime::link_planner`]) in a store of its own, with
//! its own limits and the host's `crypto`. The calls of one pass share one planner instance
//! (a [`PlannerSession`]); a call that fails, or a relinked planner, starts another.
//! Replacing the planner plugin relinks every importer from its next call on.
//!
//! A planner that fails its pass (a trap, its deadline) comes back to the reconciler as a
//! `plan-error` naming the Secret, so the reconciler reports it instead of trapping itself.

use std::sync::Arc;

use wasm_operator_planner as planner;

use crate::bindings::planner as export;
use crate::bindings::planner_import::{
    CertificatesPlan, CertificatesRequest, Host, PlanError, SecretPlan, SecretRequest,
};
use crate::planner_session::PlannerSession;
use crate::{PassError, Plugin, Runtime};

/// The planner capability of one pass.
pub(crate) struct PlannerCtx {
    runtime: Runtime,
    /// The planner of the pass's calls so far, and their session.
    session: Option<(Arc<Plugin>, PlannerSession)>,
}

impl PlannerCtx {
    /// Calls go to the planner `runtime` links at the time of the call.
    pub(crate) fn new(runtime: Runtime) -> Self {
        Self {
            runtime,
            session: None,
        }
    }

    /// The session of the planner linked now: the pass's current one while it serves that
    /// planner, a new one otherwise.
    fn session(&mut self, subject: &str) -> Result<(Arc<Plugin>, PlannerSession), PlanError> {
        let Some(linked) = self.runtime.planner() else {
            return Err(Self::unlinked(subject));
        };
        Ok(match self.session.take() {
            Some((planner, session)) if Arc::ptr_eq(&planner, &linked) => (planner, session),
            _ => {
                let session = PlannerSession::new(&self.runtime, &linked);
                (linked, session)
            }
        })
    }

    /// The import's answer to a call that `session` ran: the plan, the planner's refusal,
    /// or the failed call as a refusal naming `subject`. A session whose call failed is
    /// spent; any other is kept for the pass's next call.
    fn answer<P, Q>(
        &mut self,
        session: (Arc<Plugin>, PlannerSession),
        subject: &str,
        result: Result<Result<P, export::PlanError>, PassError>,
        plan: impl FnOnce(P) -> Q,
    ) -> Result<Q, PlanError> {
        match result {
            Ok(answer) => {
                self.session = Some(session);
                answer
                    .map(plan)
                    .map_err(|error| planner::PlanError::from(error).into())
            }
            Err(failed) => Err(PlanError {
                subject: subject.to_owned(),
                message: failed.to_string(),
            }),
        }
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
        let subject = request.name.clone();
        let (linked, mut session) = self.session(&subject)?;
        let request = export::SecretRequest::from(planner::SecretRequest::from(request));
        let result = linked.plan_in(&self.runtime, &mut session, &request).await;
        self.answer((linked, session), &subject, result, |plan| {
            planner::SecretPlan::from(plan).into()
        })
    }

    async fn plan_certificates(
        &mut self,
        request: CertificatesRequest,
    ) -> Result<CertificatesPlan, PlanError> {
        let subject = "certificates";
        let (linked, mut session) = self.session(subject)?;
        let request =
            export::CertificatesRequest::from(planner::CertificatesRequest::from(request));
        let result = linked
            .plan_certificates_in(&self.runtime, &mut session, &request)
            .await;
        self.answer((linked, session), subject, result, |plan| {
            planner::CertificatesPlan::from(plan).into()
        })
    }
}
