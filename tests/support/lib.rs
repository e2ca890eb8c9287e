//! Shared helpers of the end-to-end tests: a runtime with a private artifact cache, the
//! built plugin files, the embedded API server as the cluster, and object builders.

pub mod operator_account;
pub mod real_keystone;
pub mod webhooks;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use wasm_operator::cluster::kube::KubeCluster;
use wasm_operator::operator::RunningOperator;
use wasm_operator_apiserver::{ApiServer, Counts, ServerConfig};
use wasm_operator_runtime::backend::{Caller, ClusterBackend};
use wasm_operator_runtime::{Runtime, RuntimeConfig};
use wasm_operator_sdk::{KindRef, ListOptions, ObjectRef, ReadFrom};

/// A runtime whose artifact cache lives in `cache` (kept alive by the caller).
pub fn runtime_with_cache(cache: &tempfile::TempDir) -> Runtime {
    let config = RuntimeConfig {
        cache_dir: Some(cache.path().to_owned()),
        ..RuntimeConfig::default()
    };
    Runtime::new(config).expect("the runtime starts")
}

/// An artifact cache shared by every test of one test binary: the first operator that
/// loads a `.wasm` compiles it, later ones load the artifact. Tests of the cache itself
/// make their own.
pub fn shared_cache() -> &'static tempfile::TempDir {
    static CACHE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    CACHE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a cache directory");
        // Writes the cache key once, before tests race to create it.
        drop(runtime_with_cache(&dir));
        dir
    })
}

/// The test-only fixture reconciler, as built for wasm32-wasip2 by the host's build script.
pub fn fixture_wasm() -> PathBuf {
    wasm_operator::cli::test_plugin_dir().join("fixture-reconciler.wasm")
}

/// A ConfigMap in namespace `ns` with `data` and, when given, the fixture's behaviour
/// annotation.
pub fn config_map(namespace: &str, name: &str, data: Value, behaviour: Option<&str>) -> Value {
    let mut object = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    });
    if let Some(b) = behaviour {
        object["metadata"]["annotations"] = json!({ fixture_reconciler::BEHAVIOUR: b });
    }
    object
}

/// The embedded API server and the host's backend of it.
pub struct Cluster {
    pub server: ApiServer,
    pub backend: Arc<KubeCluster>,
}

impl Cluster {
    /// The backend as the runtime takes it.
    pub fn backend(&self) -> Arc<dyn ClusterBackend> {
        self.backend.clone()
    }

    /// Starts the operator over this cluster with `config`, its artifact cache in `cache`,
    /// as a ServiceAccount holding what `wasm-operator rbac` grants (see
    /// [`operator_account`]).
    pub async fn start_operator(
        &self,
        cache: &tempfile::TempDir,
        config: wasm_operator::operator::OperatorConfig,
    ) -> wasm_operator::operator::RunningOperator {
        let runtime = runtime_with_cache(cache);
        let client = operator_account::operator_client(&self.server, &runtime, &config).await;
        wasm_operator::operator::Operator::start(runtime, client, config)
            .await
            .expect("the operator starts")
    }

    /// The requests served so far.
    pub fn counts(&self) -> Counts {
        self.server.counts()
    }

    /// One object, read from the server.
    pub async fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<Value> {
        let r = ObjectRef {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: Some(namespace.into()),
            name: name.into(),
        };
        self.backend.get(&r, ReadFrom::Server).await.expect("get")
    }

