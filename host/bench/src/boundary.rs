//! Scenario 2, boundary costs: what crossing into wasm costs, apart from the API server.
//!
//! The test fixture (a ConfigMap echo) runs as `.wasm` and natively against a
//! [`MemoryCluster`], so the difference is the instance, the copies across the WIT
//! boundary and the guest's own speed. Loading compares compiling a component with
//! loading its precompiled artifact.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use fixture_reconciler::{Fixture, SECRETS};
use serde_json::{Value, json};
use tokio::time::Instant;
use wasm_operator_sdk::Request;

use super::memory::MemoryCluster;
use super::report::{Cell, Section, Stats};
use super::{BenchOptions, sample};
use wasm_operator_native::reconcile_native;
use wasm_operator_runtime::backend::ClusterBackend;
use wasm_operator_runtime::{Plugin, Runtime, RuntimeConfig};

const NAMESPACE: &str = "bench";
/// Secrets the round-trip primary names: one cached get each.
const CALLS: usize = 100;

fn config_map(name: &str, payload_bytes: usize) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": format!("uid-{name}")},
        "data": {"payload": "x".repeat(payload_bytes)},
    })
}

fn secret(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": format!("uid-{name}"),
                     "resourceVersion": "1", "labels": {"app": "bench"}},
        "type": "Opaque",
        "data": {"token": "dG9rZW4tdG9rZW4tdG9rZW4tdG9rZW4tdG9rZW4tdG9rZW4="},
    })
}

/// Two primaries of the same size whose passes differ only in [`CALLS`] cached gets: one
/// names that many existing Secrets, the other carries an annotation as long under another
/// key; both hold the `secret-versions` the first one's echo computes, so the echoes match.
fn round_trip_objects() -> Vec<Value> {
    let names: Vec<String> = (0..CALLS).map(|i| format!("s{i}")).collect();
    let listed = names.join(",");
    let versions: Vec<String> = names.iter().map(|n| format!("{n}=1")).collect();
    let mut objects: Vec<Value> = names.iter().map(|n| secret(n)).collect();
    for (name, key) in [
        ("calls", SECRETS),
        ("none", "bench.wasm-operator.dev/padding"),
    ] {
        let mut primary = config_map(name, 64);
        primary["metadata"]["annotations"] = json!({ key: listed });
        primary["data"]["secret-versions"] = json!(versions.join(","));
        objects.push(primary);
    }
    objects
}

fn request(name: &str) -> Request {
    Request {
        namespace: Some(NAMESPACE.into()),
        name: name.into(),
    }
}

fn runtime(cache: &Path) -> anyhow::Result<Runtime> {
    Ok(Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.to_owned()),
        ..RuntimeConfig::default()
    })?)
}

/// Loads the shipped planner and links it (gitlabsecrets needs one to load).
async fn load_shipped(runtime: &Runtime, dir: &Path) -> anyhow::Result<(Plugin, Arc<Plugin>)> {
    let planner = Arc::new(runtime.load(&dir.join("secretgen.wasm"), None).await?);
    runtime.link_planner(planner.clone())?;
    let reconciler = runtime.load(&dir.join("gitlabsecrets.wasm"), None).await?;
    Ok((reconciler, planner))
}

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let mut section = Section::new(
        "boundary",
        "2. Boundary costs (fixture reconciler on an in-memory cluster)",
        &["measure", "wasm", "native", "wasm ÷ native"],
    );
    let cache = tempfile::tempdir()?;
    let runtime = runtime(cache.path())?;
    let fixture = runtime
        .load(&options.test_plugins.join("fixture-reconciler.wasm"), None)
        .await?;
    let (gitlabsecrets, secretgen) = load_shipped(&runtime, &options.plugins).await?;

    let n = options.samples(200);
    for (name, plugin) in [
        ("fixture", &fixture),
        ("gitlabsecrets", &gitlabsecrets),
        ("secretgen", secretgen.as_ref()),
    ] {
        let times = sample(n, || async { Ok(plugin.instantiate(&runtime).await?) }).await?;
        section.row(
            format!("instantiate {name} from its InstancePre"),
            vec![
                Cell::time(&times),
                Cell::Text("—".into()),
                Cell::Text("—".into()),
            ],
        );
    }

    let n = options.samples(100);
    for (label, bytes) in [
        ("1 KB", 1 << 10),
        ("10 KB", 10 << 10),
        ("100 KB", 100 << 10),
    ] {
        let backend: Arc<dyn ClusterBackend> =
            Arc::new(MemoryCluster::with([config_map("big", bytes)])?);
        let (wasm, native) = pass_times(&runtime, &fixture, &backend, "big", n).await?;
        section.row(
            format!("pass on a {label} ConfigMap (get, apply echo, event)"),
            compare(&wasm, &native),
        );
    }

    let backend: Arc<dyn ClusterBackend> = Arc::new(MemoryCluster::with(round_trip_objects())?);
    let (wasm_calls, native_calls) = pass_times(&runtime, &fixture, &backend, "calls", n).await?;
    let (wasm_none, native_none) = pass_times(&runtime, &fixture, &backend, "none", n).await?;
    let per_call = |with: &[Duration], without: &[Duration]| -> Option<Duration> {
        let with = Stats::of(with)?.median();
        let without = Stats::of(without)?.median();
        Some(with.saturating_sub(without) / CALLS as u32)
    };
    let wasm = per_call(&wasm_calls, &wasm_none);
    let native = per_call(&native_calls, &native_none);
    let cell = |d: Option<Duration>| d.map_or(Cell::Text("n/a".into()), |d| Cell::time(&[d]));
    section.row(
        "host call round trip (one cached get)",
        vec![
            cell(wasm),
            cell(native),
            match (wasm, native) {
                (Some(w), Some(n)) => Cell::ratio(w.as_secs_f64(), n.as_secs_f64()),
                _ => Cell::Text("n/a".into()),
            },
        ],
    );
    section.note(format!(
        "Round trip: the median pass of a primary naming {CALLS} existing Secrets (~350 bytes \
         of JSON each) minus that of a primary of the same size naming none, divided by \
         {CALLS}. Natively a call is a blocking hop onto the tokio runtime and a copy of the \
         object; in wasm the object is serialized, copied into the guest and parsed there."
    ));

    load_rows(options, &mut section).await?;
    section.note(
        "Instantiation is paid by every pass, planner calls included: each pass and each \
         planner call gets a fresh store (nothing survives a pass).",
    );
    Ok(section)
}

