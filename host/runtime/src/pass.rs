//! One pass: a fresh store and instance, the call, and what a failure means.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use wasm_operator_types::{self as shared, Description, Outcome, Request};
use wasmtime::{Store, Trap, UpdateDeadline};

use super::Runtime;
use super::error::PassError;
use super::limits::MemoryCap;
use super::plugin::{Plugin, PluginInfo};
use crate::backend::checked::Checked;
use crate::backend::remote::TargetClusters;
use crate::backend::{Caller, ClusterBackend};
use crate::bindings::{ReconcilerPre, extensions, reconciler as wit};
use crate::capabilities::targets::Targets;
use crate::capabilities::{ClusterCtx, CryptoCtx, EgressHooks, LogCtx, PassState, PlannerCtx};
use crate::text::guest_text;

impl Plugin {
    /// Runs one reconcile pass for `request` against `backend`, with no target clusters.
    pub async fn reconcile(
        &self,
        runtime: &Runtime,
        backend: Arc<dyn ClusterBackend>,
        request: &Request,
    ) -> Result<Outcome, PassError> {
        self.reconcile_with_targets(runtime, backend, None, request)
            .await
    }

    /// Runs one reconcile pass for `request` against `backend`; the plugin may open the
    /// target clusters `targets` engages (contract 1.3).
    pub async fn reconcile_with_targets(
        &self,
        runtime: &Runtime,
        backend: Arc<dyn ClusterBackend>,
        targets: Option<Arc<dyn TargetClusters>>,
        request: &Request,
    ) -> Result<Outcome, PassError> {
        let object = shared::object_key(request.namespace.as_deref(), &request.name);
        let (pre, description) = self.reconciler(&object)?;
        let caller = Caller {
            plugin: self.name.clone(),
            field_manager: description.field_manager.clone(),
        };
        let checked = Checked::new(
            backend,
            caller,
            self.permissions.clone(),
            request.object(&description.primary),
        );
        let conflicted = checked.conflicted();
        let mut cluster = ClusterCtx::new(checked, runtime.texts.clone());
        let owner_labels = description
            .targets
            .targets()
            .then(|| description.targets.owner_labels());
        cluster.targets = Targets::new(targets, owner_labels);
        let wit_request = wit::Request {
            namespace: request.namespace.clone(),
            name: request.name.clone(),
        };
        let result = self
            .run(runtime, &object, cluster, async |store| {
                let instance = pre
                    .instantiate_async(&mut *store)
                    .await
                    .map_err(Failure::Instantiate)?;
                match &instance.extensions {
                    Some(extensions) => extensions
                        .call_reconcile(store, &wit_request)
                        .await
                        .map_err(Failure::Call),
                    None => instance
                        .reconciler
                        .call_reconcile(store, &wit_request)
                        .await
                        .map(|r| r.map_err(extensions::PassError::from))
                        .map_err(Failure::Call),
                }
            })
            .await?;
        let failed = |message: String, retryable: bool, retry_after| PassError::Reconcile {
            plugin: self.name.clone(),
            object: object.clone(),
            message: guest_text(&message),
            retryable,
            retry_after,
            conflict: conflicted.load(std::sync::atomic::Ordering::Relaxed),
        };
        match result {
            Ok(outcome) => Ok(Outcome {
                requeue_after: outcome
                    .requeue_after_ms
                    .map(std::time::Duration::from_millis),
            }),
            Err(extensions::PassError::Transient(message)) => Err(failed(message, true, None)),
            Err(extensions::PassError::Permanent(message)) => Err(failed(message, false, None)),
            Err(extensions::PassError::RetryAfter(retry)) => Err(failed(
                retry.message,
                true,
                Some(std::time::Duration::from_millis(retry.after_ms)),
            )),
        }
    }

    /// Instantiates the plugin in a fresh store, calls nothing, and drops it: the fixed cost
    /// every pass pays before the guest runs (what benchmarks measure).
    pub async fn instantiate(&self, runtime: &Runtime) -> Result<(), PassError> {
        let cluster = ClusterCtx::none(&self.name);
        self.run(runtime, "instantiate", cluster, async |store| {
            match &self.info {
                PluginInfo::Reconciler { pre, .. } => pre.instantiate_async(store).await.map(drop),
                PluginInfo::Planner { pre, .. } => pre.instantiate_async(store).await.map(drop),
            }
            .map_err(Failure::Instantiate)
        })
        .await
    }

    /// The keys of field index `name` for the primary `object`.
    pub async fn index(
        &self,
        runtime: &Runtime,
        name: &str,
        object: &Value,
    ) -> Result<Vec<String>, PassError> {
        let key = shared::ObjectRef::from_object(object)
            .map(|r| r.key())
            .unwrap_or_else(|_| "<unnamed>".into());
        let (pre, _) = self.reconciler(&key)?;
        let text = crate::capabilities::texts::object_text(object);
        self.run(runtime, &key, ClusterCtx::none(&self.name), async |store| {
            let instance = pre
                .instantiate_async(&mut *store)
                .await
                .map_err(Failure::Instantiate)?;
            instance
                .reconciler
                .call_index(store, name, &text)
                .await
                .map_err(Failure::Call)
        })
        .await
    }