    /// Waits until condition `type_` of the object, observed at its current generation,
    /// has `reason`; the object then.
    #[allow(clippy::too_many_arguments)]
    pub async fn condition_reached(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
        type_: &str,
        reason: &str,
        timeout: std::time::Duration,
    ) -> Value {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let object = self.get(api_version, kind, namespace, name).await;
            if let Some(object) = &object
                && current_condition(object, type_).is_some_and(|c| c["reason"] == reason)
            {
                return object.clone();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out after {timeout:?} waiting for {kind} {namespace}/{name}: \
                 {type_} {reason}; its status then: {}",
                object.map_or_else(
                    || "(no such object)".to_owned(),
                    |o| o["status"].to_string()
                )
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Creates `object` as the test ([`setup`]).
    pub async fn create(&self, object: Value) -> Value {
        self.backend
            .create(&setup(), object)
            .await
            .expect("created")
    }

    /// Creates `object`; `None` while the cluster does not serve its kind (a CRD just
    /// created).
    pub async fn create_if_served(&self, object: Value) -> Option<Value> {
        match self.backend.create(&setup(), object).await {
            Ok(created) => Some(created),
            Err(wasm_operator_types::ApiError::NotServed(_)) => None,
            Err(other) => panic!("create: {other}"),
        }
    }

    /// Merge-patches the object `object` names with `patch`.
    pub async fn merge_patch(
        &self,
        object: &wasm_operator_types::ObjectRef,
        patch: Value,
    ) -> Value {
        self.backend
            .patch(
                &setup(),
                object,
                &wasm_operator_types::Patch::Merge(patch),
                None,
            )
            .await
            .expect("patched")
    }

    /// The fixture's echo of ConfigMap `ns/name`.
    pub async fn echo(&self, name: &str) -> Option<Value> {
        self.get("v1", "ConfigMap", "ns", &format!("{name}-echo"))
            .await
    }

    /// The events of namespace `namespace` with `reason`.
    pub async fn events_with_reason(&self, namespace: &str, reason: &str) -> Vec<Value> {
        self.events(namespace)
            .await
            .into_iter()
            .filter(|e| e["reason"] == reason)
            .collect()
    }

    /// The events.k8s.io Events of a namespace.
    pub async fn events(&self, namespace: &str) -> Vec<Value> {
        let kind = KindRef {
            api_version: "events.k8s.io/v1".into(),
            kind: "Event".into(),
            plural: "events".into(),
            namespaced: true,
        };
        self.backend
            .list(&kind, Some(namespace), &ListOptions::default())
            .await
            .expect("events")
    }
}

/// Condition `type_` of `object`'s status when it was observed at the object's current
/// generation.
pub fn current_condition(object: &Value, type_: &str) -> Option<Value> {
    let generation = object.pointer("/metadata/generation").cloned();
    object
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .filter(|c| c.get("observedGeneration").cloned() == generation)
        .cloned()
}

/// The caller a test makes its own requests as.
pub fn setup() -> Caller {
    Caller {
        plugin: "test-setup".into(),
        field_manager: "test-setup".into(),
    }
}

/// The namespace the operator reads target cluster registrations from by default.
pub const CLUSTERS_NAMESPACE: &str = "c5c3-clusters";

impl Cluster {
    /// Registers `target` on this cluster as the target cluster `name`: the namespace
    /// [`CLUSTERS_NAMESPACE`] (when missing) and the registration Secret there, labelled
    /// `sigs.k8s.io/multicluster-runtime-kubeconfig=true`, with `target`'s kubeconfig.
    pub async fn register_target(&self, name: &str, target: &Cluster) {
        let namespace = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": CLUSTERS_NAMESPACE}});
        match self.backend.create(&setup(), namespace).await {
            Ok(_) | Err(wasm_operator_types::ApiError::Conflict(_)) => {}
            Err(e) => panic!("the namespace {CLUSTERS_NAMESPACE} is created: {e}"),
        }
        self.create(target_registration(name, target)).await;
    }
}

/// The registration Secret of `target` as the target cluster `name`.
pub fn target_registration(name: &str, target: &Cluster) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": CLUSTERS_NAMESPACE,
            "labels": {"sigs.k8s.io/multicluster-runtime-kubeconfig": "true"}},
        "stringData": {"kubeconfig": target.server.kubeconfig()}})
}

/// A fresh embedded API server with namespace `ns` and `objects` created in it.
pub async fn cluster_with(objects: &[Value]) -> Cluster {
    cluster_with_actors(&[], objects).await
}

/// [`cluster_with`] on an API server running `actors`.
pub async fn cluster_with_actors(
    actors: &[wasm_operator_apiserver::Actor],
    objects: &[Value],
) -> Cluster {
    let config = ServerConfig {
        actors: actors.to_vec(),
        ..ServerConfig::default()
    };
    let server = ApiServer::start(config)
        .await
        .expect("the API server starts");
    let backend = Arc::new(KubeCluster::new(server.client().expect("a client")));
    let setup = setup();
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}});
    backend
        .create(&setup, namespace)
        .await
        .expect("the namespace is created");
    for object in objects {
        backend
            .create(&setup, object.clone())
            .await
            .expect("the fixture object is created");
    }
    Cluster { server, backend }
}

/// Polls `check` every 20 ms until it returns `Some`, panicking with `what` after
/// `timeout`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: std::time::Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The value of `series` (name and labels, as rendered) in a Prometheus text rendering;
/// 0 when the series is absent.
pub fn metric(rendered: &str, series: &str) -> u64 {
    rendered
        .lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
                .and_then(|n| n.trim().parse::<f64>().ok())
        })
        .map_or(0, |n| n as u64)
}

