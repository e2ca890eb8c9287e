//! The `planner` import of reconcilers that call a planner: each call runs the planner
//! plugin the runtime links now (see [`Runtime::link_planner`]) in a store of its own, with
//! its own limits and the host's `crypto`. The calls of one pass share one planner instance
//! (a [`PlannerSession`]); a call that fails, or a relinked planner, starts another.
//! Replacing the planner plugin relinks every importer from its next call on. A request the
//! linked planner answered before, in a call that read nothing but its request, is answered
//! from that planner's memo without running it (`planner_memo`).
//!
//! A planner that fails its pass (a trap, its deadline) comes back to the reconciler as a
//! `plan-error` naming the Secret, so the reconciler reports it instead of trapping itself.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use wasm_operator_planner as planner;

use crate::bindings::planner as export;
use crate::bindings::planner_import::{
    CertificatesPlan, CertificatesRequest, Host, PlanError, SecretPlan, SecretRequest,
};
use crate::planner_memo::{Plan, RequestKey};
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

    /// The planner linked now.
    fn linked(&self, subject: &str) -> Result<Arc<Plugin>, PlanError> {
        self.runtime.planner().ok_or_else(|| PlanError {
            subject: subject.to_owned(),
            message: "no planner plugin is loaded".into(),
        })
    }

    /// The answer `linked`'s memo keeps for the request of `key`.
    fn remembered<P: Plan>(
        &self,
        linked: &Plugin,
        key: &RequestKey,
    ) -> Option<Result<P, planner::PlanError>> {
        let answer = linked.plan_memo()?.get(key)?;
        self.runtime
            .planner_memo_hits
            .fetch_add(1, Ordering::Relaxed);
        Some(answer)
    }

    /// The session of `linked`: the pass's current one while it serves that planner, a new
    /// one otherwise.
    fn session(&mut self, linked: &Arc<Plugin>) -> PlannerSession {
        match self.session.take() {
            Some((planner, session)) if Arc::ptr_eq(&planner, linked) => session,
            _ => PlannerSession::new(&self.runtime, linked),
        }
    }

    /// The answer to the request of `key`: from the linked planner's memo, or what `run`
    /// gets from the planner in the pass's session (see [`Self::answer`]).
    async fn call<P: Plan>(
        &mut self,
        subject: &str,
        key: RequestKey,
        run: impl AsyncFnOnce(
            &Plugin,
            &Runtime,
            &mut PlannerSession,
        ) -> Result<Result<P, planner::PlanError>, PassError>,
    ) -> Result<Result<P, planner::PlanError>, PlanError> {
        let linked = self.linked(subject)?;
        if let Some(answer) = self.remembered(&linked, &key) {
            return Ok(answer);
        }
        let mut session = self.session(&linked);
        let result = run(&linked, &self.runtime, &mut session).await;
        self.answer((linked, session), subject, key, result)
    }

    /// The import's answer to a call `session` of `linked` ran for the request of `key`:
    /// the plan, the planner's refusal, or the failed call as a refusal naming `subject`.
    /// An answer of a call that read nothing but its request goes to the memo. A session
    /// whose call failed is spent; any other is kept for the pass's next call.
    fn answer<P: Plan>(
        &mut self,
        (linked, session): (Arc<Plugin>, PlannerSession),
        subject: &str,
        key: RequestKey,
        result: Result<Result<P, planner::PlanError>, PassError>,
    ) -> Result<Result<P, planner::PlanError>, PlanError> {
        match result {
            Ok(answer) => {
                if session.last_call_read_only_its_request()
                    && let Some(memo) = linked.plan_memo()
                {
                    memo.keep(key, &answer);
                }
                self.session = Some((linked, session));
                Ok(answer)
            }
            Err(failed) => Err(PlanError {
                subject: subject.to_owned(),
                message: failed.to_string(),
            }),
        }
    }
}

// The import and the export of `planner` are generated in two worlds, so the same records
// exist twice; values cross through `wasm-operator-planner`'s records (the `From` impls of
// `bindings::planner_records`).

impl Host for PlannerCtx {
    async fn plan(&mut self, request: SecretRequest) -> Result<SecretPlan, PlanError> {
        let subject = request.name.clone();
        let request = planner::SecretRequest::from(request);
        let key = RequestKey::secret(&request);
        let answer = self
            .call(&subject, key, async |linked, runtime, session| {
                let request = export::SecretRequest::from(request);
                let answer = linked.plan_in(runtime, session, &request).await?;
                Ok(answer
                    .map(planner::SecretPlan::from)
                    .map_err(planner::PlanError::from))
            })
            .await?;
        answer.map(Into::into).map_err(Into::into)
    }

    async fn plan_certificates(
        &mut self,
        request: CertificatesRequest,
    ) -> Result<CertificatesPlan, PlanError> {
        let request = planner::CertificatesRequest::from(request);
        let key = RequestKey::certificates(&request);
        let answer = self
            .call("certificates", key, async |linked, runtime, session| {
                let request = export::CertificatesRequest::from(request);
                let answer = linked
                    .plan_certificates_in(runtime, session, &request)
                    .await?;
                Ok(answer
                    .map(planner::CertificatesPlan::from)
                    .map_err(planner::PlanError::from))
            })
            .await?;
        answer.map(Into::into).map_err(Into::into)
    }
}
