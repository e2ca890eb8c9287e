//! `wasm-operator dev-cluster`: with `--data-dir` every acknowledged write survives a
//! `kill -9`; with `--actors` the named cluster actors run and it says which.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};

/// Starts the dev cluster on a free port with `args`; returns the process, its URL and the
/// line naming the actors.
fn start_with(kubeconfig: &std::path::Path, args: &[&str]) -> (Child, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
        .args(["dev-cluster", "--port", "0", "--kubeconfig"])
        .arg(kubeconfig)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("dev-cluster starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = |what: &str| {
        let mut line = String::new();
        stdout.read_line(&mut line).expect(what);
        line.trim().to_owned()
    };
    let url = line("the serving line")
        .strip_prefix("serving the Kubernetes API on ")
        .expect("the serving line")
        .to_owned();
    let actors = line("the actors line");
    (child, url, actors)
}

/// Starts the dev cluster on a free port over `data_dir`; returns the process and its URL.
fn start(data_dir: &std::path::Path, kubeconfig: &std::path::Path) -> (Child, String) {
    let data_dir = data_dir.to_str().expect("a UTF-8 path");
    let (child, url, _) = start_with(kubeconfig, &["--data-dir", data_dir]);
    (child, url)
}

/// The value of `field` in the kubeconfig dev-cluster wrote.
fn kubeconfig_field(kubeconfig: &std::path::Path, field: &str) -> String {
    std::fs::read_to_string(kubeconfig)
        .expect("kubeconfig")
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix(field)?
                .strip_prefix(": ")
                .map(str::to_owned)
        })
        .unwrap_or_else(|| panic!("the kubeconfig carries {field}"))
}

/// A client of `url` as the kubeconfig dev-cluster wrote says: its CA and its token.
async fn client(url: &str, kubeconfig: &std::path::Path) -> kube::Client {
    let file = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
    let config =
        kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
            .await
            .expect("a config");
    assert_eq!(config.cluster_url.to_string().trim_end_matches('/'), url);
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
    let api: Api<ConfigMap> = Api::namespaced(client(&url, &kubeconfig).await, "default");
    for i in 0..20 {
        let cm: ConfigMap = serde_json::from_value(serde_json::json!({"metadata": {"name": format!("cm-{i}")}, "data": {"i": i.to_string()}}))
            .expect("cm");
        api.create(&PostParams::default(), &cm)
            .await
            .expect("acknowledged");
    }
    first.kill().expect("kill -9");
    first.wait().expect("reaped");
    let credentials =
        ["token", "certificate-authority-data"].map(|f| kubeconfig_field(&kubeconfig, f));

    let (mut second, url) = start(&data, &kubeconfig);
    assert_eq!(
        ["token", "certificate-authority-data"].map(|f| kubeconfig_field(&kubeconfig, f)),
        credentials,
        "the admin token and the serving CA are kept in the data directory"
    );
    let api: Api<ConfigMap> = Api::namespaced(client(&url, &kubeconfig).await, "default");
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

#[tokio::test]
async fn dev_cluster_runs_the_actors_it_is_given_and_says_which() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let (mut none, _, line) = start_with(&kubeconfig, &[]);
    assert_eq!(line, "actors: none (--actors runs them)");
    none.kill().expect("kill");
    none.wait().expect("reaped");

    let (mut some, url, line) = start_with(&kubeconfig, &["--actors", "mariadb,cert-manager"]);
    assert_eq!(line, "actors: cert-manager, mariadb", "in start order");
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client(&url, &kubeconfig).await);
    for name in ["certificates.cert-manager.io", "databases.k8s.mariadb.com"] {
        crds.get(name)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert!(
        crds.get_opt("externalsecrets.external-secrets.io")
            .await
            .expect("a lookup")
            .is_none(),
        "an actor not named installs nothing"
    );
    some.kill().expect("kill");
    some.wait().expect("reaped");

    let (mut all, _, line) = start_with(&kubeconfig, &["--actors"]);
    assert_eq!(
        line,
        "actors: workloads, cert-manager, mariadb, external-secrets, gateway, keystone, openbao"
    );
    all.kill().expect("kill");
    all.wait().expect("reaped");
}

#[test]
fn dev_cluster_refuses_an_actor_it_does_not_know_naming_the_known_ones() {
    let output = Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
        .args(["dev-cluster", "--port", "0", "--actors", "workloads,etcd"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(r#"no actor is named "etcd" (actors: workloads, cert-manager,"#),
        "{stderr}"
    );
}