    /// Runs describe() in a fresh store; the message of the failure otherwise.
    pub(crate) async fn describe(&self, runtime: &Runtime) -> Result<Description, String> {
        let PluginInfo::Reconciler { pre, .. } = &self.info else {
            return Err("not a reconciler".into());
        };
        let cluster = ClusterCtx::none(&self.name);
        let (description, extended, admitted, targeting, selection) = self
            .run(runtime, "describe()", cluster, async |store| {
                let instance = pre
                    .instantiate_async(&mut *store)
                    .await
                    .map_err(Failure::Instantiate)?;
                let description = instance
                    .reconciler
                    .call_describe(&mut *store)
                    .await
                    .map_err(Failure::Call)?;
                let extended = match &instance.extensions {
                    Some(extensions) => Some(
                        extensions
                            .call_describe_extensions(&mut *store)
                            .await
                            .map_err(Failure::Call)?,
                    ),
                    None => None,
                };
                let admitted = match &instance.admission {
                    Some(admission) => admission
                        .call_describe_admission(&mut *store)
                        .await
                        .map_err(Failure::Call)?,
                    None => Vec::new(),
                };
                let targeting = match &instance.targeting {
                    Some(targeting) => Some(
                        targeting
                            .call_describe_targets(&mut *store)
                            .await
                            .map_err(Failure::Call)?,
                    ),
                    None => None,
                };
                let selection = match &instance.selection {
                    Some(selection) => Some(
                        selection
                            .call_describe_selection(&mut *store)
                            .await
                            .map_err(Failure::Call)?,
                    ),
                    None => None,
                };
                Ok((description, extended, admitted, targeting, selection))
            })
            .await
            .map_err(|e| e.to_string())?;
        let mut description = super::describe::from_wit(description);
        if let Some(extended) = extended {
            super::describe::extend(&mut description, extended);
        }
        description.admission = crate::admission::from_wit(admitted);
        if let Some(targeting) = targeting {
            description.targets = super::describe::targets(targeting);
        }
        if let Some(selection) = selection {
            description.primary_selector = selection.primary_labels;
        }
        super::describe::validate(&description)?;
        Ok(description)
    }

    pub(crate) fn reconciler(
        &self,
        object: &str,
    ) -> Result<(&ReconcilerPre, &Description), PassError> {
        match &self.info {
            PluginInfo::Reconciler {
                pre,
                description: Some(description),
            } => Ok((pre, description)),
            _ => Err(PassError::Instantiate {
                plugin: self.name.clone(),
                object: object.to_owned(),
                message: "not a described reconciler".into(),
            }),
        }
    }

    /// Runs `call` (instantiate, then one export) in a fresh store for `object`, within the
    /// plugin's deadline, and turns its outcome into the export's value or a [`PassError`].
    pub(crate) async fn run<T>(
        &self,
        runtime: &Runtime,
        object: &str,
        cluster: ClusterCtx,
        call: impl AsyncFnOnce(&mut Store<PassState>) -> Result<T, Failure>,
    ) -> Result<T, PassError> {
        self.run_within(runtime, object, cluster, self.limits.deadline, call)
            .await
    }

    /// [`Plugin::run`] with `deadline` in place of the plugin's own.
    pub(crate) async fn run_within<T>(
        &self,
        runtime: &Runtime,
        object: &str,
        cluster: ClusterCtx,
        deadline: Duration,
        call: impl AsyncFnOnce(&mut Store<PassState>) -> Result<T, Failure>,
    ) -> Result<T, PassError> {
        let mut store = self.store(runtime, cluster);
        self.call_in(runtime, &mut store, object, deadline, call)
            .await
    }

    /// Runs `call` in `store`, which earlier calls may have used, for `object` within
    /// `deadline`: the deadline and the fuel start again for it.
    pub(crate) async fn call_in<T>(
        &self,
        runtime: &Runtime,
        store: &mut Store<PassState>,
        object: &str,
        deadline: Duration,
        call: impl AsyncFnOnce(&mut Store<PassState>) -> Result<T, Failure>,
    ) -> Result<T, PassError> {
        self.arm(runtime, store, deadline);
        object.clone_into(&mut store.data_mut().log.object);
        let result = tokio::time::timeout(deadline, call(store)).await;
        self.settle(store, object, deadline, result)
    }

