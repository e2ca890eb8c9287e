//! Plugins that try to reach past their limits — memory, CPU, body sizes, sockets, the text
//! they hand the host — against the real runtime, the real `.wasm` files (the hostile test
//! plugin, the fixture, secretgen) and the embedded API server.

mod cpu;
mod memory;
mod text_and_sockets;

use std::path::PathBuf;

use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator::controller::{Backoff, ControllerConfig};
use wasm_operator::operator::{OperatorConfig, RunningOperator};
use wasm_operator_e2e::Cluster;
use wasm_operator_sdk::Request;

/// The hostile test plugin (`tests/guests/hostile`), as the host's build script built it.
fn hostile_wasm() -> PathBuf {
    wasm_operator::cli::test_plugin_dir().join("hostile-reconciler.wasm")
}

/// The hostile plugin's behaviour annotation (`hostile_reconciler::BEHAVIOUR`).
const BEHAVIOUR: &str = "hostile.wasm-operator.dev/behaviour";
/// The hostile plugin's socket address annotation (`hostile_reconciler::ADDR`).
const ADDR: &str = "hostile.wasm-operator.dev/addr";

/// A ConfigMap of namespace `ns` asking the hostile plugin for `behaviour`.
fn hostile(name: &str, behaviour: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "annotations": {BEHAVIOUR: behaviour}},
        "data": {},
    })
}

/// An operator running the hostile plugin with a 60 s deadline (far beyond every wait).
async fn start_hostile(
    cluster: &Cluster,
    configure: impl FnOnce(&mut OperatorConfig),
) -> (RunningOperator, tempfile::TempDir, tempfile::TempDir) {
    let plugins = tempfile::tempdir().expect("plugins");
    std::fs::copy(hostile_wasm(), plugins.path().join("hostile.wasm")).expect("copied");
    std::fs::write(
        plugins.path().join("plugins.toml"),
        "[plugins.hostile]\ndeadline_ms = 60000\n",
    )
    .expect("plugins.toml");
    let cache = tempfile::tempdir().expect("cache");
    let mut config = OperatorConfig::new(plugins.path());
    config.controller = ControllerConfig {
        backoff: Backoff {
            base: Duration::from_secs(30),
            max: Duration::from_secs(30),
        },
        ..ControllerConfig::default()
    };
    configure(&mut config);
    let operator = cluster.start_operator(&cache, config).await;
    (operator, plugins, cache)
}

fn request(name: &str) -> Request {
    Request {
        namespace: Some("ns".into()),
        name: name.into(),
    }
}
