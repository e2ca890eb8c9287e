//! The controller runtime end to end: the operator runs the fixture plugin from a plugin
//! directory against the embedded API server, driven by watches.

use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator::cluster::kube::{KubeCluster, RateLimit};
use wasm_operator::controller::{Backoff, ControllerConfig};
use wasm_operator::operator::{LeaderElection, Operator, OperatorConfig, RunningOperator};
use wasm_operator_apiserver::Fault;
use wasm_operator_e2e::{
    Cluster, cluster_with, config_map, counter_rises, eventually, fixture_plugin_dir, metric,
    operator_account, passes, runtime_with_cache, setup,
};
use wasm_operator_runtime::backend::ClusterBackend;
use wasm_operator_sdk::{ObjectRef, Patch, ReadFrom, Request};

const WAIT: Duration = Duration::from_secs(20);

struct Harness {
    cluster: Cluster,
    operator: Option<RunningOperator>,
    _plugins: tempfile::TempDir,
    _cache: tempfile::TempDir,
}

impl Harness {
    async fn start(configure: impl FnOnce(&mut OperatorConfig)) -> Self {
        let cluster = cluster_with(&[]).await;
        let (operator, plugins, cache) = start_operator(&cluster, configure).await;
        Self {
            cluster,
            operator: Some(operator),
            _plugins: plugins,
            _cache: cache,
        }
    }

    fn operator(&self) -> &RunningOperator {
        self.operator.as_ref().expect("running")
    }

    async fn create(&self, object: Value) -> Value {
        self.cluster.create(object).await
    }

    async fn echo(&self, name: &str) -> Option<Value> {
        self.cluster.echo(name).await
    }

    async fn echo_data(&self, name: &str, key: &str) -> Option<String> {
        self.echo(name)
            .await
            .and_then(|e| e["data"][key].as_str().map(str::to_owned))
    }

    fn failures(&self, name: &str) -> u32 {
        let controller = self
            .operator()
            .controller("fixture")
            .expect("the fixture controller");
        controller.queue().failures(&Request {
            namespace: Some("ns".into()),
            name: name.into(),
        })
    }
}

async fn start_operator(
    cluster: &Cluster,
    configure: impl FnOnce(&mut OperatorConfig),
) -> (RunningOperator, tempfile::TempDir, tempfile::TempDir) {
    let cache = tempfile::tempdir().expect("cache");
    let plugins = fixture_plugin_dir();
    let mut config = OperatorConfig::new(plugins.path());
    config.controller = ControllerConfig {
        backoff: Backoff {
            base: Duration::from_millis(50),
            max: Duration::from_secs(2),
        },
        ..ControllerConfig::default()
    };
    configure(&mut config);
    let runtime = runtime_with_cache(&cache);
    let client = operator_account::operator_client(&cluster.server, &runtime, &config).await;
    let operator = Operator::start(runtime, client, config)
        .await
        .expect("the operator starts");
    (operator, plugins, cache)
}

/// A core/v1 object of namespace `ns`.
fn in_ns(kind: &str, name: &str) -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: kind.into(),
        namespace: Some("ns".into()),
        name: name.into(),
    }
}

fn secret(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": "ns"}, "stringData": {"v": value}})
}

