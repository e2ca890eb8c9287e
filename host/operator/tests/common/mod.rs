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

/// Which cluster the tests of this directory run on: `WASM_OPERATOR_TEST_CLUSTER=real` for
/// the real control plane (`wasm-operator-controlplane`, binaries from
/// `controlplane/build.sh`), else the embedded API server.
pub const CLUSTER_ENV: &str = "WASM_OPERATOR_TEST_CLUSTER";

enum Server {
    Embedded(wasm_operator_apiserver::ApiServer),
    Real(wasm_operator_controlplane::ControlPlane),
}

/// The cluster a test runs on (see [`CLUSTER_ENV`]), with an admin client and a kubeconfig
/// file for it.
pub struct Cluster {
    server: Server,
    admin: kube::Client,
    pub kubeconfig: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// Starts the cluster [`CLUSTER_ENV`] names on `tokio`.
    pub fn start(tokio: &tokio::runtime::Runtime) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let real = match std::env::var(CLUSTER_ENV).as_deref() {
            Ok("real") => true,
            Ok("embedded") | Err(std::env::VarError::NotPresent) => false,
            Ok(other) => panic!("{CLUSTER_ENV}={other}: expected `real` or `embedded`"),
            Err(e) => panic!("{CLUSTER_ENV}: {e}"),
        };
        let (server, admin) = if real {
            let plane = tokio
                .block_on(wasm_operator_controlplane::ControlPlane::start(
                    wasm_operator_controlplane::Options::new(
                        wasm_operator_controlplane::default_bin_dir(),
                    ),
                ))
                .expect("the control plane starts");
            std::fs::copy(plane.kubeconfig(), &kubeconfig).expect("kubeconfig");
            let admin = tokio.block_on(plane.client()).expect("admin client");
            (Server::Real(plane), admin)
        } else {
            let server = tokio
                .block_on(wasm_operator_apiserver::ApiServer::start(
                    wasm_operator_apiserver::ServerConfig::default(),
                ))
                .expect("the API server starts");
            server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
            let admin = server.client().expect("admin client");
            (Server::Embedded(server), admin)
        };
        Cluster {
            server,
            admin,
            kubeconfig,
            _dir: dir,
        }
    }

    /// The API server's URL.
    pub fn url(&self) -> String {
        match &self.server {
            Server::Embedded(s) => s.url(),
            Server::Real(p) => p.url().to_owned(),
        }
    }

    /// The CA (PEM) the API server's certificate chains to.
    pub fn ca_pem(&self) -> String {
        match &self.server {
            Server::Embedded(s) => s.ca_pem().to_owned(),
            Server::Real(p) => p.ca_pem().to_owned(),
        }
    }

    /// A client with every permission.
    pub fn client(&self) -> kube::Client {
        self.admin.clone()
    }
}

/// The kubectl the tests drive: the one `controlplane/build.sh` builds from the control
/// plane's own module (its version is the real API server's).
pub fn kubectl_binary() -> std::path::PathBuf {
    wasm_operator_controlplane::default_bin_dir().join("kubectl")
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
