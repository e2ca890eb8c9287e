//! Scenario 3, API efficiency: what a converged pass of each shipped reconciler asks of
//! the API server, counted by the server, through the real operator (controller, informer
//! cache, field index, success reporting).

use std::time::Duration;

use tokio::time::Instant;
use wasm_operator_apiserver::Counts;

use super::BenchOptions;
use super::cluster::{BenchCluster, Variant, namespace_names};
use super::process::PASSES;
use super::report::{Cell, Section};
use wasm_operator::operator::{Operator, OperatorConfig, RunningOperator};

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

async fn start(options: &BenchOptions, cluster: &BenchCluster) -> anyhow::Result<RunningOperator> {
    let runtime = options.artifact_runtime()?;
    let mut config = OperatorConfig::new(&options.plugins);
    config.watch_interval = None;
    config.rate_limit = None;
    Ok(Operator::start(runtime, cluster.client.clone(), config).await?)
}

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let mut section = Section::new(
        "api",
        "3. API requests per converged pass (counted by the API server)",
        &["measure", "gitlabsecrets (chart defaults)"],
    );
    let cluster = BenchCluster::start().await?;
    let namespaces = namespace_names("api", if options.quick { 1 } else { 3 });
    cluster.namespaces(&namespaces).await?;
    let operator = start(options, &cluster).await?;
    cluster.gitlabsecrets(Variant::Full, &namespaces).await?;
    cluster
        .wait_ready(namespaces.len(), Instant::now(), Duration::from_secs(300))
        .await?;
    settle(&operator, Duration::from_millis(500)).await?;
    operator.shutdown().await;

    // Each restart lists the converged GitLabSecrets and gives each one pass.
    let restarts = options.samples(5);
    let mut counts = Counts::default();
    let mut ran = 0.0;
    for _ in 0..restarts {
        let before = cluster.server.counts();
        let operator = start(options, &cluster).await?;
        let deadline = Instant::now() + Duration::from_secs(60);
        while passes(&operator) < namespaces.len() as f64 {
            anyhow::ensure!(
                Instant::now() < deadline,
                "the restarted operator ran no pass"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        settle(&operator, Duration::from_millis(300)).await?;
        ran += passes(&operator);
        operator.shutdown().await;
        for (key, n) in cluster.server.counts().since(&before).0 {
            *counts.0.entry(key).or_default() += n;
        }
    }
    cluster.server.stop();

    // The informers' list and watch happen once per kind at start, not per pass.
    let (start_up, per_pass): (Vec<_>, Vec<_>) = counts
        .0
        .into_iter()
        .partition(|((verb, _), _)| verb == "list" || verb == "watch");
    let per_pass = Counts(per_pass.into_iter().collect());
    let cell = |n: u64| Cell::number(n as f64 / ran.max(1.0), "");
    let requests: u64 = per_pass
        .0
        .iter()
        .filter(|((verb, _), _)| verb != "stored")
        .map(|(_, n)| n)
        .sum();
    section.row("API requests per converged pass", vec![cell(requests)]);
    section.row(
        "write requests per converged pass (goal 0)",
        vec![cell(per_pass.writes())],
    );
    section.row(
        "stored changes per converged pass (goal 0)",
        vec![cell(per_pass.stored_total())],
    );
    for ((verb, resource), n) in &per_pass.0 {
        section.row(format!("… {verb} {resource}"), vec![cell(*n)]);
    }
    let start_up: u64 = start_up.iter().map(|(_, n)| n).sum();
    section.row(
        "informer list + watch per operator start (not per pass)",
        vec![Cell::number(start_up as f64 / restarts as f64, "")],
    );
    section.note(format!(
        "{} GitLabSecrets with the chart's defaults (16 Secrets each, certificate set) \
         converged; then the operator restarted {restarts} times over them, and each restart \
         gave every one a pass that finds nothing to change ({ran} passes; a restart may \
         pass an object twice, when its Secrets' replay maps back to it). Reads come from the \
         informer cache, except the one GET of the GitLabSecrets with which gitlabsecrets \
         confirms that its cached copy is current before it skips the status write.",
        namespaces.len()
    ));
    section.note(
        "secretgen, the other shipped plugin, is a planner: it imports no cluster interface \
         and makes no request.",
    );
    Ok(section)
}