fn referring(name: &str, secrets: &str) -> Value {
    let mut cm = config_map("ns", name, json!({"k": "v"}), None);
    cm["metadata"]["annotations"] = json!({ fixture_reconciler::SECRETS: secrets });
    cm
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_primary_is_reconciled_by_the_running_operator() {
    let h = Harness::start(|_| {}).await;
    h.create(config_map("ns", "a", json!({"x": "1"}), None))
        .await;
    let x = eventually("the echo", WAIT, || async { h.echo_data("a", "x").await }).await;
    assert_eq!(x, "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_secret_is_mapped_through_the_field_index_to_the_primary_naming_it() {
    let h = Harness::start(|_| {}).await;
    let s1 = h.create(secret("s1", "one")).await;
    let s2 = h.create(secret("s2", "two")).await;
    h.create(referring("a", "s1")).await;
    h.create(referring("b", "s2")).await;
    let rv1 = s1["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    eventually("a's echo with s1's version", WAIT, || async {
        (h.echo_data("a", "secret-versions").await? == format!("s1={rv1}")).then_some(())
    })
    .await;
    // b's echo as it settles: with s2's version (a first pass may run before the cache
    // holds s2 and echo "missing"; the watch of s2 then rewrites it once).
    let s2_version = format!(
        "s2={}",
        s2["metadata"]["resourceVersion"].as_str().expect("rv")
    );
    let b_before = eventually("b's echo with s2's version", WAIT, || async {
        let echo = h.echo("b").await?;
        (echo["data"]["secret-versions"] == s2_version.as_str()).then_some(echo)
    })
    .await;

    let r = in_ns("Secret", "s1");
    let changed = h
        .cluster
        .backend
        .patch(
            &setup(),
            &r,
            &Patch::Merge(json!({"stringData": {"v": "uno"}})),
            None,
        )
        .await
        .expect("patched");
    let rv2 = changed["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    assert_ne!(rv1, rv2);
    eventually("a's echo with s1's new version", WAIT, || async {
        (h.echo_data("a", "secret-versions").await? == format!("s1={rv2}")).then_some(())
    })
    .await;
    let b_after = h.echo("b").await.expect("b's echo");
    assert_eq!(
        b_before["metadata"]["resourceVersion"], b_after["metadata"]["resourceVersion"],
        "the primary not naming s1 was not rewritten"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owned_object_changed_by_someone_else_is_mapped_back_to_its_owner() {
    let h = Harness::start(|_| {}).await;
    h.create(config_map("ns", "a", json!({"x": "1"}), None))
        .await;
    eventually("the echo", WAIT, || async { h.echo_data("a", "x").await }).await;
    let echo = in_ns("ConfigMap", "a-echo");
    h.cluster
        .backend
        .patch(
            &setup(),
            &echo,
            &Patch::Merge(json!({"data": {"x": "tampered"}})),
            None,
        )
        .await
        .expect("tampered");
    eventually("the echo restored by its owner's pass", WAIT, || async {
        (h.echo_data("a", "x").await? == "1").then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backoff_grows_per_key_and_resets_on_success() {
    let h = Harness::start(|_| {}).await;
    h.create(config_map("ns", "ok", json!({}), None)).await;
    h.create(config_map("ns", "bad", json!({}), Some("panic")))
        .await;
    // When each of bad's first five failures was seen, polled every 2 ms.
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while seen.len() < 5 {
        let failures = h.failures("bad") as usize;
        while seen.len() < failures.min(5) {
            seen.push(tokio::time::Instant::now());
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "bad failed {failures} times"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let gaps: Vec<Duration> = seen.windows(2).map(|w| w[1] - w[0]).collect();
    // The harness's backoff is 50 ms doubling: failure n waits 50 ms × 2^(n-1) before the
    // next pass. A gap is never shorter than its delay (less the polling slack).
    for (n, gap) in gaps.iter().enumerate() {
        let delay = Duration::from_millis(50 << n);
        assert!(
            *gap + Duration::from_millis(10) >= delay,
            "the gap after failure {} is {gap:?}, shorter than its backoff {delay:?} (gaps {gaps:?})",
            n + 1
        );
    }
    assert!(
        gaps[3] > gaps[1] && gaps[2] > gaps[0],
        "the gaps grow: {gaps:?}"
    );
    eventually("ok's echo", WAIT, || async { h.echo("ok").await }).await;
    assert_eq!(h.failures("ok"), 0, "another key's failures do not count");

    let bad = in_ns("ConfigMap", "bad");
    h.cluster
        .backend
        .patch(
            &setup(),
            &bad,
            &Patch::Merge(
                json!({"metadata": {"annotations": {fixture_reconciler::BEHAVIOUR: null}}}),
            ),
            None,
        )
        .await
        .expect("mended");
    eventually("bad's echo after it is mended", WAIT, || async {
        h.echo("bad").await
    })
    .await;
    eventually("bad's failures reset", WAIT, || async {
        (h.failures("bad") == 0).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_that_conflicts_is_retried() {
    let h = Harness::start(|_| {}).await;
    let mut fault = Fault::fail("apply", "configmaps", 409, "the object has been modified");
    fault.remaining = Some(2);
    h.cluster.server.inject(fault);
    h.create(config_map("ns", "a", json!({"x": "1"}), None))
        .await;
    let x = eventually("the echo", WAIT, || async { h.echo_data("a", "x").await }).await;
    assert_eq!(x, "1");
    let metrics = h.operator().metrics().render();
    assert!(
        !metrics.contains(r#"result="error""#),
        "no pass failed: the conflicts were retried inside the pass\n{metrics}"
    );
    assert!(
        metrics.contains(
            r#"wasm_operator_api_requests_total{verb="apply",kind="ConfigMap",code="409"} 2"#
        ),
        "{metrics}"
    );
}

/// The value of the `passes_total` counter of the fixture's passes ending in `result`.
fn fixture_passes(h: &Harness, result: &str) -> u64 {
    metric(
        &h.operator().metrics().render(),
        &format!(r#"wasm_operator_passes_total{{plugin="fixture",result="{result}"}}"#),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_that_fails_on_a_conflict_is_counted_as_a_conflict_not_an_error() {
    let h = Harness::start(|_| {}).await;
    h.create(config_map("ns", "stale", json!({}), Some("conflict")))
        .await;
    eventually("a pass counted as a conflict", WAIT, || async {
        (fixture_passes(&h, "conflict") >= 1).then_some(())
    })
    .await;
    assert_eq!(
        fixture_passes(&h, "error"),
        0,
        "{}",
        h.operator().metrics().render()
    );
    assert!(
        h.failures("stale") >= 1,
        "a conflict is retried with the backoff"
    );
    let metrics = h.operator().metrics().render();
    assert!(
        metrics.contains(
            r#"wasm_operator_api_requests_total{verb="patch",kind="ConfigMap",code="409"}"#
        ),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_failure_is_retried_after_its_delay_not_the_backoff() {
    let h = Harness::start(|_| {}).await;
    h.create(config_map("ns", "later", json!({}), Some("retry-after")))
        .await;
    eventually("the first failed pass", WAIT, || async {
        (fixture_passes(&h, "error") >= 1).then_some(())
    })
    .await;
    let first = std::time::Instant::now();
    eventually("the retry", WAIT, || async {
        (fixture_passes(&h, "error") >= 2).then_some(())
    })
    .await;
    // The backoff would have retried after 50 ms; half the delay leaves room for polling.
    let waited = first.elapsed();
    assert!(
        waited >= fixture_reconciler::RETRY_AFTER / 2,
        "retried after {waited:?}"
    );
    assert_eq!(
        h.failures("later"),
        0,
        "a retry-after leaves the backoff count"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_waits_for_the_passes_in_flight() {
    let mut h = Harness::start(|config| {
        config.controller.drain = Duration::from_secs(20);
    })
    .await;
    let mut cm = config_map("ns", "slow", json!({"x": "1"}), None);
    cm["metadata"]["annotations"] = json!({ fixture_reconciler::SLEEP_MS: "1500" });
    h.create(cm).await;
    eventually("the slow pass to start", WAIT, || async {
        let controller = h.operator().controller("fixture")?;
        (controller.queue().in_flight() == 1).then_some(())
    })
    .await;
    assert!(h.echo("slow").await.is_none(), "the pass is still sleeping");
    h.operator.take().expect("running").shutdown().await;
    assert_eq!(
        h.echo_data("slow", "x").await.as_deref(),
        Some("1"),
        "shutdown returned only after the pass in flight wrote its echo"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_health_and_readiness_are_served() {
    let h = Harness::start(|config| {
        config.health_addr = Some("127.0.0.1:0".parse().expect("addr"));
    })
    .await;
    h.create(config_map("ns", "a", json!({}), None)).await;
    eventually("the echo", WAIT, || async { h.echo("a").await }).await;
    let addr = h.operator().health_addr().expect("served");
    let get = |path: &'static str| async move {
        let response = wasm_operator_e2e::http_get(addr, path).await;
        Some(response)
    };
    let (status, _) = eventually("/readyz", WAIT, || async {
        get("/readyz").await.filter(|(s, _)| *s == 200)
    })
    .await;
    assert_eq!(status, 200);
    assert_eq!(get("/healthz").await.expect("healthz").0, 200);
    // The echo lands inside the pass, before the client has counted the apply's answer; the
    // pass's success is counted once it returns (and an earlier pass may have succeeded
    // without writing). So wait for both counts.
    let success = r#"wasm_operator_passes_total{plugin="fixture",result="success"}"#;
    let apply = r#"wasm_operator_api_requests_total{verb="apply",kind="ConfigMap",code="200"}"#;
    let (status, metrics) = eventually("/metrics counting the pass", WAIT, || async {
        get("/metrics")
            .await
            .filter(|(_, m)| m.contains(success) && m.contains(apply))
    })
    .await;
    assert_eq!(status, 200);
    for expected in [
        r#"wasm_operator_passes_total{plugin="fixture",result="success"}"#,
        r#"wasm_operator_pass_duration_seconds_count{plugin="fixture"}"#,
        r#"wasm_operator_queue_depth{plugin="fixture"}"#,
        r#"wasm_operator_api_requests_total{verb="apply",kind="ConfigMap",code="200"}"#,
        r#"wasm_operator_plugin_info{plugin="fixture",version="0.1.0""#,
        "wasm_operator_leader 1",
    ] {
        assert!(
            metrics.contains(expected),
            "missing {expected} in\n{metrics}"
        );
    }
}

/// A plain HTTP/1.1 GET over a TCP stream: `(status, body)`.
/// Two replicas electing a leader through a Lease of `lease`: the first leads, the second
/// stands by, and `a` is created while both run. Returns once the leader has passed `a` (its
/// echo exists), with the standby's pass count checked to be 0.
async fn leader_and_standby(
    cluster: &Cluster,
    lease: Duration,
) -> (
    (RunningOperator, tempfile::TempDir, tempfile::TempDir),
    (RunningOperator, tempfile::TempDir, tempfile::TempDir),
) {
    let elect = |identity: &'static str| {
        move |config: &mut OperatorConfig| {
            config.leader_election = Some(LeaderElection {
                duration: lease,
                grace: Duration::from_secs(1),
                ..LeaderElection::new("ns", identity)
            });
        }
    };
    let first = start_operator(cluster, elect("first")).await;
    eventually("the first replica to lead", WAIT, || async {
        first.0.is_leading().then_some(())
    })
    .await;
    let second = start_operator(cluster, elect("second")).await;
    cluster
        .backend
        .create(&setup(), config_map("ns", "a", json!({"x": "1"}), None))
        .await
        .expect("created");
    eventually("the leader's echo of a", WAIT, || async {
        cluster.get("v1", "ConfigMap", "ns", "a-echo").await
    })
    .await;
    // The echo is written inside the pass; the pass is counted when it ends.
    counter_rises("the leader's pass of a", WAIT, 0, || {
        passes(&first.0, "fixture")
    })
    .await;
    assert!(!second.0.is_leading(), "one leader at a time");
    assert_eq!(
        passes(&second.0, "fixture"),
        0,
        "the standby ran no pass while the leader held the Lease"
    );
    (first, second)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_reconciles_and_a_standby_takes_over_when_the_lease_expires() {
    let cluster = cluster_with(&[]).await;
    let (first, (second, _p2, _c2)) = leader_and_standby(&cluster, Duration::from_secs(2)).await;
    // A crash: the Lease is not released, the standby waits for it to expire.
    first.0.kill();
    eventually("the second replica to lead", WAIT, || async {
        second.is_leading().then_some(())
    })
    .await;
    counter_rises("the new leader's passes", WAIT, 0, || {
        passes(&second, "fixture")
    })
    .await;
    cluster
        .merge_patch(&in_ns("ConfigMap", "a"), json!({"data": {"x": "2"}}))
        .await;
    eventually("the new leader's echo of the change", WAIT, || async {
        let echo = cluster.get("v1", "ConfigMap", "ns", "a-echo").await?;
        (echo["data"]["x"] == "2").then_some(())
    })
    .await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_replica_runs_no_pass_until_the_leader_releases_the_lease() {
    let cluster = cluster_with(&[]).await;
    // A Lease far longer than the test: only a release hands it over.
    let ((first, _p1, _c1), (second, _p2, _c2)) =
        leader_and_standby(&cluster, Duration::from_secs(3600)).await;
    first.shutdown().await;
    eventually(
        "the standby to lead once the Lease is released",
        WAIT,
        || async { second.is_leading().then_some(()) },
    )
    .await;
    counter_rises("the new leader's passes of a", WAIT, 0, || {
        passes(&second, "fixture")
    })
    .await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_side_rate_limit_spaces_api_requests() {
    let cluster = cluster_with(&[]).await;
    let limited = KubeCluster::new(cluster.server.client().expect("client"))
        .with_rate_limit(Some(RateLimit { qps: 10, burst: 1 }));
    let r = in_ns("ConfigMap", "none");
    let started = std::time::Instant::now();
    for _ in 0..6 {
        limited.get(&r, ReadFrom::Server).await.expect("get");
    }
    // One token at once, then one every 100 ms.
    assert!(
        started.elapsed() >= Duration::from_millis(450),
        "{:?}",
        started.elapsed()
    );
}

/// The operator acts as its ServiceAccount, not as the admin: with the binding of its
/// ClusterRole removed its passes fail (their writes are forbidden) and write nothing, and
/// once the binding is back the retried pass converges, with no change to the primary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_acts_as_its_service_account_so_a_removed_binding_stops_its_writes() {
    use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
    use kube::api::{Api, DeleteParams, PostParams};

    let h = Harness::start(|_| {}).await;
    h.create(config_map("ns", "a", json!({"x": "1"}), None))
        .await;
    eventually("a's echo", WAIT, || async { h.echo_data("a", "x").await }).await;

    let bindings: Api<ClusterRoleBinding> =
        Api::all(h.cluster.server.client().expect("an admin client"));
    let binding = bindings
        .get("wasm-operator")
        .await
        .expect("the operator's binding");
    bindings
        .delete("wasm-operator", &DeleteParams::default())
        .await
        .expect("the binding is deleted");
    let errors = || {
        wasm_operator_e2e::metric(
            &h.operator().metrics().render(),
            r#"wasm_operator_passes_total{plugin="fixture",result="error"}"#,
        )
    };
    let before = errors();
    h.create(config_map("ns", "b", json!({"x": "2"}), None))
        .await;
    eventually("b's pass to fail", WAIT, || async {
        (h.failures("b") >= 1 && errors() > before).then_some(())
    })
    .await;
    assert_eq!(h.echo("b").await, None, "a forbidden pass wrote b's echo");

    let mut restored = binding;
    restored.metadata.resource_version = None;
    restored.metadata.uid = None;
    restored.metadata.managed_fields = None;
    restored.metadata.creation_timestamp = None;
    bindings
        .create(&PostParams::default(), &restored)
        .await
        .expect("the binding is restored");
    let x = eventually("b's echo once bound again", WAIT, || async {
        h.echo_data("b", "x").await
    })
    .await;
    assert_eq!(x, "2");
}