    /// A fresh store with the plugin's memory cap; each call in it names its object
    /// ([`Plugin::call_in`]).
    pub(crate) fn store(&self, runtime: &Runtime, cluster: ClusterCtx) -> Store<PassState> {
        let log = LogCtx {
            plugin: self.name.clone(),
            object: String::new(),
        };
        let egress = EgressHooks::new(
            &self.name,
            (*self.egress).clone(),
            &self.limits,
            runtime.egress(),
            cluster.trusted_ca.clone(),
            cluster.target_services.clone(),
        );
        let state = PassState::new(
            MemoryCap::new(self.limits.memory_bytes),
            egress,
            log,
            cluster,
            CryptoCtx::new(runtime.keygens.clone()),
            PlannerCtx::new(runtime.clone()),
        );
        let mut store = Store::new(&runtime.engine, state);
        store.limiter(|s| &mut s.memory);
        store
    }

    /// Gives the next call in `store` `deadline` in epoch ticks and the plugin's fuel.
    fn arm(&self, runtime: &Runtime, store: &mut Store<PassState>, deadline: Duration) {
        // At every epoch tick the guest yields to tokio, so a spinning guest leaves the
        // runtime's other tasks (Lease renewal, health, the change feed) their turn; when its
        // ticks are used up the pass traps with the deadline.
        let mut ticks_left = runtime.ticks(deadline);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            ticks_left = ticks_left.saturating_sub(1);
            if ticks_left == 0 {
                return Err(Trap::Interrupt.into());
            }
            // tokio's own yield: the worker polls its I/O and timer drivers before the guest
            // runs again (a plain self-wake would let the guest starve them).
            Ok(UpdateDeadline::YieldCustom(
                1,
                Box::pin(tokio::task::yield_now()),
            ))
        });
        if runtime.config.fuel {
            // Cannot fail: the engine counts fuel.
            let _ = store.set_fuel(self.limits.fuel.unwrap_or(u64::MAX));
        }
    }

    /// Turns the outcome of a call into the call's value or a [`PassError`] naming the cause.
    fn settle<T>(
        &self,
        store: &Store<PassState>,
        object: &str,
        deadline: Duration,
        result: Result<Result<T, Failure>, tokio::time::error::Elapsed>,
    ) -> Result<T, PassError> {
        let plugin = self.name.clone();
        let object = object.to_owned();
        let exceeded = || PassError::Deadline {
            plugin: plugin.clone(),
            object: object.clone(),
            deadline,
        };
        let error = match result {
            Ok(Ok(value)) => return Ok(value),
            Err(_elapsed) => return Err(exceeded()),
            Ok(Err(Failure::Instantiate(e))) => {
                return Err(PassError::Instantiate {
                    plugin,
                    object,
                    message: guest_text(&format!("{e:#}")),
                });
            }
            Ok(Err(Failure::Call(e))) => e,
        };
        let state = store.data();
        if let Some(requested) = state.memory.denied() {
            return Err(PassError::MemoryCap {
                plugin,
                object,
                limit: self.limits.memory_bytes,
                requested,
            });
        }
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => return Err(exceeded()),
            Some(Trap::OutOfFuel) => {
                return Err(PassError::Fuel {
                    plugin,
                    object,
                    limit: self.limits.fuel.unwrap_or(u64::MAX),
                });
            }
            _ => {}
        }
        let stderr = state.stderr();
        if let Some(message) = panic_message(&stderr) {
            return Err(PassError::GuestPanic {
                plugin,
                object,
                message,
            });
        }
        // A trap's description names guest functions: guest text too.
        let trap = guest_text(&match error.downcast_ref::<Trap>() {
            Some(trap) => trap.to_string(),
            None => format!("{error:#}"),
        });
        Err(PassError::Trap {
            plugin,
            object,
            trap,
        })
    }
}

/// Where a call failed.
pub(crate) enum Failure {
    Instantiate(wasmtime::Error),
    Call(wasmtime::Error),
}

/// The panic message in a guest's stderr: Rust prints `thread '…' panicked at <location>:`
/// then the message on the following lines.
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.find("panicked at ")?;
    let after = &stderr[start + "panicked at ".len()..];
    let (location, rest) = after.split_once('\n').unwrap_or((after, ""));
    let message: Vec<&str> = rest
        .lines()
        .take_while(|l| !l.starts_with("note: "))
        .collect();
    Some(guest_text(&format!(
        "{} (at {})",
        message.join("\n").trim(),
        location.trim_end_matches(':')
    )))
}

/// A 1.0 plugin's failure in 1.1's terms.
impl From<wit::ReconcileError> for extensions::PassError {
    fn from(error: wit::ReconcileError) -> Self {
        match error {
            wit::ReconcileError::Transient(m) => Self::Transient(m),
            wit::ReconcileError::Permanent(m) => Self::Permanent(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::panic_message;

    #[test]
    fn a_panic_message_is_read_from_stderr() {
        let stderr = "\nthread '<unnamed>' panicked at src/lib.rs:10:5:\nboom\nagain\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            panic_message(stderr).as_deref(),
            Some(r"boom\nagain (at src/lib.rs:10:5)")
        );
        assert_eq!(panic_message("memory allocation of 5 bytes failed"), None);
    }
}
