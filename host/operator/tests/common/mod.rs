//! What the test binaries that run `wasm-operator run` share (each uses some of it).
#![allow(dead_code)]

pub mod registry;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, PostParams};

/// Creates the namespace `ns` and in it the ConfigMap `a` (`x: "1"`), which the fixture
/// plugin echoes into `a-echo`; the ConfigMaps of `ns`.
pub async fn config_map_to_echo(client: kube::Client) -> Api<ConfigMap> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "ns"}})).expect("namespace");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("ns");
    let config_maps: Api<ConfigMap> = Api::namespaced(client, "ns");
    let cm: ConfigMap =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "a"}, "data": {"x": "1"}}))
            .expect("cm");
    config_maps
        .create(&PostParams::default(), &cm)
        .await
        .expect("cm");
    config_maps
}

/// An embedded API server on `tokio` and a kubeconfig file for it.
pub struct Cluster {
    pub server: wasm_operator_apiserver::ApiServer,
    pub kubeconfig: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Cluster {
    pub fn start(tokio: &tokio::runtime::Runtime) -> Self {
        let server = tokio
            .block_on(wasm_operator_apiserver::ApiServer::start(
                wasm_operator_apiserver::ServerConfig::default(),
            ))
            .expect("the API server starts");
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        Cluster {
            server,
            kubeconfig,
            _dir: dir,
        }
    }
}

/// A child process killed (and reaped) when dropped, on every path of a test.
pub struct Process(pub std::process::Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
