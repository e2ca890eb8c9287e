//! The runtime: one engine, one linker, the artifact cache and the epoch ticker.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use sha2::{Digest, Sha256};
use wasmtime::component::Linker;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::cache::{ArtifactCache, CacheError};
use super::contract::{self, PluginKind};
use super::error::LoadError;
use super::limits::Limits;
use super::plugin::{Plugin, PluginInfo};
use crate::backend::access::{Access, Permissions};
use crate::bindings::{
    PlannerPluginPre, ReconcilerPre, client, cluster, crypto, egress, logging, planner_import,
    targets, types,
};
use crate::capabilities::http::{AllowList, EgressEnv};
use crate::capabilities::texts::Texts;
use crate::capabilities::{
    ClusterCtx, HasCluster, HasCrypto, HasLog, HasPlanner, Keygens, PassState,
};
use crate::planner_memo::PlanMemo;

/// How the runtime is set up.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Where precompiled artifacts are kept; `None` compiles on every load.
    pub cache_dir: Option<PathBuf>,
    /// The file holding the key artifacts are sealed with (at least 32 bytes, outside
    /// `cache_dir`); `None`: a random key for this process, so artifacts cached by an
    /// earlier process are recompiled.
    pub cache_key_file: Option<PathBuf>,
    /// The limits of a plugin that sets none of its own.
    pub default_limits: Limits,
    /// The largest memory cap any plugin may have (sizes the pooling allocator's slots).
    pub max_memory_bytes: usize,
    /// How many stores may be alive at once (sizes the pooling allocator).
    pub max_concurrent_stores: u32,
    /// The epoch tick: the granularity of pass deadlines.
    pub epoch_tick: Duration,
    /// Count fuel, so plugins may be given a fuel limit (costs some speed in every pass).
    pub fuel: bool,
    /// How many key generations (the `crypto` capability) may run at once, over all
    /// plugins; more wait for a turn within their pass's deadline.
    pub max_concurrent_keygens: usize,
    /// How many planner answers are kept per planner plugin (and at most 2 KiB of answers
    /// per entry), so a request that comes again (a converged Secret) is answered without
    /// running the planner; 0 keeps none. Only answers of calls that made no import, and add
    /// no key, are kept.
    pub planner_memo_entries: usize,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            cache_dir: super::cache::default_dir(),
            cache_key_file: None,
            default_limits: Limits::default(),
            max_memory_bytes: 1 << 30,
            max_concurrent_stores: 64,
            epoch_tick: Duration::from_millis(10),
            fuel: false,
            max_concurrent_keygens: std::thread::available_parallelism().map_or(1, |n| n.get()),
            planner_memo_entries: 8192,
        }
    }
}

