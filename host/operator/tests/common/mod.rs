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

/// A port free on `ip` now (another process may take it before it is used).
pub fn free_port(ip: &str) -> u16 {
    std::net::TcpListener::bind((ip, 0))
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The response to a plain `GET path` at `addr` (status line, headers and body); `None`
/// when nothing answers.
pub fn http_get(addr: &str, path: &str) -> Option<String> {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .ok()?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .ok()?;
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    Some(String::from_utf8_lossy(&response).into_owned())
}

/// The documents of a multi-document YAML text, empty ones left out.
pub fn yaml_documents(text: &str) -> Vec<serde_json::Value> {
    use serde::Deserialize as _;
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|d| serde_json::Value::deserialize(d).expect("a YAML document"))
        .filter(|v| !v.is_null())
        .collect()
}
