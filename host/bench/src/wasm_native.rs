//! Scenario 1, wasm vs native end to end: the GitLabSecrets reconciler built as `.wasm`
//! (planning through the secretgen component) and natively (planning with the secretgen
//! crate in-process), each pass run the way the controller runs it: on its own task, up
//! to four at once, reading through the shared informer cache and the field index, writing
//! to the embedded API server.

use std::sync::Arc;
use std::time::Duration;

use gitlabsecrets::GitLabSecretsReconciler;
use tokio::time::Instant;
use wasm_operator_sdk::Reconciler as _;

use super::BenchOptions;
use super::cluster::{BenchCluster, Variant, gitlabsecrets_kind, is_ready, namespace_names};
use super::passes::{Batch, Build, CONCURRENCY, Passes, compare_cpu, compare_rates, compare_times};
use super::report::Section;
use wasm_operator::cluster::cached::CachedCluster;
use wasm_operator::controller::index::FieldIndexes;
use wasm_operator::informer::Informers;
use wasm_operator_runtime::{Runtime, RuntimeConfig};

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let mut section = Section::new(
        "wasm-native",
        "1. GitLabSecrets reconciler: wasm vs native, end to end",
        &["measure", "wasm", "native", "wasm ÷ native"],
    );
    let cluster = BenchCluster::start().await?;
    let cache = tempfile::tempdir()?;
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.path().to_owned()),
        ..RuntimeConfig::default()
    })?;
    let planner = runtime
        .load(&options.plugins.join("secretgen.wasm"), None)
        .await?;
    runtime.link_planner(Arc::new(planner))?;
    let plugin = Arc::new(
        runtime
            .load(&options.plugins.join("gitlabsecrets.wasm"), None)
            .await?,
    );

    let description = GitLabSecretsReconciler::describe();
    let informers = Arc::new(Informers::new(cluster.client.clone(), None));
    let primary = informers.ensure(&gitlabsecrets_kind());
    for watch in &description.watches {
        informers.ensure(&watch.kind).wait_synced().await;
    }
    primary.wait_synced().await;
    let indexes = Arc::new(FieldIndexes::default());
    let passes = Passes::new::<GitLabSecretsReconciler>(
        runtime,
        plugin,
        Arc::new(CachedCluster::new(
            cluster.backend(),
            informers.clone(),
            indexes.clone(),
            &description,
        )),
    );

    let count = if options.quick { 2 } else { 12 };
    let wasm_ns = namespace_names("wasm", count);
    let native_ns = namespace_names("native", count);
    let all_ns: Vec<String> = wasm_ns.iter().chain(&native_ns).cloned().collect();
    cluster.namespaces(&all_ns).await?;
    cluster.gitlabsecrets(Variant::NoKeys, &all_ns).await?;
    let all = requests_for(&all_ns);
    // The controller indexes each primary as it arrives; so does this harness.
    let deadline = Instant::now() + Duration::from_secs(30);
    while primary.len() < all.len() {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the informer never saw the GitLabSecrets"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for request in &all {
        let key = format!("{}/demo", request.namespace.as_deref().unwrap_or_default());
        let object = primary
            .get(&key)
            .ok_or_else(|| anyhow::anyhow!("{key} is not in the cache"))?;
        for index in &description.indexes {
            let keys = GitLabSecretsReconciler::index(&index.name, &object);
            indexes.set(&index.name, request, keys);
        }
    }

    let secrets = Variant::NoKeys.secrets()?;
    // Each build's new objects in two halves, run A B B A, so neither build always runs
    // first (on cold pool slots) or last.
    let (wasm_a, wasm_b) = wasm_ns.split_at(count / 2);
    let (native_a, native_b) = native_ns.split_at(count / 2);
    let mut cold_wasm = passes.batch(Build::Wasm, &requests_for(wasm_a)).await?;
    let mut cold_native = passes.batch(Build::Native, &requests_for(native_a)).await?;
    cold_native.add(passes.batch(Build::Native, &requests_for(native_b)).await?);
    cold_wasm.add(passes.batch(Build::Wasm, &requests_for(wasm_b)).await?);
    section.row(
        format!("cold pass: a new GitLabSecrets, {secrets} Secrets created"),
        compare_times(&cold_wasm.passes, &cold_native.passes),
    );
    section.row(
        format!("cold: passes per second ({CONCURRENCY} at once)"),
        compare_rates(&cold_wasm, &cold_native),
    );

    // Converge both sets, then let the cache catch up with the last writes.
    let mut rounds = 0;
    loop {
        let objects = cluster.list_gitlabsecrets().await?;
        let cached_ready = primary.filter(is_ready).len();
        if objects.iter().all(is_ready) && objects.len() == all.len() && cached_ready == all.len() {
            break;
        }
        anyhow::ensure!(
            rounds < 30,
            "the GitLabSecrets did not converge in 30 rounds"
        );
        rounds += 1;
        passes.batch(Build::Wasm, &requests_for(&wasm_ns)).await?;
        passes
            .batch(Build::Native, &requests_for(&native_ns))
            .await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    let before = cluster.server.counts();
    let mut converged_wasm = Batch::empty();
    let mut converged_native = Batch::empty();
    for round in 0..options.samples(10) {
        // Alternate the order so drift hits both alike.
        let order = if round % 2 == 0 {
            [Build::Wasm, Build::Native]
        } else {
            [Build::Native, Build::Wasm]
        };
        for build in order {
            let batch = passes.batch(build, &all).await?;
            match build {
                Build::Wasm => converged_wasm.add(batch),
                Build::Native => converged_native.add(batch),
            }
        }
    }
    let changes = cluster.server.counts().since(&before);
    section.row(
        "converged pass: nothing to change",
        compare_times(&converged_wasm.passes, &converged_native.passes),
    );
    section.row(
        format!("converged: passes per second ({CONCURRENCY} at once)"),
        compare_rates(&converged_wasm, &converged_native),
    );
    section.row(
        "converged: CPU time per pass (whole process)",
        compare_cpu(&converged_wasm, &converged_native),
    );
    let failed =
        cold_wasm.failed + cold_native.failed + converged_wasm.failed + converged_native.failed;
    section.note(format!(
        "{count} GitLabSecrets per build ({}), each in its own namespace. Cold: the first \
         pass over each, which plans and creates its Secrets. Converged: {} rounds over all \
         {} (both builds reconcile the same converged objects), during which the API server \
         stored {} changes. Failed passes: {failed}. Goal (converged): wasm ÷ native ≤ 1.3.",
        Variant::NoKeys.label(),
        options.samples(10),
        all.len(),
        changes.stored_total(),
    ));
    section.note(
        "Key pairs are left out so every pass does the same work; with them a cold pass is \
         dominated by the prime search, which runs natively in both builds (the host's crypto \
         capability), see scenario 6.",
    );
    section.note(format!(
        "The informer cache was converged after {rounds} extra rounds of passes."
    ));
    Ok(section)
}

fn requests_for(namespaces: &[String]) -> Vec<wasm_operator_sdk::Request> {
    super::passes::requests(namespaces, "demo")
}
