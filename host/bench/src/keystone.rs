//! Scenario 7, the Keystone reconciler as `.wasm` and natively: Keystones converged
//! through their Deployment on the embedded API server with the workload, cert-manager,
//! mariadb-operator and External Secrets actors, then converged passes of both builds over the same
//! objects, reading through the shared informer cache as the controller does. Goals: no
//! write and no read of the server in a converged pass, and wasm ≤ 1.3 × native.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use keystone::KeystoneReconciler;
use serde_json::{Value, json};
use tokio::time::Instant;
use wasm_operator::Metrics;
use wasm_operator::cluster::cached::CachedCluster;
use wasm_operator::cluster::endpoints::EndpointSliceResolver;
use wasm_operator::cluster::kube::KubeCluster;
use wasm_operator::controller::index::FieldIndexes;
use wasm_operator::informer::Informers;
use wasm_operator_apiserver::{Actor, ApiServer, Counts, ServerConfig};
use wasm_operator_runtime::EgressEnv;
use wasm_operator_runtime::backend::access::Access;
use wasm_operator_runtime::backend::{Caller, ClusterBackend};
use wasm_operator_sdk::{ListOptions, Reconciler as _};

use super::BenchOptions;
use super::cluster::namespace_names;
use super::passes::{Batch, Build, CONCURRENCY, Passes, compare_rates, compare_times, requests};
use super::report::{Cell, Section};

/// The CRD the shipped reconciler serves.
pub(crate) const KEYSTONE_CRD: &str =
    include_str!("../../../crds/keystone.openstack.c5c3.io_keystones.yaml");

/// The goal for a converged pass: wasm ÷ native.
const GOAL: f64 = 1.3;

fn setup() -> Caller {
    Caller {
        plugin: "bench-setup".into(),
        field_manager: "bench-setup".into(),
    }
}

/// The Keystones' API resource.
pub(crate) fn keystone_resource() -> kube::api::ApiResource {
    kube::api::ApiResource {
        group: "keystone.openstack.c5c3.io".into(),
        version: "v1alpha1".into(),
        api_version: "keystone.openstack.c5c3.io/v1alpha1".into(),
        kind: "Keystone".into(),
        plural: "keystones".into(),
    }
}

/// What one Keystone `ks` of `namespace` needs, then the Keystone.
pub(crate) fn keystone_objects(namespace: &str) -> Vec<Value> {
    let secret = |name: &str, data: Value| {
        json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace}, "stringData": data})
    };
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
            "metadata": {"name": "maria", "namespace": namespace}, "spec": {"replicas": 1}}),
        secret(
            "ks-db",
            json!({"username": "keystone", "password": "db-pw"}),
        ),
        secret("ks-admin", json!({"password": "admin-pw"})),
        json!({"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
        "metadata": {"name": "ks", "namespace": namespace},
        "spec": {
            "image": {"repository": "ghcr.io/c5c3/keystone", "tag": "2025.2"},
            "database": {"clusterRef": {"name": "maria"}, "database": "keystone",
                         "secretRef": {"name": "ks-db"}},
            "cache": {"clusterRef": {"name": "memcached"},
                      "backend": "dogpile.cache.pymemcache"},
            "bootstrap": {"adminPasswordSecretRef": {"name": "ks-admin"}},
        }}),
    ]
}

/// Whether a Keystone has come through the pipeline as far as it gets here: its rollout
/// done, its bootstrap complete, and every member of the second group reported. The
/// health check cannot pass (no Keystone API answers in this cluster; natively there is
/// no HTTP), so its member ends every pass there, the same way each time.
fn converged(object: &Value) -> bool {
    let generation = object.pointer("/metadata/generation");
    let reason = |type_: &str| {
        object
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find(|c| c["type"] == type_))
            .filter(|c| c.get("observedGeneration") == generation)
            .and_then(|c| c["reason"].as_str().map(str::to_owned))
    };
    reason("DeploymentReady").as_deref() == Some("DeploymentReady")
        && reason("IdentityBackendsReady").as_deref() == Some("IdentityBackendsNotRequired")
        && reason("BootstrapReady").as_deref() == Some("BootstrapComplete")
        && [
            "HTTPRouteReady",
            "KeystoneAPIReady",
            "HPAReady",
            "TrustFlushReady",
        ]
        .iter()
        .all(|type_| reason(type_).is_some())
}

/// The passes' requests so far, by `(verb, kind)`, from the `wasm_operator_api_requests_total`
/// series of `metrics`.
fn requests_of(metrics: &Metrics) -> Counts {
    let mut counts = Counts::default();
    for line in metrics.render().lines() {
        let Some(rest) = line.strip_prefix("wasm_operator_api_requests_total{") else {
            continue;
        };
        let Some((labels, count)) = rest.rsplit_once("} ") else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split(',')
                .find_map(|l| l.strip_prefix(&format!("{name}=\"")))
                .map(|v| v.trim_end_matches('"').to_owned())
                .unwrap_or_default()
        };
        let n: u64 = count.trim().parse().unwrap_or(0);
        *counts.0.entry((label("verb"), label("kind"))).or_default() += n;
    }
    counts
}

