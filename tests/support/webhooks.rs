//! The host's admission webhooks, wired to the embedded API server the way a cluster admin
//! wires them, and kubectl against that server.

use std::path::Path;

use serde_json::json;
use wasm_operator::operator::RunningOperator;
use wasm_operator::webhook::{CertSource, WebhookConfig};
use wasm_operator_runtime::backend::ClusterBackend as _;

use crate::{Cluster, setup};

/// Webhooks on a free loopback port, with the certificate managed in
/// `default/wasm-operator-webhook` for the Service `default/wasm-operator`.
pub fn webhook_config() -> WebhookConfig {
    WebhookConfig {
        addr: "127.0.0.1:0".parse().expect("an address"),
        cert: CertSource::Managed {
            secret_namespace: "default".into(),
            secret_name: "wasm-operator-webhook".into(),
            service_namespace: "default".into(),
            service_name: "wasm-operator".into(),
        },
    }
}

/// Registers the webhooks of the plugins `plugins` (files the operator runs) as
/// `wasm-operator webhooks` prints them: the Service `default/wasm-operator` (port 443,
/// its EndpointSlice pointing at the host's webhook port) and `ca_bundle` as the
/// configurations' `caBundle`.
pub async fn register_webhooks(
    cluster: &Cluster,
    operator: &RunningOperator,
    plugins: &[&Path],
    ca_bundle: Option<&str>,
) {
    let port = operator.webhook_addr().expect("serving").port();
    let objects = [
        json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "wasm-operator", "namespace": "default"},
            "spec": {"ports": [{"name": "webhook", "port": 443, "targetPort": port}]}}),
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "wasm-operator-1", "namespace": "default",
                "labels": {"kubernetes.io/service-name": "wasm-operator"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
            "ports": [{"name": "webhook", "port": port, "protocol": "TCP"}]}),
    ];
    for object in objects {
        cluster
            .backend
            .create(&setup(), object)
            .await
            .expect("created");
    }
    let runtime = crate::runtime_with_cache(crate::shared_cache());
    let mut descriptions = Vec::new();
    for plugin in plugins {
        let loaded = runtime.load(plugin, None).await.expect("the plugin loads");
        descriptions.push(loaded.description().cloned().expect("described"));
    }
    let endpoint = wasm_operator::webhook::configurations::Endpoint::Service {
        namespace: "default".into(),
        name: "wasm-operator".into(),
        port: 443,
    };
    let described: Vec<_> = descriptions.iter().collect();
    for configuration in wasm_operator::webhook::configurations::configurations(
        &described,
        &endpoint,
        ca_bundle,
        "wasm-operator",
    ) {
        cluster
            .backend
            .create(&setup(), configuration)
            .await
            .expect("a webhook configuration is created");
    }
}

/// kubectl against `cluster`'s API server, `stdin` piped in: (success, stdout, stderr).
pub async fn kubectl(cluster: &Cluster, args: &[&str], stdin: &str) -> (bool, String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    cluster
        .server
        .write_kubeconfig(&kubeconfig)
        .expect("a kubeconfig");
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        use std::io::Write as _;
        let mut child = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(&args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl runs (.ci/run installs Debian's kubernetes-client)");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("written");
        let output = child.wait_with_output().expect("kubectl finishes");
        drop(dir);
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    })
    .await
    .expect("kubectl's thread")
}
