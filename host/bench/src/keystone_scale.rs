//! Scenario 8, Keystone scale: N Keystones (one per namespace, each with its MariaDB and
//! credentials) created at once against an operator process running `keystone.wasm`,
//! converging from empty to Ready — all fifteen conditions, its health check answered by
//! the cluster's Keystone API stand-in — through their Jobs and rollouts.

use std::time::Duration;

use anyhow::Context as _;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::{Value, json};
use tokio::time::Instant;
use wasm_operator_apiserver::{Actor, ApiServer, ServerConfig};

use super::BenchOptions;
use wasm_operator::cluster::kube::KubeCluster;
use wasm_operator_runtime::backend::{Caller, ClusterBackend as _};

use super::cluster::{is_ready, namespace_names};
use super::keystone::{KEYSTONE_CRD, keystone_objects, keystone_resource};
use super::process::{OperatorProcess, mib};
use super::report::{Cell, Section};

const REQUESTS: &str = "wasm_operator_api_requests_total";

/// What one run measured.
struct Run {
    n: usize,
    ready: Duration,
    peak_rss: f64,
    requests: f64,
    passes: f64,
}

/// Creates `object` as the benchmark, retrying for a few seconds while its kind is not
/// served yet (a CRD is served a moment after it is created).
pub(crate) async fn create(backend: &KubeCluster, object: Value) -> anyhow::Result<()> {
    let setup = Caller {
        plugin: "bench-setup".into(),
        field_manager: "bench-setup".into(),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match backend.create(&setup, object.clone()).await {
            Ok(_) => return Ok(()),
            Err(error) if Instant::now() < deadline => {
                tracing::debug!(%error, "create retried");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => return Err(error).context("creating a benchmark object"),
        }
    }
}

/// The Keystone CRD and the ClusterSecretStore the Keystones' backups use.
pub(crate) async fn install(backend: &KubeCluster) -> anyhow::Result<()> {
    create(
        backend,
        serde_yaml_ng::from_str(KEYSTONE_CRD).context("the Keystone CRD")?,
    )
    .await?;
    let store = json!({"apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
        "metadata": {"name": "openbao-cluster-store"},
        "spec": {"provider": {"vault": {"server": "http://openbao:8200", "path": "kv"}}}});
    create(backend, store).await
}

/// How many of the Keystones are Ready for their current generation.
async fn ready_count(api: &Api<DynamicObject>) -> anyhow::Result<usize> {
    let list = api
        .list(&ListParams::default())
        .await
        .context("listing Keystones")?;
    Ok(list
        .items
        .iter()
        .filter(|k| serde_json::to_value(k).is_ok_and(|object| is_ready(&object)))
        .count())
}

async fn one(options: &BenchOptions, n: usize) -> anyhow::Result<Run> {
    let scratch = tempfile::tempdir()?;
    let server = ApiServer::start(ServerConfig {
        actors: vec![
            Actor::Workloads,
            Actor::MariaDb,
            Actor::ExternalSecrets,
            Actor::Keystone,
        ],
        ..ServerConfig::default()
    })
    .await?;
    let client = server.client()?;
    let backend = KubeCluster::new(client.clone());
    install(&backend).await?;
    let kubeconfig = scratch.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig)?;
    // keystone.wasm alone, granted the ClusterSecretStore read its store gate makes.
    let plugins = scratch.path().join("plugins");
    std::fs::create_dir_all(&plugins)?;
    std::fs::copy(
        options.plugins.join("keystone.wasm"),
        plugins.join("keystone.wasm"),
    )
    .context("keystone.wasm")?;
    std::fs::write(
        plugins.join("plugins.toml"),
        "[plugins.keystone]\ncluster_scoped = true\n",
    )?;
    let logs = options.out.join("logs");
    std::fs::create_dir_all(&logs)?;
    let mut operator = OperatorProcess::start(
        &options.exe,
        &kubeconfig,
        &plugins,
        &options.artifacts(),
        &logs.join(format!("keystone-scale-{n}.log")),
        &[],
    )?;
    operator
        .wait_ready(Instant::now(), Duration::from_secs(120))
        .await?;

    let started = Instant::now();
    let namespaces = namespace_names("ks-scale", n);
    let objects: Vec<Value> = namespaces
        .iter()
        .flat_map(|ns| keystone_objects(ns))
        .collect();
    // In order: each namespace before what lives in it.
    for object in objects {
        create(&backend, object).await?;
    }
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &keystone_resource());
    let timeout = Duration::from_secs(120 + 5 * n as u64);
    loop {
        let ready = ready_count(&api).await?;
        if ready == n {
            break;
        }
        anyhow::ensure!(
            started.elapsed() < timeout,
            "{ready} of {n} Keystones Ready after {timeout:?} (log: {})",
            logs.join(format!("keystone-scale-{n}.log")).display()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let ready = started.elapsed();
    // The pass that wrote the last Ready may still be ending.
    let passes = operator
        .wait_passes_counted(Instant::now(), Duration::from_secs(30))
        .await?;
    let memory = operator.memory();
    let requests = operator.metric(REQUESTS).await?;
    operator.stop().await;
    server.stop();
    Ok(Run {
        n,
        ready,
        peak_rss: memory.map_or(f64::NAN, |m| mib(m.peak)),
        requests,
        passes,
    })
}

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let counts = if options.quick {
        vec![2]
    } else {
        options.keystone_scale.clone()
    };
    let mut runs = Vec::new();
    for &n in &counts {
        tracing::info!(n, "Keystone scale run");
        runs.push(one(options, n).await?);
    }
    let mut columns = vec!["measure".to_owned()];
    columns.extend(runs.iter().map(|r| format!("N={}", r.n)));
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut section = Section::new(
        "keystone-scale",
        "8. Keystone scale: N Keystones from empty to Ready",
        &columns,
    );
    let row = |f: &dyn Fn(&Run) -> Cell| runs.iter().map(f).collect::<Vec<_>>();
    section.row(
        "time to all Ready",
        row(&|r| Cell::number(r.ready.as_secs_f64(), "s")),
    );
    section.row(
        "… per Keystone",
        row(&|r| Cell::number(r.ready.as_secs_f64() * 1e3 / r.n as f64, "ms")),
    );
    section.row(
        "peak RSS of the operator",
        row(&|r| Cell::number(r.peak_rss, "MiB")),
    );
    section.row(
        "API requests by the operator",
        row(&|r| Cell::number(r.requests, "")),
    );
    section.row(
        "… per Keystone",
        row(&|r| Cell::number(r.requests / r.n as f64, "")),
    );
    section.row("passes to converge", row(&|r| Cell::number(r.passes, "")));
    section.row(
        "… per Keystone",
        row(&|r| Cell::number(r.passes / r.n as f64, "")),
    );
    section.note(
        "Each Keystone lives in a namespace of its own with its MariaDB and credentials, all \
         created one after another once the operator process (keystone.wasm alone, 4 passes \
         at once, no client-side rate limit) reported ready; Ready (all fifteen conditions) is \
         polled every 200 ms. The cluster's actors step every 300 ms: the db-sync, \
         schema-check and bootstrap Jobs and each rollout take several of their steps, so \
         time to Ready has a floor of a few seconds whatever N.",
    );
    Ok(section)
}
