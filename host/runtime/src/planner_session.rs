//! Calls into a planner plugin: one instance serves every plan call of one reconciler pass.
//!
//! A [`PlannerSession`] holds a store of the planner's own (its memory cap, its `crypto`, no
//! cluster) and instantiates the planner at its first call; later calls reuse that instance,
//! each with the planner's full deadline and fuel. A call that fails (a trap, the deadline,
//! the memory cap) ends the session: the instance is not used again. Nothing of a session
//! outlives the pass that holds it.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::bindings::{PlannerPlugin, PlannerPluginPre, planner};
use crate::capabilities::{ClusterCtx, PassState};
use crate::pass::Failure;
use crate::{PassError, Plugin, Runtime};

/// A planner plugin's instance for the calls of one pass.
pub(crate) struct PlannerSession {
    plugin: Arc<Plugin>,
    store: wasmtime::Store<PassState>,
    /// Made at the first call.
    instance: Option<PlannerPlugin>,
}

impl PlannerSession {
    /// A session with `plugin`, which must be a planner; nothing is instantiated yet.
    pub(crate) fn new(runtime: &Runtime, plugin: Arc<Plugin>) -> Self {
        let store = plugin.store(runtime, "planner", ClusterCtx::none(&plugin.name));
        Self {
            plugin,
            store,
            instance: None,
        }
    }

    /// Whether this session calls `plugin` (the same load of the same file).
    pub(crate) fn serves(&self, plugin: &Arc<Plugin>) -> bool {
        Arc::ptr_eq(&self.plugin, plugin)
    }

    /// Plans one Secret. The outer error is a failed call (the session is then spent); the
    /// inner one the planner's own refusal.
    pub(crate) async fn plan(
        &mut self,
        runtime: &Runtime,
        request: &planner::SecretRequest,
    ) -> Result<Result<planner::SecretPlan, planner::PlanError>, PassError> {
        let calls = Calls {
            store: &mut self.store,
            instance: &mut self.instance,
        };
        self.plugin.plan_in(runtime, calls, request).await
    }

    /// Plans the CA, TLS and chain Secrets of one certificate entry.
    pub(crate) async fn plan_certificates(
        &mut self,
        runtime: &Runtime,
        request: &planner::CertificatesRequest,
    ) -> Result<Result<planner::CertificatesPlan, planner::PlanError>, PassError> {
        let calls = Calls {
            store: &mut self.store,
            instance: &mut self.instance,
        };
        self.plugin
            .plan_certificates_in(runtime, calls, request)
            .await
    }
}

/// Where a planner call runs: a store, and the instance in it once one is made.
struct Calls<'s> {
    store: &'s mut wasmtime::Store<PassState>,
    instance: &'s mut Option<PlannerPlugin>,
}

fn planner_pre<'p>(
    plugin: &'p Plugin,
    object: &str,
) -> Result<&'p PlannerPluginPre<PassState>, PassError> {
    match &plugin.info {
        crate::plugin::PluginInfo::Planner { pre } => Ok(pre),
        crate::plugin::PluginInfo::Reconciler { .. } => Err(PassError::Instantiate {
            plugin: plugin.name.clone(),
            object: object.to_owned(),
            message: "not a planner".into(),
        }),
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
        let mut store = self.store(runtime, "planner", ClusterCtx::none(&self.name));
        let calls = Calls {
            store: &mut store,
            instance: &mut None,
        };
        self.plan_in(runtime, calls, request).await
    }

    /// Plans the CA, TLS and chain Secrets of one certificate entry, in a fresh store.
    pub async fn plan_certificates(
        &self,
        runtime: &Runtime,
        request: &planner::CertificatesRequest,
    ) -> Result<Result<planner::CertificatesPlan, planner::PlanError>, PassError> {
        let mut store = self.store(runtime, "planner", ClusterCtx::none(&self.name));
        let calls = Calls {
            store: &mut store,
            instance: &mut None,
        };
        self.plan_certificates_in(runtime, calls, request).await
    }

    async fn plan_in(
        &self,
        runtime: &Runtime,
        calls: Calls<'_>,
        request: &planner::SecretRequest,
    ) -> Result<Result<planner::SecretPlan, planner::PlanError>, PassError> {
        self.call_planner(runtime, calls, &request.name, async |store, instance| {
            instance
                .gitlab_secretgen_planner()
                .call_plan(store, request)
                .await
        })
        .await
    }

    async fn plan_certificates_in(
        &self,
        runtime: &Runtime,
        calls: Calls<'_>,
        request: &planner::CertificatesRequest,
    ) -> Result<Result<planner::CertificatesPlan, planner::PlanError>, PassError> {
        self.call_planner(runtime, calls, "certificates", async |store, instance| {
            instance
                .gitlab_secretgen_planner()
                .call_plan_certificates(store, request)
                .await
        })
        .await
    }

    /// Runs `call` on the instance of `calls` (made first when there is none yet), within
    /// the planner's deadline.
    async fn call_planner<T>(
        &self,
        runtime: &Runtime,
        calls: Calls<'_>,
        object: &str,
        call: impl AsyncFnOnce(&mut wasmtime::Store<PassState>, &PlannerPlugin) -> wasmtime::Result<T>,
    ) -> Result<T, PassError> {
        let pre = planner_pre(self, object)?;
        let Calls { store, instance } = calls;
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
                call(store, instance).await.map_err(Failure::Call)
            },
        )
        .await
    }
}
