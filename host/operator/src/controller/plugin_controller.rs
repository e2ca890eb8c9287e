//! The controller of one reconciler plugin, built from its `describe()`.
//!
//! 1. The primary kind and every watched kind get an informer (shared with other plugins).
//! 2. A change of the primary updates the plugin's field indexes (through the guest's
//!    `index` export) and, when the declared predicates let it through, queues the primary.
//! 3. A change of a watched kind updates the field indexes declared on that kind and is
//!    mapped to primaries by its declared mapping (see [`watches`]); an optional watch
//!    starts when its kind is served.
//! 4. A dispatcher hands queued keys to passes while this replica leads, never two passes
//!    of one key at once and at most `concurrency` at a time; each pass ends in the queue
//!    (success, requeue-after, backoff, or wait for the next change) and in the metrics.
//! 5. When this replica stops leading, the passes in flight are cancelled (their keys go
//!    back to the front of the queue, counted as `leadership_lost`) and no new pass starts
//!    until it leads again: two replicas never run passes at once.
//! 6. On stop the dispatcher takes no new key and waits up to the drain deadline for the
//!    passes in flight.
//! 7. A swapped-in version (or a canary set, changed or removed) gets every cached primary
//!    queued once, [`REQUEUE_SPACING`] apart: what the old version converged is passed by
//!    the new one, as a restarted operator would.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;
use wasm_operator_types::LabelSelector;
use wasm_operator_types::{Description, Request};

mod targets;
mod watches;

use super::index::FieldIndexes;
use super::mapping;
use super::queue::{Backoff, Done, WorkQueue};
use super::report;
use crate::cluster::cached::CachedCluster;
use crate::informer::{Change, Informers};
use crate::metrics::Metrics;
use crate::operator::kinds::KindResolver;
use crate::targets::{PluginTargets, TargetRegistry};
use wasm_operator_runtime::backend::remote::TargetClusters;
use wasm_operator_runtime::backend::{Caller, ClusterBackend};
use wasm_operator_runtime::{PassError, Plugin, Runtime};

/// The spacing of the passes [`Controller::requeue_all`] queues: 50 a second.
pub(crate) const REQUEUE_SPACING: Duration = Duration::from_millis(20);

/// How a controller runs its passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerConfig {
    /// Per-key backoff after a failed pass.
    pub backoff: Backoff,
    /// At most this many passes of the plugin at once.
    pub concurrency: usize,
    /// How long a stop waits for the passes in flight.
    pub drain: Duration,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            backoff: Backoff::default(),
            concurrency: 4,
            drain: Duration::from_secs(30),
        }
    }
}

/// A plugin that cannot be run as a controller.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The plugin is a planner, or its describe() is missing.
    #[error("plugin {plugin} is not a reconciler")]
    NotAReconciler { plugin: String },
}

/// A second version of the plugin for the primaries a label selector matches.
pub struct Canary {
    pub plugin: Arc<Plugin>,
    pub selector: LabelSelector,
}

/// The controller of one plugin.
pub struct Controller {
    description: Description,
    plugin: RwLock<Arc<Plugin>>,
    canary: RwLock<Option<Arc<Canary>>>,
    /// Primaries whose last pass failed and was reported on them.
    reported: std::sync::Mutex<std::collections::HashSet<Request>>,
    runtime: Runtime,
    server: Arc<dyn ClusterBackend>,
    cluster: Arc<dyn ClusterBackend>,
    informers: Arc<Informers>,
    /// Checks an optional watch's kind when it appears.
    kinds: Arc<KindResolver>,
    indexes: Arc<FieldIndexes>,
    queue: Arc<WorkQueue<Request>>,
    metrics: Arc<Metrics>,
    config: ControllerConfig,
    /// The target clusters its passes may open (a plugin that declares an owner label
    /// prefix, on a host that engages targets).
    targets: std::sync::OnceLock<(Arc<TargetRegistry>, Arc<PluginTargets>)>,
}

/// A started controller; [`stop`](Self::stop) drains it, dropping it aborts it.
pub struct Running {
    controller: Arc<Controller>,
    stop: watch::Sender<bool>,
    dispatcher: Option<JoinHandle<()>>,
    feeds: Vec<JoinHandle<()>>,
}