/// Why the runtime could not start.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// wasmtime refused the engine configuration.
    #[error("cannot create the wasmtime engine: {0:#}")]
    Engine(#[source] wasmtime::Error),
    /// A capability could not be added to the linker.
    #[error("cannot link the host capabilities: {0:#}")]
    Linker(#[source] wasmtime::Error),
    /// The artifact cache's directory or key cannot be trusted.
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// The plugin runtime: loads plugins and runs their passes. Cloning it is cheap and shares
/// everything (a pass that calls the planner runs it on the same runtime).
#[derive(Clone)]
pub struct Runtime(Arc<Inner>);

/// What a [`Runtime`] shares (opaque outside this crate).
pub struct Inner {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<PassState>,
    pub(crate) cache: ArtifactCache,
    pub(crate) config: RuntimeConfig,
    /// The planner plugin that reconcilers importing `planner` are linked to.
    planner: RwLock<Option<Arc<Plugin>>>,
    pub(crate) keygens: Arc<Keygens>,
    /// Calls into planner plugins, and the planner instances made for them, so far.
    pub(crate) planner_calls: AtomicU64,
    pub(crate) planner_instances: AtomicU64,
    /// Planner calls answered from a planner's memo so far.
    pub(crate) planner_memo_hits: AtomicU64,
    /// The JSON text guests read cached objects as.
    pub(crate) texts: Arc<Texts>,
    /// What HTTP egress is resolved through and reported to.
    egress: RwLock<EgressEnv>,
    stop_ticker: Arc<AtomicBool>,
}

impl std::ops::Deref for Runtime {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl Runtime {
    /// Builds the engine and the linker and starts the epoch ticker.
    pub fn new(config: RuntimeConfig) -> Result<Self, RuntimeError> {
        let engine = Engine::new(&engine_config(&config)).map_err(RuntimeError::Engine)?;
        let mut linker = Linker::new(&engine);
        add_capabilities(&mut linker).map_err(RuntimeError::Linker)?;
        let cache = ArtifactCache::open(
            config.cache_dir.clone(),
            config.cache_key_file.as_deref(),
            &engine,
        )?;
        let stop_ticker = Arc::new(AtomicBool::new(false));
        let keygens = Arc::new(Keygens::new(config.max_concurrent_keygens));
        spawn_ticker(engine.clone(), config.epoch_tick, stop_ticker.clone());
        Ok(Self(Arc::new(Inner {
            engine,
            linker,
            cache,
            config,
            planner: RwLock::new(None),
            keygens,
            planner_calls: AtomicU64::new(0),
            planner_instances: AtomicU64::new(0),
            planner_memo_hits: AtomicU64::new(0),
            texts: Arc::default(),
            egress: RwLock::default(),
            stop_ticker,
        })))
    }

    /// Links `planner` (a planner plugin) into every reconciler that imports `planner`,
    /// from their next call on; the previous planner, if any, is returned. Passes already
    /// calling the previous one finish with it.
    pub fn link_planner(&self, planner: Arc<Plugin>) -> Result<Option<Arc<Plugin>>, LoadError> {
        if planner.kind() != PluginKind::Planner {
            return Err(LoadError::NotAPlanner {
                path: planner.path().to_owned(),
            });
        }
        let mut slot = self
            .planner
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(slot.replace(planner))
    }

    /// Sets how plugins' HTTP requests resolve Service names and whom they are reported
    /// to, from the next pass on.
    pub fn set_egress(&self, env: EgressEnv) {
        *self
            .egress
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = env;
    }

    /// What HTTP egress resolves through and reports to now.
    pub(crate) fn egress(&self) -> EgressEnv {
        self.egress
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The planner plugin reconcilers are linked to now.
    pub fn planner(&self) -> Option<Arc<Plugin>> {
        self.planner
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Calls a planner plugin ran so far (calls answered from its memo not counted).
    pub fn planner_calls(&self) -> u64 {
        self.planner_calls.load(Ordering::Relaxed)
    }

    /// Planner instances made so far: one per reconciler pass whose planner calls are not
    /// all answered from the memo, plus one after each planner call that failed or found
    /// another planner linked.
    pub fn planner_instances(&self) -> u64 {
        self.planner_instances.load(Ordering::Relaxed)
    }

    /// Planner calls answered from the linked planner's memo so far (see
    /// [`RuntimeConfig::planner_memo_entries`]).
    pub fn planner_memo_hits(&self) -> u64 {
        self.planner_memo_hits.load(Ordering::Relaxed)
    }

    /// Key generations started so far (the `crypto` capability).
    pub fn keygens_started(&self) -> u64 {
        self.keygens.started()
    }

    /// Key generations running now; one a pass stopped waiting for counts until its
    /// thread has stopped.
    pub fn keygens_running(&self) -> usize {
        self.keygens.running()
    }

    /// The engine (shared with the wasi runner).
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The artifact cache.
    pub(crate) fn cache(&self) -> &ArtifactCache {
        &self.cache
    }

    /// How many artifacts found in the cache were refused (planted, tampered with, sealed
    /// under another key, or not regular files) and replaced since the start.
    pub fn artifacts_rejected(&self) -> u64 {
        self.cache.rejected()
    }

    /// The runtime's configuration.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Epoch ticks in `deadline`, at least one.
    pub(crate) fn ticks(&self, deadline: Duration) -> u64 {
        let tick = self.config.epoch_tick.as_nanos().max(1);
        u64::try_from(deadline.as_nanos().div_ceil(tick))
            .unwrap_or(u64::MAX)
            .max(1)
    }

    /// Reads, compiles (or loads precompiled), checks and pre-instantiates the plugin at
    /// `path`, and runs a reconciler's `describe()`.
    pub async fn load(&self, path: &Path, limits: Option<Limits>) -> Result<Plugin, LoadError> {
        self.load_pinned(path, limits, None).await
    }

    /// [`load`](Self::load), refusing the file unless its sha256 is `expected` (hex) when
    /// given.
    pub async fn load_pinned(
        &self,
        path: &Path,
        limits: Option<Limits>,
        expected: Option<&str>,
    ) -> Result<Plugin, LoadError> {
        self.load_checked(path, limits, expected, true).await
    }

    /// Every load-time check of [`load_pinned`](Self::load_pinned), except that a reconciler
    /// importing `planner` does not need a planner linked yet (`plugin check`).
    pub async fn check(
        &self,
        path: &Path,
        limits: Option<Limits>,
        expected: Option<&str>,
    ) -> Result<Plugin, LoadError> {
        self.load_checked(path, limits, expected, false).await
    }

    async fn load_checked(
        &self,
        path: &Path,
        limits: Option<Limits>,
        expected: Option<&str>,
        require_planner: bool,
    ) -> Result<Plugin, LoadError> {
        let limits = limits.unwrap_or(self.config.default_limits);
        if limits.fuel.is_some() && !self.config.fuel {
            return Err(LoadError::FuelOff {
                path: path.to_owned(),
            });
        }
        let bytes = std::fs::read(path).map_err(|source| LoadError::Read {
            path: path.to_owned(),
            source,
        })?;
        let sha256 = hex::encode(Sha256::digest(&bytes));
        if let Some(expected) = expected
            && !expected.eq_ignore_ascii_case(&sha256)
        {
            return Err(LoadError::Sha256Mismatch {
                path: path.to_owned(),
                expected: expected.to_owned(),
                actual: sha256,
            });
        }
        check_component_header(path, &bytes)?;
        let (component, cache) = self
            .cache
            .component(&self.engine, &bytes, &sha256)
            .map_err(|source| {
                if is_pool_refusal(&source) {
                    LoadError::Limits {
                        path: path.to_owned(),
                        message: source.to_string(),
                    }
                } else {
                    LoadError::Compile {
                        path: path.to_owned(),
                        source,
                    }
                }
            })?;
        let contract =
            contract::check(&self.engine, &component).map_err(|source| LoadError::Contract {
                path: path.to_owned(),
                source,
            })?;
        if require_planner && contract.imports_planner && self.planner().is_none() {
            return Err(LoadError::NoPlanner {
                path: path.to_owned(),
            });
        }
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| LoadError::Link {
                path: path.to_owned(),
                message: format!("{e:#}"),
            })?;
        let link = |e: wasmtime::Error| LoadError::Link {
            path: path.to_owned(),
            message: format!("{e:#}"),
        };
        let file_stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut plugin = Plugin {
            name: file_stem,
            path: path.to_owned(),
            sha256,
            contract: contract.version,
            imports_planner: contract.imports_planner,
            cache,
            limits,
            permissions: Arc::default(),
            egress: Arc::default(),
            info: match contract.kind {
                PluginKind::Reconciler => PluginInfo::Reconciler {
                    pre: ReconcilerPre::new(pre).map_err(link)?,
                    description: None,
                },
                PluginKind::Planner => PluginInfo::Planner {
                    pre: PlannerPluginPre::new(pre).map_err(link)?,
                    memo: PlanMemo::new(self.config.planner_memo_entries),
                },
            },
        };
        if let PluginInfo::Reconciler { .. } = plugin.info {
            let description =
                plugin
                    .describe(self)
                    .await
                    .map_err(|message| LoadError::Describe {
                        path: path.to_owned(),
                        message: crate::text::guest_text(&message),
                    })?;
            plugin.name = description.name.clone();
            // describe() validation parsed these already.
            plugin.egress = Arc::new(AllowList::parse(&description.egress).map_err(|message| {
                LoadError::Describe {
                    path: path.to_owned(),
                    message,
                }
            })?);
            plugin.permissions = Arc::new(Permissions::of(&description, Access::default()));
            if let PluginInfo::Reconciler { description: d, .. } = &mut plugin.info {
                *d = Some(Box::new(description));
            }
        }
        Ok(plugin)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop_ticker.store(true, Ordering::Relaxed);
    }
}

/// Bytes of each pooled memory and table kept resident between instances.
const KEEP_RESIDENT: usize = 4 << 20;
/// Idle slots kept warm (each holding up to [`KEEP_RESIDENT`] bytes of a memory): at most
/// 64 MiB resident for idle instances, enough for a pass and its planner calls on every
/// core of a large node.
const WARM_SLOTS: u32 = 16;

/// What one component (one plugin's instance in a pass's store) may hold. The shipped
/// plugins and the test plugins (Rust, `wasm32-wasip2`) have one memory and two tables
/// (`Component::resources_required`) and load within these core instances; the rest is
/// headroom. A component over any of these is
/// refused at load ([`LoadError::Limits`](super::LoadError::Limits)), so no plugin takes
/// more of the shared pool than this.
pub(crate) const MAX_MEMORIES_PER_COMPONENT: u32 = 2;
/// See [`MAX_MEMORIES_PER_COMPONENT`].
pub(crate) const MAX_TABLES_PER_COMPONENT: u32 = 8;
/// See [`MAX_MEMORIES_PER_COMPONENT`].
pub(crate) const MAX_CORE_INSTANCES_PER_COMPONENT: u32 = 16;
/// Bytes of instance metadata (not linear memory) one component may need: wasmtime's
/// default, named here so that it is a decision.
const MAX_COMPONENT_INSTANCE_SIZE: usize = 1 << 20;

fn engine_config(config: &RuntimeConfig) -> Config {
    let stores = config.max_concurrent_stores.max(1);
    let mut pool = PoolingAllocationConfig::new();
    // Each store holds one component instance (a planner call gets its own store), so the
    // pool's totals are the per-component maxima times the stores.
    pool.total_component_instances(stores * 2)
        .total_core_instances(stores * MAX_CORE_INSTANCES_PER_COMPONENT)
        .total_memories(stores * MAX_MEMORIES_PER_COMPONENT)
        .total_tables(stores * MAX_TABLES_PER_COMPONENT)
        .total_stacks(stores * 2)
        .max_memories_per_component(MAX_MEMORIES_PER_COMPONENT)
        .max_tables_per_component(MAX_TABLES_PER_COMPONENT)
        .max_core_instances_per_component(MAX_CORE_INSTANCES_PER_COMPONENT)
        .max_component_instance_size(MAX_COMPONENT_INSTANCE_SIZE)
        .max_memories_per_module(1)
        .max_memory_size(config.max_memory_bytes)
        // Every pass and planner call gets a fresh instance. Resetting a slot's first pages
        // with memset instead of madvise spares the TLB shootdowns and page faults that
        // otherwise cost more than the instance itself (see the boundary benchmark).
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(KEEP_RESIDENT)
        // What that keeps resident is bounded by the idle slots kept warm.
        .max_unused_warm_slots(WARM_SLOTS)
        .pagemap_scan(wasmtime::Enabled::Auto)
        .decommit_batch_size(16);
    let mut c = Config::new();
    c.wasm_component_model(true)
        .epoch_interruption(true)
        .consume_fuel(config.fuel)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    if perf_map_requested() {
        c.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    c
}

/// The environment variable that makes the engine write `/tmp/perf-PID.map` (the names
/// and addresses of every compiled guest function, for `perf report`), as `wasmtime
/// --profile=perfmap` does. A diagnostic switch honoured by every process that embeds the
/// runtime (the operator, the benchmarks); off unless set to `1`.
pub const PERF_MAP_ENV: &str = "WASM_OPERATOR_PERF_MAP";

fn perf_map_requested() -> bool {
    std::env::var_os(PERF_MAP_ENV).is_some_and(|v| v == "1")
}

/// Whether wasmtime refused a component for what the pooling allocator gives one
/// component (memories, tables, core instances, instance size).
///
/// DECISION: wasmtime checks these when it makes the `Component` (compiled or loaded
/// precompiled) and reports them only as text; its messages (wasmtime is pinned) all say
/// "pooling allocator". Telling them apart here turns them into a named
/// [`LoadError::Limits`](super::LoadError::Limits) instead of a compile failure, and the
/// many-memories test fails if a wasmtime upgrade changes the wording.
pub(crate) fn is_pool_refusal(error: &CacheError) -> bool {
    match error {
        CacheError::Compile(e) => format!("{e:#}").contains("pooling allocator"),
        CacheError::Write { .. }
        | CacheError::Dir { .. }
        | CacheError::UnsafeDir { .. }
        | CacheError::Key { .. }
        | CacheError::Random => false,
    }
}

fn add_capabilities(linker: &mut Linker<PassState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)?;
    // Each getter counts the call it serves (`PassState::import_calls`).
    types::add_to_linker::<PassState, HasCluster>(linker, cluster_ctx)?;
    cluster::add_to_linker::<PassState, HasCluster>(linker, cluster_ctx)?;
    client::add_to_linker::<PassState, HasCluster>(linker, cluster_ctx)?;
    egress::add_to_linker::<PassState, HasCluster>(linker, cluster_ctx)?;
    targets::add_to_linker::<PassState, HasCluster>(linker, cluster_ctx)?;
    logging::add_to_linker::<PassState, HasLog>(linker, |s| {
        s.import_calls += 1;
        &mut s.log
    })?;
    crypto::add_to_linker::<PassState, HasCrypto>(linker, |s| {
        s.import_calls += 1;
        &mut s.crypto
    })?;
    planner_import::add_to_linker::<PassState, HasPlanner>(linker, |s| {
        s.import_calls += 1;
        &mut s.planner
    })?;
    Ok(())
}

fn cluster_ctx(state: &mut PassState) -> &mut ClusterCtx {
    state.import_calls += 1;
    &mut state.cluster
}

/// Advances the engine's epoch every `tick` until `stop` is set.
fn spawn_ticker(engine: Engine, tick: Duration, stop: Arc<AtomicBool>) {
    let spawned = std::thread::Builder::new()
        .name("wasm-epoch".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(tick);
                engine.increment_epoch();
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the epoch ticker: pass deadlines fall back to wall-clock timeouts");
    }
}

/// `\0asm` then the layer: 1 for a core module, 0x0d for a component.
fn check_component_header(path: &Path, bytes: &[u8]) -> Result<(), LoadError> {
    match bytes.get(..8) {
        Some([0, b'a', b's', b'm', 0x0d, 0, 1, 0]) => Ok(()),
        Some([0, b'a', b's', b'm', 1, 0, 0, 0]) => Err(LoadError::CoreModule {
            path: path.to_owned(),
        }),
        _ => Err(LoadError::NotWasm {
            path: path.to_owned(),
        }),
    }
}
