//! Scenario 3, API efficiency: what a converged pass of each shipped reconciler asks of
//! the API server, counted by the server, through the real operator (controller, informer
//! cache, field index, success reporting).

use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::json;
use tokio::time::Instant;

use super::BenchOptions;
use super::cluster::{BenchCluster, Variant, gitlabsecrets_kind};
use super::report::{Cell, Section};
use crate::informer::api_resource;
use crate::operator::{Operator, OperatorConfig, RunningOperator};
use crate::runtime::{Runtime, RuntimeConfig};

const NAMESPACE: &str = "gitlab";
const PASSES: &str = "wasm_operator_passes_total";

fn passes(operator: &RunningOperator) -> f64 {
    super::process::metric_sum(&operator.metrics().render(), PASSES)
}

/// Waits until the operator has run no pass for `quiet`.
async fn settle(operator: &RunningOperator, quiet: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = passes(operator);
    let mut since = Instant::now();
    while since.elapsed() < quiet {
        anyhow::ensure!(Instant::now() < deadline, "the operator never went quiet");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = passes(operator);
        if now != last {
            last = now;
            since = Instant::now();
        }
    }
    Ok(())
}

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let mut section = Section::new(
        "api",
        "3. API requests per converged pass (counted by the API server)",
        &["measure", "gitlabsecrets (chart defaults)"],
    );
    let cluster = BenchCluster::start().await?;
    cluster.namespaces(&[NAMESPACE.to_owned()]).await?;
    let cache = tempfile::tempdir()?;
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.path().to_owned()),
        ..RuntimeConfig::default()
    })?;
    let mut config = OperatorConfig::new(&options.plugins);
    config.watch_interval = None;
    config.rate_limit = None;
    let operator = Operator::start(runtime, cluster.client.clone(), config).await?;
    cluster
        .gitlabsecrets(Variant::Full, &[NAMESPACE.to_owned()])
        .await?;
    cluster
        .wait_ready(1, Instant::now(), Duration::from_secs(180))
        .await?;
    settle(&operator, Duration::from_millis(500)).await?;

    let api: Api<DynamicObject> = Api::namespaced_with(
        cluster.client.clone(),
        NAMESPACE,
        &api_resource(&gitlabsecrets_kind()),
    );
    let rounds = options.samples(20);
    let before = cluster.server.counts();
    let passes_before = passes(&operator);
    for round in 0..rounds {
        // A label change passes the label predicate: one pass over an unchanged spec.
        let patch = json!({"metadata": {"labels": {"bench.wasm-operator.dev/round": round.to_string()}}});
        api.patch("demo", &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        let target = passes_before + round as f64 + 1.0;
        let deadline = Instant::now() + Duration::from_secs(30);
        while passes(&operator) < target {
            anyhow::ensure!(Instant::now() < deadline, "the relabelled GitLabSecrets was not reconciled");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    settle(&operator, Duration::from_millis(300)).await?;
    let ran = passes(&operator) - passes_before;
    let mut counts = cluster.server.counts().since(&before);
    // Take out the harness's own label patches (each a request that stores a change).
    for verb in ["patch", "stored"] {
        if let Some(n) = counts.0.get_mut(&(verb.to_owned(), "gitlabsecrets".to_owned())) {
            *n = n.saturating_sub(rounds as u64);
        }
    }
    counts.0.retain(|_, n| *n > 0);
    operator.shutdown().await;
    cluster.server.stop();

    let per_pass = |n: u64| Cell::number(n as f64 / ran.max(1.0), "");
    let requests: u64 = counts
        .0
        .iter()
        .filter(|((verb, _), _)| verb != "stored")
        .map(|(_, n)| n)
        .sum();
    let stored: u64 = counts
        .0
        .iter()
        .filter(|((verb, _), _)| verb == "stored")
        .map(|(_, n)| n)
        .sum();
    section.row("API requests per converged pass", vec![per_pass(requests)]);
    section.row("write requests per converged pass", vec![per_pass(counts.writes())]);
    section.row("stored changes per converged pass (goal 0)", vec![per_pass(stored)]);
    for ((verb, resource), n) in &counts.0 {
        section.row(format!("… {verb} {resource}"), vec![per_pass(*n)]);
    }
    section.note(format!(
        "The chart's defaults (16 Secrets, certificate set) converged, then {rounds} label \
         changes each started one pass ({ran} passes ran). Reads come from the informer \
         cache, so a converged pass that changes nothing asks the server for nothing. The \
         harness's own label patches are taken out."
    ));
    section.note(
        "secretgen, the other shipped plugin, is a planner: it imports no cluster interface \
         and makes no request.",
    );
    Ok(section)
}
