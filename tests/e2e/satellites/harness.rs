//! The cluster the satellite tests run on: the embedded API server with the workload,
//! mariadb-operator and OpenBao actors, the parent's and the satellite's CRDs, and the operator
//! running both shipped plugins with their webhooks.

use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator::operator::{OperatorConfig, RunningOperator};
use wasm_operator_apiserver::Actor;
use wasm_operator_e2e::webhooks::webhook_config;
use wasm_operator_e2e::{Cluster, cluster_with_actors};
use wasm_operator_sdk::ObjectRef;

/// Long enough for a cold start of the plugins and every actor on a busy machine.
pub(crate) const WAIT: Duration = Duration::from_secs(90);

/// The CRD `crds/{file}`.
fn crd(file: &str) -> Value {
    let path = format!("{}/../crds/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    wasm_operator_e2e::yaml_objects(&text).remove(0)
}

/// The object of `api_version` and `kind` named `name` in namespace `ns`.
pub(crate) fn in_ns(api_version: &str, kind: &str, name: &str) -> ObjectRef {
    ObjectRef {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: Some("ns".into()),
        name: name.into(),
    }
}

pub(crate) fn secret(namespace: &str, name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "Opaque", "stringData": data})
}

pub(crate) struct Harness {
    pub(crate) cluster: Cluster,
    pub(crate) operator: RunningOperator,
    _plugins: tempfile::TempDir,
}

impl Harness {
    /// The API server with the CRDs `crds`, the operator running the shipped `plugins`,
    /// their admission webhooks registered when `admission` says so (without, a test
    /// stands for objects that reached the cluster past admission).
    pub(crate) async fn start(plugins: &[&str], crds: &[&str], admission: bool) -> Self {
        wasm_operator_e2e::init_logs();
        let crds: Vec<Value> = crds.iter().map(|f| crd(f)).collect();
        let cluster =
            cluster_with_actors(&[Actor::Workloads, Actor::MariaDb, Actor::OpenBao], &crds).await;
        let dir = tempfile::tempdir().expect("plugins");
        for plugin in plugins {
            let file = format!("{plugin}.wasm");
            std::fs::copy(
                wasm_operator::cli::shipped_plugin_dir().join(&file),
                dir.path().join(&file),
            )
            .unwrap_or_else(|e| panic!("{file} is copied: {e}"));
        }
        let mut config = OperatorConfig::new(dir.path());
        config.watch_interval = Some(Duration::from_millis(100));
        config.controller.backoff.base = Duration::from_millis(50);
        config.controller.backoff.max = Duration::from_secs(2);
        config.webhook = admission.then(webhook_config);
        let operator = cluster
            .start_operator(wasm_operator_e2e::shared_cache(), config)
            .await;
        for plugin in plugins {
            assert!(operator.controller(plugin).is_some(), "{plugin} serves");
        }
        Self {
            cluster,
            operator,
            _plugins: dir,
        }
    }

    /// [`Cluster::touch_deployment`] in `ns`, by this harness's operator.
    pub(crate) async fn touch_deployment(&self, name: &str, plugins: &[&str]) {
        self.cluster
            .touch_deployment(&self.operator, "ns", name, plugins)
            .await;
    }

    /// API requests the operator made for its plugins that write, by `verb kind code`.
    pub(crate) fn writes(&self) -> std::collections::BTreeMap<String, u64> {
        wasm_operator_e2e::writes(&self.operator)
    }
}
