//! Calls into a planner plugin: one instance serves every plan call of one reconciler pass.
//!
//! A [`PlannerSession`] is a store of the planner's own (its memory cap, its `crypto`, no
//! cluster) and the planner's instance in it, made at the first call; later calls reuse that
//! instance, each with the planner's full deadline and fuel. A call that fails (a trap, the
//! deadline, the memory cap) ends the session: the instance is not used again. Nothing of a
//! session outlives the pass that holds it.
//!
//! The session counts the imports each call makes, so its caller can tell a call that read
//! nothing but its request (see `planner_memo`).

use std::sync::atomic::Ordering;

use crate::bindings::{PlannerPlugin, PlannerPluginPre, planner};
use crate::capabilities::{ClusterCtx, PassState};
use crate::pass::Failure;
use crate::planner_memo::PlanMemo;
use crate::plugin::PluginInfo;
use crate::{PassError, Plugin, Runtime};

/// A store of one planner plugin, and its instance once a call made it.
pub(crate) struct PlannerSession {
    store: wasmtime::Store<PassState>,
    instance: Option<PlannerPlugin>,
}

impl PlannerSession {
    /// A session with `planner`; nothing is instantiated yet.
    pub(crate) fn new(runtime: &Runtime, planner: &Plugin) -> Self {
        Self {
            store: planner.store(runtime, ClusterCtx::none(&planner.name)),
            instance: None,
        }
    }

    /// Whether the last call made no import: no WASI (clock, randomness, streams), no
    /// `crypto`, no `logging`, nothing else the host serves.
    pub(crate) fn last_call_read_only_its_request(&self) -> bool {
        self.store.data().import_calls == 0
    }
}

impl Plugin {
    /// Plans one Secret with this planner plugin, in a fresh store (with the host's
    /// `crypto`). The outer error is a failed call; the inner one the planner's own refusal.
    pub async fn plan(
        &self,
        runtime: &Runtime,
        request: &planner::SecretRequest,
    ) -> Result<Result<planner::SecretPlan, planner::PlanError>, PassError> {
        let mut session = PlannerSession::new(runtime, self);
        self.plan_in(runtime, &mut session, request).await
    }

    /// Plans the CA, TLS and chain Secrets of one certificate entry, in a fresh store.
    pub async fn plan_certificates(
        &self,
        runtime: &Runtime,
        request: &planner::CertificatesRequest,
    ) -> Result<Result<planner::CertificatesPlan, planner::PlanError>, PassError> {
        let mut session = PlannerSession::new(runtime, self);
        self.plan_certificates_in(runtime, &mut session, request)
            .await
    }

    /// [`Plugin::plan`] in `session`, a session of this plugin. After an outer error the
    /// session is spent.
    pub(crate) async fn plan_in(
        &self,
        runtime: &Runtime,
        session: &mut PlannerSession,
        request: &planner::SecretRequest,
    ) -> Result<Result<planner::SecretPlan, planner::PlanError>, PassError> {
        self.call_planner(runtime, session, &request.name, async |store, instance| {
            instance
                .gitlab_secretgen_planner()
                .call_plan(store, request)
                .await
        })
        .await
    }

    /// [`Plugin::plan_certificates`] in `session`, a session of this plugin.
    pub(crate) async fn plan_certificates_in(
        &self,
        runtime: &Runtime,
        session: &mut PlannerSession,
        request: &planner::CertificatesRequest,
    ) -> Result<Result<planner::CertificatesPlan, planner::PlanError>, PassError> {
        self.call_planner(runtime, session, "certificates", async |store, instance| {
            instance
                .gitlab_secretgen_planner()
                .call_plan_certificates(store, request)
                .await
        })
        .await
    }

    /// Runs `call` on the instance of `session` (made first when there is none yet), within
    /// the planner's deadline.
    async fn call_planner<T>(
        &self,
        runtime: &Runtime,
        session: &mut PlannerSession,
        object: &str,
        call: impl AsyncFnOnce(&mut wasmtime::Store<PassState>, &PlannerPlugin) -> wasmtime::Result<T>,
    ) -> Result<T, PassError> {
        let pre = self.planner_pre(object)?;
        let PlannerSession { store, instance } = session;
        runtime.planner_calls.fetch_add(1, Ordering::Relaxed);
        self.call_in(
            runtime,
            store,
            object,
            self.limits.deadline,
            async |store| {
                let instance = match instance {
                    Some(instance) => instance,
                    None => {
                        runtime.planner_instances.fetch_add(1, Ordering::Relaxed);
                        instance.insert(
                            pre.instantiate_async(&mut *store)
                                .await
                                .map_err(Failure::Instantiate)?,
                        )
                    }
                };
                store.data_mut().import_calls = 0;
                call(store, instance).await.map_err(Failure::Call)
            },
        )
        .await
    }

    /// The answers this planner gave that may be given again; `None` for a reconciler.
    pub(crate) fn plan_memo(&self) -> Option<&PlanMemo> {
        match &self.info {
            PluginInfo::Planner { memo, .. } => Some(memo),
            PluginInfo::Reconciler { .. } => None,
        }
    }

    fn planner_pre(&self, object: &str) -> Result<&PlannerPluginPre<PassState>, PassError> {
        match &self.info {
            PluginInfo::Planner { pre, .. } => Ok(pre),
            PluginInfo::Reconciler { .. } => Err(PassError::Instantiate {
                plugin: self.name.clone(),
                object: object.to_owned(),
                message: "not a planner".into(),
            }),
        }
    }
}
