//! CPU: a spinning guest yields to the host's other work (Lease renewal, `/healthz`, the
//! change feed), losing leadership cancels the passes in flight, and key generation is
//! bounded and stops with its pass.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use wasm_operator::operator::{LeaderElection, RunningOperator};
use wasm_operator_e2e::{Cluster, cluster_with, eventually};
use wasm_operator_runtime::planner::SecretRequest;
use wasm_operator_runtime::{Limits, PassError, Runtime, RuntimeConfig};

use super::{hostile, start_hostile};

const WAIT: Duration = Duration::from_secs(20);

/// The value of the sample of `metric` (name and labels, as rendered), 0 when absent.
fn sample(operator: &RunningOperator, metric: &str) -> f64 {
    operator
        .metrics()
        .render()
        .lines()
        .find_map(|l| l.strip_prefix(metric)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

const IN_FLIGHT: &str = r#"wasm_operator_passes_in_flight{plugin="hostile"}"#;

async fn lease(cluster: &Cluster) -> Option<Value> {
    let r = wasm_operator_sdk::ObjectRef {
        api_version: "coordination.k8s.io/v1".into(),
        kind: "Lease".into(),
        namespace: Some("ns".into()),
        name: "wasm-operator-leader".into(),
    };
    use wasm_operator_runtime::backend::ClusterBackend as _;
    cluster
        .backend
        .get(&r, wasm_operator_sdk::ReadFrom::Server)
        .await
        .expect("get the Lease")
}

/// `GET path` on `addr`: the status code, 0 when there is no answer.
async fn status(addr: std::net::SocketAddr, path: &str) -> u16 {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
        return 0;
    };
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).await.is_err() {
        return 0;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response).await;
    response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spinning_guests_do_not_stall_lease_renewal_health_or_the_change_feed() {
    let cluster = cluster_with(&[]).await;
    let (operator, _p, _c) = start_hostile(&cluster, |config| {
        config.health_addr = Some("127.0.0.1:0".parse().expect("addr"));
        config.leader_election = Some(LeaderElection {
            duration: Duration::from_secs(2),
            grace: Duration::from_secs(1),
            ..LeaderElection::new("ns", "spun")
        });
    })
    .await;
    eventually("leadership", WAIT, || async {
        operator.is_leading().then_some(())
    })
    .await;
    // Two spinning passes: as many as the test runtime has worker threads.
    cluster.create(hostile("spin-1", "spin")).await;
    cluster.create(hostile("spin-2", "spin")).await;
    eventually("both spinning passes to start", WAIT, || async {
        (sample(&operator, IN_FLIGHT) == 2.0).then_some(())
    })
    .await;
    // And an index() that spins inside the change feed.
    cluster.create(hostile("spin-index", "spin-index")).await;

    let addr = operator.health_addr().expect("served");
    let window = tokio::time::Instant::now() + Duration::from_secs(6);
    let mut renewals = std::collections::BTreeSet::new();
    let mut health = Vec::new();
    while tokio::time::Instant::now() < window {
        if let Some(lease) = lease(&cluster).await {
            renewals.insert(lease["spec"]["renewTime"].to_string());
        }
        health.push(status(addr, "/healthz").await);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    assert_eq!(
        sample(&operator, IN_FLIGHT),
        2.0,
        "the spinning passes ran through the whole window"
    );
    assert!(
        renewals.len() >= 3,
        "the Lease was renewed while guests spun: {renewals:?}"
    );
    assert!(health.iter().all(|s| *s == 200), "{health:?}");
    assert!(operator.is_leading(), "the replica stayed leader");
    operator.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_leadership_cancels_the_passes_in_flight_and_starts_no_new_one() {
    let cluster = cluster_with(&[]).await;
    let (lead, leading) = watch::channel(true);
    let (operator, _p, _c) = start_hostile(&cluster, |config| config.leading = Some(leading)).await;
    cluster.create(hostile("spin", "spin")).await;
    eventually("the spinning pass to start", WAIT, || async {
        (sample(&operator, IN_FLIGHT) == 1.0).then_some(())
    })
    .await;

    lead.send_replace(false);

    let lost = r#"wasm_operator_pass_errors_total{plugin="hostile",error="leadership_lost"}"#;
    eventually("the pass cancelled for lost leadership", WAIT, || async {
        (sample(&operator, lost) == 1.0 && sample(&operator, IN_FLIGHT) == 0.0).then_some(())
    })
    .await;
    cluster.create(hostile("calm", "none")).await;
    let depth = r#"wasm_operator_queue_depth{plugin="hostile"}"#;
    eventually("both keys waiting in the queue", WAIT, || async {
        (sample(&operator, depth) == 2.0).then_some(())
    })
    .await;
    let success = r#"wasm_operator_passes_total{plugin="hostile",result="success"}"#;
    assert_eq!(
        sample(&operator, success),
        0.0,
        "no pass ran while not leading"
    );

    lead.send_replace(true);
    eventually(
        "the calm primary reconciled once leading again",
        WAIT,
        || async { (sample(&operator, success) >= 1.0).then_some(()) },
    )
    .await;
    operator.kill();
}

fn secretgen_wasm() -> std::path::PathBuf {
    wasm_operator::cli::shipped_plugin_dir().join("secretgen.wasm")
}

fn rsa_8192(name: &str) -> SecretRequest {
    SecretRequest {
        name: name.into(),
        entries: format!(
            r#"[{{"name":"{name}","type":"Opaque","generators":[{{"type":"rsa","key":"k","bits":8192}}]}}]"#
        ),
        existing: None,
        ready_units: vec![],
        generate: true,
    }
}

fn runtime(cache: &tempfile::TempDir, keygens: usize) -> Runtime {
    Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.path().to_owned()),
        max_concurrent_keygens: keygens,
        ..RuntimeConfig::default()
    })
    .expect("the runtime starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_generation_stops_when_its_pass_misses_its_deadline() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime(&cache, 2);
    let limits = Limits {
        deadline: Duration::from_millis(300),
        ..Limits::default()
    };
    let plugin = runtime
        .load(&secretgen_wasm(), Some(limits))
        .await
        .expect("secretgen loads");

    let err = plugin
        .plan(&runtime, &rsa_8192("big"))
        .await
        .expect_err("RSA-8192 takes seconds");

    assert!(matches!(err, PassError::Deadline { .. }), "{err:?}");
    assert!(runtime.keygens_started() >= 1, "the key generation started");
    eventually(
        "the key generation to stop",
        Duration::from_secs(3),
        || async { (runtime.keygens_running() == 0).then_some(()) },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_key_generations_are_bounded() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime(&cache, 1);
    let limits = Limits {
        deadline: Duration::from_secs(2),
        ..Limits::default()
    };
    let plugin = std::sync::Arc::new(
        runtime
            .load(&secretgen_wasm(), Some(limits))
            .await
            .expect("secretgen loads"),
    );
    let passes: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|name| {
            let (plugin, runtime) = (plugin.clone(), runtime.clone());
            tokio::spawn(async move { plugin.plan(&runtime, &rsa_8192(name)).await.map(drop) })
        })
        .collect();
    let mut most = 0;
    while passes.iter().any(|p| !p.is_finished()) {
        most = most.max(runtime.keygens_running());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(runtime.keygens_started() >= 1, "key generation started");
    assert_eq!(most, 1, "at most one key generation at a time");
}