impl Controller {
    /// The controller of `plugin` (a reconciler), reading through `informers` and writing
    /// to `server`.
    pub(crate) fn new(
        plugin: Arc<Plugin>,
        runtime: Runtime,
        server: Arc<dyn ClusterBackend>,
        informers: Arc<Informers>,
        kinds: Arc<KindResolver>,
        metrics: Arc<Metrics>,
        config: ControllerConfig,
    ) -> Result<Arc<Self>, ControllerError> {
        let description =
            plugin
                .description()
                .cloned()
                .ok_or_else(|| ControllerError::NotAReconciler {
                    plugin: plugin.name().to_owned(),
                })?;
        let indexes = Arc::new(FieldIndexes::default());
        let cluster = Arc::new(CachedCluster::new(
            server.clone(),
            informers.clone(),
            indexes.clone(),
            &description,
        ));
        Ok(Arc::new(Self {
            description,
            plugin: RwLock::new(plugin),
            canary: RwLock::new(None),
            reported: std::sync::Mutex::default(),
            runtime,
            server,
            cluster,
            informers,
            kinds,
            indexes,
            queue: Arc::new(WorkQueue::new(config.backoff, config.concurrency)),
            metrics,
            config,
            targets: std::sync::OnceLock::new(),
        }))
    }

    /// Lets the passes open the target clusters of `registry` when the plugin writes to
    /// targets (it declared an owner label prefix), and starts the registry's watch. Call
    /// before [`start`](Self::start).
    pub(crate) fn engage_targets(&self, registry: &Arc<TargetRegistry>) {
        if !self.description.targets.targets() {
            return;
        }
        registry.start();
        let targets = PluginTargets::new(registry.clone(), self.description.clone());
        let _ = self.targets.set((registry.clone(), Arc::new(targets)));
    }

    /// The plugin's name.
    pub(crate) fn name(&self) -> &str {
        &self.description.name
    }

    /// What the plugin described.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The runtime its passes run in.
    pub(crate) fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The cluster its passes read (the shared caches first) and write through.
    pub(crate) fn cluster(&self) -> Arc<dyn ClusterBackend> {
        self.cluster.clone()
    }