/// Requests that write: every verb but get and list (events and status updates included).
fn writes(counts: &Counts) -> u64 {
    counts
        .0
        .iter()
        .filter(|((verb, _), _)| verb != "get" && verb != "list" && verb != "stored")
        .map(|(_, n)| n)
        .sum()
}

/// Requests that read the server (get and list; not the informers' watches).
fn reads(counts: &Counts) -> u64 {
    counts
        .0
        .iter()
        .filter(|((verb, _), _)| verb == "get" || verb == "list")
        .map(|(_, n)| n)
        .sum()
}

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let mut section = Section::new(
        "keystone",
        "7. Keystone reconciler: wasm vs native, converged",
        &["measure", "wasm", "native", "wasm ÷ native"],
    );
    let config = ServerConfig {
        // cert-manager serves the Certificate kind the reconciler watches.
        actors: vec![
            Actor::Workloads,
            Actor::CertManager,
            Actor::MariaDb,
            Actor::ExternalSecrets,
        ],
        ..ServerConfig::default()
    };
    let server = ApiServer::start(config).await?;
    let client = server.client()?;
    let backend = Arc::new(KubeCluster::new(client.clone()));
    let crd: Value = serde_yaml_ng::from_str(KEYSTONE_CRD).context("the Keystone CRD")?;
    backend.create(&setup(), crd).await?;
    let store = json!({"apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
        "metadata": {"name": "openbao-cluster-store"},
        "spec": {"provider": {"vault": {"server": "http://openbao:8200", "path": "kv"}}}});
    // The CRD is served a moment after it is created.
    let deadline = Instant::now() + Duration::from_secs(30);
    while let Err(error) = backend.create(&setup(), store.clone()).await {
        anyhow::ensure!(Instant::now() < deadline, "the store: {error}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let runtime = options.artifact_runtime()?;
    // Off-cluster, as `wasm-operator run` without `--cluster-dns`: the health check's Service
    // name resolves through the API server's Services and EndpointSlices (here: none, so it
    // fails at once), not through the machine's DNS, whose timeouts would be measured.
    runtime.set_egress(EgressEnv {
        resolver: Some(Arc::new(EndpointSliceResolver::new(client.clone()))),
        observer: None,
    });
    // As deploy/base/plugins.toml grants it: the store gate reads a ClusterSecretStore.
    let access = Access {
        cluster_scoped: true,
        ..Access::default()
    };
    let plugin = runtime
        .load(&options.plugins.join("keystone.wasm"), None)
        .await?
        .with_access(access);
    let description = KeystoneReconciler::describe();
    let informers = Arc::new(Informers::new(client.clone(), None));
    let primary = informers.ensure(&description.primary);
    for watch in &description.watches {
        let kind = &watch.kind;
        // An optional watch of a kind this cluster does not serve (no
        // KeystoneIdentityBackend CRD here) never syncs; the pass finds none of it.
        let bound = Duration::from_secs(if watch.optional { 5 } else { 60 });
        let synced = tokio::time::timeout(bound, informers.ensure(kind).wait_synced()).await;
        if synced.is_err() && !watch.optional {
            anyhow::bail!("the informer of {} never synced", kind.kind);
        }
    }
    primary.wait_synced().await;
    let indexes = Arc::new(FieldIndexes::default());
    // The passes' own requests, counted apart from the actors' and this harness's.
    let metrics = Arc::new(Metrics::default());
    let pass_backend = Arc::new(KubeCluster::new(client.clone()).with_metrics(metrics.clone()));
    let passes = Passes::new::<KeystoneReconciler>(
        runtime,
        Arc::new(plugin),
        Arc::new(CachedCluster::new(
            pass_backend,
            informers.clone(),
            indexes.clone(),
            &description,
        )),
    );

    let count = if options.quick { 2 } else { 8 };
    let wasm_ns = namespace_names("ks-wasm", count);
    let native_ns = namespace_names("ks-native", count);
    let all_ns: Vec<String> = wasm_ns.iter().chain(&native_ns).cloned().collect();
    for namespace in &all_ns {
        for object in keystone_objects(namespace) {
            backend.create(&setup(), object).await?;
        }
    }
    let all = requests(&all_ns, "ks");
    for request in &all {
        let key = format!("{}/ks", request.namespace.as_deref().unwrap_or_default());
        let deadline = Instant::now() + Duration::from_secs(30);
        let object = loop {
            if let Some(object) = primary.get(&key) {
                break object;
            }
            anyhow::ensure!(Instant::now() < deadline, "{key} never reached the cache");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        for index in &description.indexes {
            let keys = KeystoneReconciler::index(&index.name, &object);
            indexes.set(&index.name, request, keys);
        }
    }

    // Converge both sets through their Jobs and rollouts (the actors step every 300 ms).
    let started = Instant::now();
    let mut rounds = 0;
    loop {
        let kind = &description.primary;
        let objects = backend.list(kind, None, &ListOptions::default()).await?;
        let cached = primary.filter(converged).len();
        if objects.iter().all(converged) && objects.len() == all.len() && cached == all.len() {
            break;
        }
        anyhow::ensure!(
            rounds < 400,
            "the Keystones did not converge in 400 rounds ({} of {} did)",
            objects.iter().filter(|o| converged(o)).count(),
            all.len()
        );
        rounds += 1;
        passes.batch(Build::Wasm, &requests(&wasm_ns, "ks")).await?;
        passes
            .batch(Build::Native, &requests(&native_ns, "ks"))
            .await?;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let convergence = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;

    let samples = options.samples(10);
    let mut wasm = Batch::empty();
    let mut native = Batch::empty();
    let mut wasm_counts = Counts::default();
    let mut native_counts = Counts::default();
    for round in 0..samples {
        let order = if round % 2 == 0 {
            [Build::Wasm, Build::Native]
        } else {
            [Build::Native, Build::Wasm]
        };
        for build in order {
            let before = requests_of(&metrics);
            let stored = server.counts();
            // Each build over its own Keystones: their health checks fail differently (the
            // wasm build's request finds no such host, the native build has no HTTP), so
            // over the same objects each would rewrite the other's KeystoneAPIReady.
            let own = match build {
                Build::Wasm => requests(&wasm_ns, "ks"),
                Build::Native => requests(&native_ns, "ks"),
            };
            let batch = passes.batch(build, &own).await?;
            let mut made = requests_of(&metrics).since(&before);
            // Changes stored meanwhile, by anyone: none when the passes and the actors
            // have nothing to do.
            for (key, n) in server.counts().since(&stored).0 {
                if key.0 == "stored" {
                    made.0.insert(key, n);
                }
            }
            let (batches, counts) = match build {
                Build::Wasm => (&mut wasm, &mut wasm_counts),
                Build::Native => (&mut native, &mut native_counts),
            };
            batches.add(batch);
            for (key, n) in made.0 {
                *counts.0.entry(key).or_default() += n;
            }
        }
    }
    let per_pass = |counts: &Counts, f: fn(&Counts) -> u64, batch: &Batch| {
        f(counts) as f64 / batch.passes.len().max(1) as f64
    };
    section.row(
        "converged pass: nothing to change",
        compare_times(&wasm.passes, &native.passes),
    );
    section.row(
        format!("converged: passes per second ({CONCURRENCY} at once)"),
        compare_rates(&wasm, &native),
    );
    section.row(
        "write requests per converged pass (goal 0)",
        vec![
            Cell::number(per_pass(&wasm_counts, writes, &wasm), ""),
            Cell::number(per_pass(&native_counts, writes, &native), ""),
        ],
    );
    section.row(
        "stored changes per converged pass (goal 0)",
        vec![
            Cell::number(per_pass(&wasm_counts, Counts::stored_total, &wasm), ""),
            Cell::number(per_pass(&native_counts, Counts::stored_total, &native), ""),
        ],
    );
    section.row(
        "server reads per converged pass (goal 0: the cache serves them)",
        vec![
            Cell::number(per_pass(&wasm_counts, reads, &wasm), ""),
            Cell::number(per_pass(&native_counts, reads, &native), ""),
        ],
    );
    section.note(format!(
        "{count} Keystones per build, each in its own namespace with its MariaDB and \
         credentials; converged through their db-sync and schema-check Jobs and rollouts in \
         {:.1} s ({rounds} rounds of passes). Then {samples} rounds of converged passes, each \
         build over its own {count}: no Keystone API answers here, so every pass ends at the \
         health check of step 11 (the wasm build's request finds no such Service, looked up \
         as the operator does off-cluster: one GET of the Service a pass, outside the \
         pass's counted reads; the native build has no HTTP), the same way each time. Failed passes: {}. Goal: wasm ÷ \
         native ≤ {GOAL}.",
        convergence.as_secs_f64(),
        wasm.failed + native.failed,
    ));
    let read: Vec<String> = wasm_counts
        .0
        .iter()
        .filter(|((verb, _), _)| verb != "stored")
        .map(|((verb, kind), n)| format!("{verb} {kind}: {n}"))
        .collect();
    if !read.is_empty() {
        section.note(format!(
            "Requests the wasm build's converged passes made: {}.",
            read.join(", ")
        ));
    }
    if wasm.failed > 0 || native.failed > 0 {
        section.note("A failed converged pass means the pass found work: see the logs.");
    }
    Ok(section)
}