/// Per-pass times of the primary `name`, as `.wasm` and natively (alternating).
async fn pass_times(
    runtime: &Runtime,
    fixture: &Plugin,
    backend: &Arc<dyn ClusterBackend>,
    name: &str,
    n: usize,
) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
    let request = request(name);
    let mut wasm = Vec::with_capacity(n);
    let mut native = Vec::with_capacity(n);
    // One warm-up of each, then alternate so drift hits both alike.
    fixture
        .reconcile(runtime, backend.clone(), &request)
        .await?;
    reconcile_native::<Fixture>(backend.clone(), request.clone()).await?;
    for _ in 0..n {
        let started = Instant::now();
        fixture
            .reconcile(runtime, backend.clone(), &request)
            .await?;
        wasm.push(started.elapsed());
        let started = Instant::now();
        reconcile_native::<Fixture>(backend.clone(), request.clone()).await?;
        native.push(started.elapsed());
    }
    Ok((wasm, native))
}

fn compare(wasm: &[Duration], native: &[Duration]) -> Vec<Cell> {
    let median = |s: &[Duration]| Stats::of(s).map_or(f64::NAN, |s| s.median_ms);
    vec![
        Cell::time(wasm),
        Cell::time(native),
        Cell::ratio(median(wasm), median(native)),
    ]
}

/// Compile vs precompiled-artifact load of each shipped plugin.
async fn load_rows(options: &BenchOptions, section: &mut Section) -> anyhow::Result<()> {
    let compiles = options.samples(3);
    let loads = options.samples(10);
    for file in ["gitlabsecrets.wasm", "secretgen.wasm"] {
        let path = options.plugins.join(file);
        let mut compiled = Vec::new();
        let mut loaded = Vec::new();
        for _ in 0..compiles {
            // A fresh cache directory: the load compiles and stores the artifact.
            let cache = tempfile::tempdir()?;
            let runtime = runtime(cache.path())?;
            if file == "gitlabsecrets.wasm" {
                let planner = runtime
                    .load(&options.plugins.join("secretgen.wasm"), None)
                    .await?;
                runtime.link_planner(Arc::new(planner))?;
            }
            let started = Instant::now();
            runtime.load(&path, None).await?;
            compiled.push(started.elapsed());
            for _ in 0..loads.div_ceil(compiles) {
                let started = Instant::now();
                runtime.load(&path, None).await?;
                loaded.push(started.elapsed());
            }
        }
        let median = |s: &[Duration]| Stats::of(s).map_or(f64::NAN, |s| s.median_ms);
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        section.row(
            format!("load {file} ({} KiB): compile", size / 1024),
            vec![
                Cell::time(&compiled),
                Cell::Text("—".into()),
                Cell::Text("—".into()),
            ],
        );
        section.row(
            format!("load {file}: precompiled artifact (compile ÷ artifact in the last column)"),
            vec![
                Cell::time(&loaded),
                Cell::Text("—".into()),
                Cell::ratio(median(&compiled), median(&loaded)),
            ],
        );
    }
    section.note(
        "A load is read + sha256 + compile or artifact load + contract checks + \
         instantiate_pre + describe(); the artifact is keyed by the file's sha256 and the \
         engine's version.",
    );
    Ok(())
}