    /// The plugin version new passes run.
    pub(crate) fn plugin(&self) -> Arc<Plugin> {
        self.plugin
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Makes `plugin` the version new passes run, and queues every cached primary once
    /// ([`requeue_all`](Self::requeue_all)), so objects the old version converged get the
    /// new version's pass as after a restart; passes in flight finish on the version they
    /// started with. `plugin` must describe the same controller ([`same_shape`]).
    pub(crate) fn swap(&self, plugin: Arc<Plugin>) -> Arc<Plugin> {
        let old = {
            let mut slot = self
                .plugin
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            std::mem::replace(&mut *slot, plugin)
        };
        self.requeue_all();
        old
    }

    /// Routes the primaries `canary`'s selector matches to its plugin (`None`: all to the
    /// main version), and queues every cached primary once, so each is passed by the
    /// version that now owns it.
    pub(crate) fn set_canary(&self, canary: Option<Canary>) {
        *self
            .canary
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = canary.map(Arc::new);
        self.requeue_all();
    }

    /// Queues every primary in the cache once, [`REQUEUE_SPACING`] apart (so a swap over
    /// 10,000 objects adds 50 passes a second, the client's default request rate, to what
    /// the queue already holds, not 10,000 at once); returns how many.
    pub(crate) fn requeue_all(&self) -> usize {
        let informer = self.primary_informer();
        let requests: Vec<Request> = informer
            .filter(|_| true)
            .iter()
            .filter_map(|object| mapping::request_of(object))
            .collect();
        let mut delay = Duration::ZERO;
        for request in &requests {
            self.queue.add_after(request.clone(), delay);
            delay += REQUEUE_SPACING;
        }
        self.metrics.queue_depth(self.name(), self.queue.depth());
        tracing::info!(
            plugin = self.name(),
            primaries = requests.len(),
            "queued every cached primary for the version now serving"
        );
        requests.len()
    }

    /// The canary, if one is set.
    pub fn canary(&self) -> Option<Arc<Canary>> {
        self.canary
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The version that reconciles `request`: the canary when its selector matches the
    /// cached primary, the main version otherwise.
    fn plugin_for(&self, request: &Request) -> Arc<Plugin> {
        if let Some(canary) = self.canary() {
            let primary = self
                .informers
                .get(
                    &self.description.primary.api_version,
                    &self.description.primary.kind,
                )
                .and_then(|i| {
                    i.get(&wasm_operator_types::object_key(
                        request.namespace.as_deref(),
                        &request.name,
                    ))
                });
            if primary.is_some_and(|p| canary.selector.matches(&p)) {
                return canary.plugin.clone();
            }
        }
        self.plugin()
    }

    /// The work queue (for tests and metrics).
    pub fn queue(&self) -> &WorkQueue<Request> {
        &self.queue
    }

    /// The informer of the primaries: of those `primary_selector` matches when the plugin
    /// declared one, else of every object of the kind.
    fn primary_informer(&self) -> Arc<crate::informer::Informer> {
        self.informers.ensure_selected(
            &self.description.primary,
            self.description.primary_selector.as_deref(),
        )
    }

    /// Starts the informers, the feeds into the queue and the dispatcher. Passes run only
    /// while `leading` holds `true`.
    pub(crate) fn start(self: &Arc<Self>, leading: watch::Receiver<bool>) -> Running {
        let primary = self.primary_informer();
        let mut feeds = vec![tokio::spawn(self.clone().feed_primary(primary.subscribe()))];
        feeds.extend(self.start_watches());
        if let Some((registry, _)) = self.targets.get() {
            feeds.push(tokio::spawn(
                self.clone().feed_targets(registry.subscribe()),
            ));
        }
        let (stop, stopped) = watch::channel(false);
        let dispatcher = tokio::spawn(self.clone().dispatch(leading, stopped));
        Running {
            controller: self.clone(),
            stop,
            dispatcher: Some(dispatcher),
            feeds,
        }
    }

    async fn feed_primary(self: Arc<Self>, mut changes: mpsc::UnboundedReceiver<Change>) {
        while let Some(change) = changes.recv().await {
            let Some(request) = change.object().and_then(mapping::request_of) else {
                continue;
            };
            match &change.new {
                Some(object) => self.reindex(&request, object).await,
                None => self.indexes.remove(&request),
            }
            if mapping::passes(&self.description.primary_predicates, &change) {
                self.enqueue(request);
            }
        }
    }

    async fn reindex(&self, request: &Request, object: &Value) {
        let plugin = self.plugin();
        for index in &self.description.indexes {
            match plugin.index(&self.runtime, &index.name, object).await {
                Ok(keys) => self.indexes.set(&index.name, request, keys),
                Err(error) => tracing::warn!(
                    plugin = self.name(),
                    index = index.name,
                    %error,
                    "field index failed; the object keeps its previous keys"
                ),
            }
        }
    }

    fn enqueue(&self, request: Request) {
        tracing::trace!(
            plugin = self.name(),
            namespace = request.namespace.as_deref(),
            name = request.name,
            "queued"
        );
        self.queue.add(request);
        self.metrics.queue_depth(self.name(), self.queue.depth());
    }

    async fn dispatch(
        self: Arc<Self>,
        mut leading: watch::Receiver<bool>,
        mut stopped: watch::Receiver<bool>,
    ) {
        let mut passes = JoinSet::new();
        loop {
            while passes.try_join_next().is_some() {}
            tokio::select! {
                biased;
                _ = stopped.wait_for(|s| *s) => break,
                lead = leading.wait_for(|l| *l) => if lead.is_err() { break },
            }
            let request = tokio::select! {
                biased;
                _ = stopped.wait_for(|s| *s) => break,
                request = self.queue.next() => request,
            };
            if !*leading.borrow() {
                self.queue.give_back(request);
                continue;
            }
            passes.spawn(self.clone().pass(request, leading.clone()));
        }
        let in_flight = passes.len();
        if in_flight > 0 {
            tracing::info!(
                plugin = self.name(),
                in_flight,
                "stopping: waiting for the passes in flight"
            );
        }
        let drained = tokio::time::timeout(self.config.drain, async {
            while passes.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                plugin = self.name(),
                left = passes.len(),
                drain = ?self.config.drain,
                "passes still running at the drain deadline were cancelled"
            );
            passes.shutdown().await;
        }
    }

    async fn pass(self: Arc<Self>, request: Request, mut leading: watch::Receiver<bool>) {
        let plugin = self.plugin_for(&request);
        let in_flight = InFlight::start(&self.metrics, self.name());
        let started = Instant::now();
        let result = tokio::select! {
            result = plugin.reconcile_with_targets(
                &self.runtime,
                self.cluster.clone(),
                self.targets.get().map(|(_, t)| t.clone() as Arc<dyn TargetClusters>),
                &request,
            ) => result,
            () = leadership_lost(&mut leading) => {
                // Dropping the pass's future drops its store: the guest stops where it was.
                tracing::warn!(
                    plugin = self.name(),
                    namespace = request.namespace.as_deref(),
                    name = request.name,
                    "pass cancelled: this replica stopped leading"
                );
                self.metrics
                    .pass(self.name(), "error", Some(LEADERSHIP_LOST), started.elapsed());
                drop(in_flight);
                self.queue.give_back(request);
                self.metrics.queue_depth(self.name(), self.queue.depth());
                return;
            }
        };
        let elapsed = started.elapsed();
        tracing::debug!(
            plugin = self.name(),
            version = plugin.description().map(|d| d.version.as_str()),
            namespace = request.namespace.as_deref(),
            name = request.name,
            ?elapsed,
            outcome = ?result.as_ref().map(|o| o.requeue_after),
            "pass"
        );
        let done = match &result {
            Ok(outcome) => {
                let done = match outcome.requeue_after {
                    Some(after) => Done::RequeueAfter(after),
                    None => Done::Success,
                };
                let label = if outcome.requeue_after.is_some() {
                    "requeue"
                } else {
                    "success"
                };
                self.metrics.pass(self.name(), label, None, elapsed);
                drop(in_flight);
                let cached = self.cached_primary(&request);
                let reported = self.reported_lock().remove(&request);
                report::success(
                    self.server.as_ref(),
                    report::carries_failure(reported, cached.as_deref()),
                    &self.description.primary,
                    &request,
                )
                .await;
                done
            }
            Err(error) => {
                tracing::warn!(plugin = self.name(), %error, "pass failed");
                let result = if error.is_conflict() {
                    "conflict"
                } else {
                    "error"
                };
                self.metrics
                    .pass(self.name(), result, Some(error.label()), elapsed);
                drop(in_flight);
                if !matches!(error, PassError::Reconcile { .. }) {
                    self.reported_lock().insert(request.clone());
                    report::failure(
                        self.server.as_ref(),
                        &self.caller(),
                        &self.description.primary,
                        &request,
                        error,
                    )
                    .await;
                } else if !error.is_conflict() {
                    let cached = self.cached_primary(&request);
                    let reported = self.reported_lock().contains(&request);
                    report::reconcile_error(
                        self.server.as_ref(),
                        &self.caller(),
                        &self.description.primary,
                        &request,
                        error,
                        report::carries_failure(reported, cached.as_deref()),
                    )
                    .await;
                }
                match error.retry_after() {
                    Some(after) => Done::FailedRetryAfter(after),
                    None if error.is_retryable() => Done::Failed,
                    None => Done::FailedPermanently,
                }
            }
        };
        self.queue.done(request, done);
        self.metrics.queue_depth(self.name(), self.queue.depth());
    }

    fn caller(&self) -> Caller {
        Caller {
            plugin: self.description.name.clone(),
            field_manager: self.description.field_manager.clone(),
        }
    }

    fn reported_lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<Request>> {
        self.reported
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn cached_primary(&self, request: &Request) -> Option<Arc<Value>> {
        let primary = &self.description.primary;
        self.informers
            .get(&primary.api_version, &primary.kind)?
            .get(&wasm_operator_types::object_key(
                request.namespace.as_deref(),
                &request.name,
            ))
    }
}

/// The error label of a pass cancelled because this replica stopped leading.
const LEADERSHIP_LOST: &str = "leadership_lost";

/// Returns once `leading` turns `false`; never when its sender is gone (no election to lose:
/// the operator is shutting down, and its passes drain).
async fn leadership_lost(leading: &mut watch::Receiver<bool>) {
    if leading.wait_for(|l| !*l).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Counts a pass in `passes_in_flight` from its start until it is dropped, which the pass
/// does once `passes_total` counts it: a reader that sees no pass in flight sees every
/// started pass counted.
struct InFlight<'a> {
    metrics: &'a Metrics,
    plugin: &'a str,
}

impl<'a> InFlight<'a> {
    fn start(metrics: &'a Metrics, plugin: &'a str) -> Self {
        metrics.in_flight(plugin, 1);
        Self { metrics, plugin }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.metrics.in_flight(self.plugin, -1);
    }
}

/// Whether two descriptions drive the same controller (primary and its selector,
/// predicates, watches, indexes, field manager), so one version can replace the other
/// without restarting it.
pub(crate) fn same_shape(a: &Description, b: &Description) -> bool {
    a.name == b.name
        && a.field_manager == b.field_manager
        && a.primary == b.primary
        && a.primary_selector == b.primary_selector
        && a.primary_predicates == b.primary_predicates
        && a.watches == b.watches
        && a.indexes == b.indexes
}

impl Running {
    /// The controller.
    pub(crate) fn controller(&self) -> &Arc<Controller> {
        &self.controller
    }

    /// Stops taking keys, waits for the passes in flight (up to the drain deadline), and
    /// stops the feeds.
    pub(crate) async fn stop(mut self) {
        self.stop.send_replace(true);
        if let Some(dispatcher) = self.dispatcher.take() {
            let _ = dispatcher.await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(dispatcher) = &self.dispatcher {
            dispatcher.abort();
        }
        for feed in &self.feeds {
            feed.abort();
        }
    }
}