/// How many passes of `plugin` the operator ran, whatever their outcome.
pub fn passes(operator: &RunningOperator, plugin: &str) -> u64 {
    operator.metrics().passes(plugin)
}

/// Waits until no controller of `operator` has a key running or ready to run, so every pass
/// started so far is counted in its metrics.
pub async fn settled(operator: &RunningOperator) {
    eventually(
        "every controller idle",
        std::time::Duration::from_secs(30),
        || async {
            operator
                .controllers()
                .iter()
                .all(|c| c.queue().is_idle())
                .then_some(())
        },
    )
    .await
}

/// The API requests `operator` made for its plugins that write (every verb but get and
/// list), by their `verb, kind, code` labels.
pub fn writes(operator: &RunningOperator) -> std::collections::BTreeMap<String, u64> {
    operator
        .metrics()
        .render()
        .lines()
        .filter_map(|line| line.strip_prefix("wasm_operator_api_requests_total{"))
        .filter(|rest| !rest.starts_with("verb=\"get\"") && !rest.starts_with("verb=\"list\""))
        .filter_map(|rest| {
            let (labels, count) = rest.rsplit_once(' ')?;
            Some((labels.to_owned(), count.parse().ok()?))
        })
        .collect()
}

impl Cluster {
    /// Touches the annotations of Deployment `namespace/name` (a change every plugin
    /// watching it sees) and waits until each of `plugins` of `operator` has run a pass
    /// since.
    pub async fn touch_deployment(
        &self,
        operator: &RunningOperator,
        namespace: &str,
        name: &str,
        plugins: &[&str],
    ) {
        let before: Vec<u64> = plugins.iter().map(|p| passes(operator, p)).collect();
        let touched = format!("{:?}", std::time::Instant::now());
        self.merge_patch(
            &ObjectRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: Some(namespace.into()),
                name: name.into(),
            },
            json!({"metadata": {"annotations": {"touched": touched}}}),
        )
        .await;
        for (plugin, before) in plugins.iter().zip(before) {
            counter_rises(
                &format!("a {plugin} pass"),
                std::time::Duration::from_secs(90),
                before,
                || passes(operator, plugin),
            )
            .await;
        }
    }
}

/// Waits until `read()` rises above `baseline` and returns the new value: the proof that a
/// trigger was processed, taken before asserting that it changed nothing. Panics with
/// `what` after `timeout`.
pub async fn counter_rises(
    what: &str,
    timeout: std::time::Duration,
    baseline: u64,
    read: impl Fn() -> u64,
) -> u64 {
    eventually(&format!("{what} to rise above {baseline}"), timeout, || {
        let now = read();
        async move { (now > baseline).then_some(now) }
    })
    .await
}

/// A plugin directory holding only the fixture reconciler.
pub fn fixture_plugin_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a plugin directory");
    std::fs::copy(fixture_wasm(), dir.path().join("fixture.wasm")).expect("the fixture is copied");
    dir
}

/// A plugin directory holding the shipped plugins (gitlabsecrets and secretgen).
pub fn shipped_plugin_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a plugin directory");
    for file in ["gitlabsecrets.wasm", "secretgen.wasm"] {
        std::fs::copy(
            wasm_operator::cli::shipped_plugin_dir().join(file),
            dir.path().join(file),
        )
        .expect("a shipped plugin is copied");
    }
    dir
}

/// The objects of a YAML stream, as JSON.
pub fn yaml_objects(text: &str) -> Vec<Value> {
    use serde::Deserialize as _;
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|document| Value::deserialize(document).expect("a YAML document"))
        .filter(|v| !v.is_null())
        .collect()
}

/// The GitLabSecrets CRD of `crds/`, as JSON.
pub fn gitlabsecrets_crd() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crds/apps.gitlab.com_gitlabsecrets.yaml"
    ))
    .expect("the GitLabSecrets CRD");
    yaml_objects(&text).remove(0)
}

/// What the chart renders with its defaults for release `demo` in namespace `gitlab`.
pub fn chart_defaults() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../guests/gitlabsecrets/testdata/chart-defaults.yaml"
    ))
    .expect("the chart defaults");
    yaml_objects(&text).remove(0)
}

/// Sends the host's logs to the test output when `RUST_LOG` is set (e.g. `RUST_LOG=info`).
pub fn init_logs() {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
    }
}

/// One plain HTTP/1.1 GET of `path` on `addr` (the operator's health endpoint): the status
/// code and the body.
pub async fn http_get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}
