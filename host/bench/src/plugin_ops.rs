//! Scenario 5, plugin operations: hot-swap latency under load, host start → first pass
//! with and without the precompiled-artifact cache, idle memory with the shipped plugins.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::json;
use tokio::time::Instant;

use super::BenchOptions;
use super::cluster::{BenchCluster, Variant};
use super::process::{OperatorProcess, PASSES, mib};
use super::report::{Cell, Section};
use wasm_operator::informer::api_resource;
use wasm_operator::operator::{Operator, OperatorConfig};
use wasm_operator_runtime::{Runtime, RuntimeConfig};
use wasm_operator_sdk::KindRef;

/// ConfigMaps the load keeps changing while the fixture is swapped.
const LOADED: usize = 20;

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let mut section = Section::new("plugin-ops", "5. Plugin operations", &["measure", "value"]);
    swap(options, &mut section).await?;
    start_up(options, &mut section).await?;
    Ok(section)
}

fn config_maps(client: &kube::Client) -> Api<DynamicObject> {
    let kind = KindRef::of::<k8s_openapi::api::core::v1::ConfigMap>();
    Api::namespaced_with(client.clone(), "default", &api_resource(&kind))
}

/// Keeps changing [`LOADED`] ConfigMaps (each change is a fixture pass) until `stop`.
async fn load(client: kube::Client, stop: Arc<AtomicBool>, changes: Arc<AtomicU64>) {
    let api = config_maps(&client);
    let mut round = 0u64;
    while !stop.load(Ordering::Relaxed) {
        for i in 0..LOADED {
            let patch = json!({"data": {"round": round.to_string()}});
            if api
                .patch(
                    &format!("load-{i}"),
                    &PatchParams::default(),
                    &Patch::Merge(&patch),
                )
                .await
                .is_ok()
            {
                changes.fetch_add(1, Ordering::Relaxed);
            }
        }
        round += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Swaps fixture 0.1.0 ↔ 0.2.0 under load: a never-seen file (compiled) and a known one
/// (its artifact cached).
async fn swap(options: &BenchOptions, section: &mut Section) -> anyhow::Result<()> {
    let versions = [
        (
            "0.1.0",
            std::fs::read(options.test_plugins.join("fixture-reconciler.wasm"))?,
        ),
        (
            "0.2.0",
            std::fs::read(options.test_plugins.join("fixture-next.wasm"))?,
        ),
    ];
    let cluster = BenchCluster::start().await?;
    let objects = (0..LOADED)
        .map(|i| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("load-{i}"), "namespace": "default"}, "data": {"round": "start"}}))
        .collect();
    cluster.create_all(objects).await?;
    let (mut compiled, mut cached) = (Vec::new(), Vec::new());
    let mut rate = Vec::new();
    for _ in 0..options.samples(5) {
        let cache = tempfile::tempdir()?;
        let plugins = tempfile::tempdir()?;
        std::fs::write(plugins.path().join("fixture.wasm"), &versions[0].1)?;
        let runtime = Runtime::new(RuntimeConfig {
            cache_dir: Some(cache.path().to_owned()),
            ..RuntimeConfig::default()
        })?;
        let mut config = OperatorConfig::new(plugins.path());
        config.rate_limit = None;
        let operator = Operator::start(runtime, cluster.client.clone(), config).await?;
        let stop = Arc::new(AtomicBool::new(false));
        let changes = Arc::new(AtomicU64::new(0));
        let loader = tokio::spawn(load(cluster.client.clone(), stop.clone(), changes.clone()));
        tokio::time::sleep(Duration::from_millis(300)).await;
        let passes_before = super::process::metric_sum(&operator.metrics().render(), PASSES);
        let window = Instant::now();
        for (i, samples) in [(1, &mut compiled), (0, &mut cached)] {
            let (version, bytes) = &versions[i];
            // Written aside and renamed in, as a ConfigMap volume or `install` does.
            let aside = plugins.path().join(".fixture.tmp");
            let written = Instant::now();
            std::fs::write(&aside, bytes)?;
            std::fs::rename(&aside, plugins.path().join("fixture.wasm"))?;
            let needle = format!(r#"version="{version}",sha256="#);
            let serving = |text: &str| {
                text.lines()
                    .any(|l| l.contains(&needle) && l.contains(r#"state="serving""#))
            };
            while !serving(&operator.metrics().render()) {
                anyhow::ensure!(
                    written.elapsed() < Duration::from_secs(60),
                    "no swap to {version}"
                );
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            samples.push(written.elapsed());
        }
        let passes =
            super::process::metric_sum(&operator.metrics().render(), PASSES) - passes_before;
        rate.push(passes / window.elapsed().as_secs_f64());
        stop.store(true, Ordering::Relaxed);
        let _ = loader.await;
        operator.shutdown().await;
    }
    cluster.server.stop();
    section.row(
        "hot swap under load: new file (compiled) → new version serving",
        vec![Cell::time(&compiled)],
    );
    section.row(
        "hot swap under load: known file (precompiled artifact) → serving",
        vec![Cell::time(&cached)],
    );
    let mean_rate = rate.iter().sum::<f64>() / rate.len().max(1) as f64;
    section.row(
        "… passes per second while swapping",
        vec![Cell::number(mean_rate, "/s")],
    );
    section.note(format!(
        "Swap: the fixture reconciler replaced by its next version (0.1.0 → 0.2.0, then back) \
         while {LOADED} ConfigMaps it reconciles change continuously; measured from the file \
         written to the new version in plugin_info. The directory is polled every 250 ms (the \
         default), which is part of the figure."
    ));
    Ok(())
}

/// Host start → first pass, with an empty and with a warm artifact cache; idle memory.
async fn start_up(options: &BenchOptions, section: &mut Section) -> anyhow::Result<()> {
    let scratch = tempfile::tempdir()?;
    let cluster = BenchCluster::start().await?;
    let kubeconfig = scratch.path().join("kubeconfig");
    cluster.server.write_kubeconfig(&kubeconfig)?;
    cluster.namespaces(&["gitlab".to_owned()]).await?;
    cluster
        .gitlabsecrets(Variant::NoKeys, &["gitlab".to_owned()])
        .await?;
    let warm = scratch.path().join("warm-cache");
    let logs = options.out.join("logs");
    std::fs::create_dir_all(&logs)?;
    let (mut cold_first, mut warm_first, mut cold_ready, mut warm_ready) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut idle = Vec::new();
    // A full run's first cold start only fills the warm cache; a quick run (2 samples)
    // counts it and starts cold once more (each cold start compiles for tens of seconds).
    let rounds = if options.quick {
        options.samples(3)
    } else {
        options.samples(3) + 1
    };
    for round in 0..rounds {
        for cached in [false, true] {
            let cache = if cached {
                warm.clone()
            } else {
                scratch.path().join(format!("cold-{round}"))
            };
            let started = Instant::now();
            let mut operator = OperatorProcess::start(
                &options.exe,
                &kubeconfig,
                &options.plugins,
                &cache,
                &logs.join("start-up.log"),
                &[],
            )?;
            let ready = operator
                .wait_ready(started, Duration::from_secs(120))
                .await?;
            let (first, _) = operator
                .wait_metric(PASSES, 1.0, started, Duration::from_secs(120))
                .await?;
            if round == 0 && !cached {
                // The first round fills the warm cache.
                std::fs::rename(&cache, &warm)?;
                if options.quick {
                    cold_ready.push(ready);
                    cold_first.push(first);
                }
            } else if cached {
                warm_ready.push(ready);
                warm_first.push(first);
                tokio::time::sleep(Duration::from_secs(1)).await;
                if let Some(memory) = operator.memory() {
                    idle.push(mib(memory.rss));
                }
            } else {
                cold_ready.push(ready);
                cold_first.push(first);
            }
            operator.stop().await;
        }
    }
    cluster.server.stop();
    section.row(
        "start → ready, no artifact cache (compiles)",
        vec![Cell::time(&cold_ready)],
    );
    section.row(
        "start → first pass, no artifact cache",
        vec![Cell::time(&cold_first)],
    );
    section.row(
        "start → ready, precompiled artifacts",
        vec![Cell::time(&warm_ready)],
    );
    section.row(
        "start → first pass, precompiled artifacts",
        vec![Cell::time(&warm_first)],
    );
    let idle_rss = idle.iter().sum::<f64>() / idle.len().max(1) as f64;
    section.row(
        "idle RSS, shipped plugins loaded (gitlabsecrets, secretgen)",
        vec![Cell::number(idle_rss, "MiB")],
    );
    section.note(
        "Start-up: `wasm-operator run` as its own process against the embedded API server \
         holding one converged-to-be GitLabSecrets; ready = /readyz 200 (plugins loaded, \
         caches synced), first pass = wasm_operator_passes_total ≥ 1. Idle RSS: 1 s after the \
         first pass.",
    );
    Ok(())
}
