//! Passes of one reconciler as the controller runs them, as `.wasm` or natively: each on
//! its own task, up to [`CONCURRENCY`] at once, through one backend; and the report cells
//! that compare the two builds.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::task::JoinSet;
use tokio::time::Instant;
use wasm_operator_runtime::backend::ClusterBackend;
use wasm_operator_runtime::backend::access::Access;
use wasm_operator_runtime::{Plugin, Runtime};
use wasm_operator_sdk::{Outcome, ReconcileError, Reconciler, Request};

use super::report::{Cell, Stats};

/// Passes at once, as the controller's default.
pub(crate) const CONCURRENCY: usize = 4;

/// How a pass is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Build {
    Wasm,
    Native,
}

/// One native pass of a reconciler.
type NativePass = fn(
    Arc<dyn ClusterBackend>,
    Access,
    Request,
) -> BoxFuture<'static, Result<Outcome, ReconcileError>>;

/// What the passes need.
#[derive(Clone)]
pub(crate) struct Passes {
    runtime: Runtime,
    plugin: Arc<Plugin>,
    backend: Arc<dyn ClusterBackend>,
    native: NativePass,
}

fn native_pass<R: Reconciler + 'static>(
    backend: Arc<dyn ClusterBackend>,
    access: Access,
    request: Request,
) -> BoxFuture<'static, Result<Outcome, ReconcileError>> {
    Box::pin(wasm_operator_native::reconcile_native_with::<R>(
        backend, access, request,
    ))
}

/// The times of a batch of passes.
pub(crate) struct Batch {
    pub(crate) passes: Vec<Duration>,
    pub(crate) wall: Duration,
    /// CPU time the whole process used while the batch ran (every thread: the passes, the
    /// runtime, the API server answering them).
    pub(crate) cpu: Duration,
    pub(crate) failed: usize,
}

impl Passes {
    /// Passes of `plugin` and of its native build `R`, both with the plugin's access.
    pub(crate) fn new<R: Reconciler + 'static>(
        runtime: Runtime,
        plugin: Arc<Plugin>,
        backend: Arc<dyn ClusterBackend>,
    ) -> Self {
        Self {
            runtime,
            plugin,
            backend,
            native: native_pass::<R>,
        }
    }

    async fn one(&self, build: Build, request: Request) -> (Duration, bool) {
        let started = Instant::now();
        let ok = match build {
            Build::Wasm => self
                .plugin
                .reconcile(&self.runtime, self.backend.clone(), &request)
                .await
                .is_ok(),
            Build::Native => {
                let access = self.plugin.access().clone();
                (self.native)(self.backend.clone(), access, request)
                    .await
                    .is_ok()
            }
        };
        (started.elapsed(), ok)
    }

    /// Runs one pass per request, each on its own task, at most [`CONCURRENCY`] at once.
    pub(crate) async fn batch(&self, build: Build, requests: &[Request]) -> anyhow::Result<Batch> {
        let permits = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
        let started = Instant::now();
        let cpu_before = process_cpu();
        let mut tasks = JoinSet::new();
        for request in requests.iter().cloned() {
            let permit = permits.clone().acquire_owned().await?;
            let passes = self.clone();
            tasks.spawn(async move {
                let result = passes.one(build, request).await;
                drop(permit);
                result
            });
        }
        let mut batch = Batch::empty();
        while let Some(result) = tasks.join_next().await {
            let (elapsed, ok) = result?;
            batch.passes.push(elapsed);
            batch.failed += usize::from(!ok);
        }
        batch.wall = started.elapsed();
        batch.cpu = process_cpu().saturating_sub(cpu_before);
        Ok(batch)
    }
}

/// A request for the object `name` in each of `namespaces`.
pub(crate) fn requests(namespaces: &[String], name: &str) -> Vec<Request> {
    namespaces
        .iter()
        .map(|ns| Request {
            namespace: Some(ns.clone()),
            name: name.into(),
        })
        .collect()
}

impl Batch {
    pub(crate) fn empty() -> Self {
        Self {
            passes: Vec::new(),
            wall: Duration::ZERO,
            cpu: Duration::ZERO,
            failed: 0,
        }
    }

    pub(crate) fn add(&mut self, other: Batch) {
        self.passes.extend(other.passes);
        self.wall += other.wall;
        self.cpu += other.cpu;
        self.failed += other.failed;
    }

    fn rate(&self) -> f64 {
        self.passes.len() as f64 / self.wall.as_secs_f64().max(f64::EPSILON)
    }

    /// Process CPU time per pass, in milliseconds.
    fn cpu_per_pass_ms(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e3 / self.passes.len().max(1) as f64
    }
}

/// CPU time the process has used so far, all threads (`CLOCK_PROCESS_CPUTIME_ID`); zero
/// where the clock cannot be read.
fn process_cpu() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the duration of the call.
    let read = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    if read != 0 {
        return Duration::ZERO;
    }
    let seconds = u64::try_from(now.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(now.tv_nsec).unwrap_or(0);
    Duration::new(seconds, nanos)
}

/// Median pass times of both builds and their ratio.
pub(crate) fn compare_times(wasm: &[Duration], native: &[Duration]) -> Vec<Cell> {
    let median = |s: &[Duration]| Stats::of(s).map_or(f64::NAN, |s| s.median_ms);
    vec![
        Cell::time(wasm),
        Cell::time(native),
        Cell::ratio(median(wasm), median(native)),
    ]
}

/// Process CPU time per pass of both builds and their ratio: steadier than wall-clock
/// times on a shared machine, where a pass waits for a core as well as works.
pub(crate) fn compare_cpu(wasm: &Batch, native: &Batch) -> Vec<Cell> {
    let (wasm, native) = (wasm.cpu_per_pass_ms(), native.cpu_per_pass_ms());
    vec![
        Cell::number(wasm, "ms"),
        Cell::number(native, "ms"),
        Cell::ratio(wasm, native),
    ]
}

/// Passes per second of both builds, and how much longer wasm takes per pass.
pub(crate) fn compare_rates(wasm: &Batch, native: &Batch) -> Vec<Cell> {
    vec![
        Cell::number(wasm.rate(), "/s"),
        Cell::number(native.rate(), "/s"),
        Cell::ratio(native.rate(), wasm.rate()),
    ]
}
