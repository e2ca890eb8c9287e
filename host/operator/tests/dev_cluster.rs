//! `wasm-operator dev-cluster --data-dir`: every acknowledged write survives a `kill -9`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};

/// Starts the dev cluster on a free port; returns the process and its URL.
fn start(data_dir: &std::path::Path, kubeconfig: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
        .args(["dev-cluster", "--port", "0", "--data-dir"])
        .arg(data_dir)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .stdout(Stdio::piped())
        .spawn()
        .expect("dev-cluster starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the first line");
    let url = line
        .trim()
        .strip_prefix("serving the Kubernetes API on ")
        .expect("the serving line")
        .to_owned();
    (child, url)
}

fn client(url: &str) -> kube::Client {
    let config = kube::Config::new(url.parse().expect("url"));
    kube::Client::try_from(config).expect("client")
}

#[tokio::test]
async fn acknowledged_writes_survive_kill_9_and_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, kubeconfig) = (dir.path().join("data"), dir.path().join("kubeconfig"));
    let (mut first, url) = start(&data, &kubeconfig);
    assert!(
        std::fs::read_to_string(&kubeconfig)
            .expect("kubeconfig")
            .contains(&url)
    );
    let api: Api<ConfigMap> = Api::namespaced(client(&url), "default");
    for i in 0..20 {
        let cm: ConfigMap = serde_json::from_value(serde_json::json!({"metadata": {"name": format!("cm-{i}")}, "data": {"i": i.to_string()}}))
            .expect("cm");
        api.create(&PostParams::default(), &cm)
            .await
            .expect("acknowledged");
    }
    first.kill().expect("kill -9");
    first.wait().expect("reaped");

    let (mut second, url) = start(&data, &kubeconfig);
    let api: Api<ConfigMap> = Api::namespaced(client(&url), "default");
    for i in 0..20 {
        let cm = api.get(&format!("cm-{i}")).await.expect("survived");
        assert_eq!(
            cm.data.and_then(|d| d.get("i").cloned()),
            Some(i.to_string())
        );
    }
    second.kill().expect("kill");
    second.wait().expect("reaped");
}
