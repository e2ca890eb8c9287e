//! Shared helpers of the end-to-end tests: a runtime with a private artifact cache, the
//! built plugin files, and object builders.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use wasm_operator::cluster::memory::MemoryCluster;
use wasm_operator::cluster::{Caller, ClusterBackend};
use wasm_operator::{Runtime, RuntimeConfig};

/// A runtime whose artifact cache lives in `cache` (kept alive by the caller).
pub fn runtime_with_cache(cache: &tempfile::TempDir) -> Runtime {
    let config = RuntimeConfig {
        cache_dir: Some(cache.path().to_owned()),
        ..RuntimeConfig::default()
    };
    Runtime::new(config).expect("the runtime starts")
}

/// The test-only fixture reconciler, as built for wasm32-wasip2 by the host's build script.
pub fn fixture_wasm() -> PathBuf {
    wasm_operator::cli::test_plugin_dir().join("fixture-reconciler.wasm")
}

/// A ConfigMap with `data` and, when given, the fixture's behaviour annotation.
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

/// An empty in-memory cluster holding `objects`.
pub async fn cluster_with(objects: &[Value]) -> Arc<MemoryCluster> {
    let cluster = Arc::new(MemoryCluster::new());
    let setup = Caller {
        plugin: "test-setup".into(),
        field_manager: "test-setup".into(),
    };
    for object in objects {
        cluster
            .create(&setup, object.clone())
            .await
            .expect("the fixture object is created");
    }
    cluster
}
