//! The workloads actor: Deployment status and stepped rollouts, Jobs' pods and outcomes,
//! HPA replicas, each observed through the API (and kubectl) as a user would. The helpers
//! live here; `deployments`, `jobs` and `hpa` hold the tests of each kind.

mod deployments;
mod hpa;
mod jobs;

use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde_json::{Value, json};
use wasm_operator_apiserver::{Actor, ApiServer, ServerConfig};

/// A server running only the workloads actor, and a client.
async fn start() -> (ApiServer, kube::Client) {
    let server = ApiServer::start(ServerConfig {
        actors: vec![Actor::Workloads],
        ..ServerConfig::default()
    })
    .await
    .expect("the server starts with the workloads actor");
    let client = server.client().expect("a client");
    (server, client)
}

/// Polls `read` until `done` holds of what it returns (60 s at most).
async fn eventually<T, F, Fut>(what: &str, mut read: F, done: impl Fn(&T) -> bool) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
    T: std::fmt::Debug,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let value = read().await;
        if done(&value) {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}; last: {value:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn deployment(name: &str, replicas: i32, image: &str) -> Deployment {
    serde_json::from_value(
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]}}}}),
    )
    .expect("a Deployment")
}

fn status(d: &Deployment) -> Value {
    serde_json::to_value(&d.status).expect("a status")
}

fn condition<'a>(status: &'a Value, kind: &str) -> &'a Value {
    status["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
        .unwrap_or(&Value::Null)
}

/// Whether `d` reports `n` replicas all updated, ready and available for its generation.
fn rolled_out(d: &Deployment, n: i64) -> bool {
    let s = status(d);
    s["observedGeneration"].as_i64() == d.metadata.generation
        && [
            s["replicas"].as_i64(),
            s["updatedReplicas"].as_i64(),
            s["readyReplicas"].as_i64(),
            s["availableReplicas"].as_i64(),
        ]
        .iter()
        .all(|v| *v == Some(n))
        && condition(&s, "Progressing")["reason"] == "NewReplicaSetAvailable"
}

async fn create_deployment(api: &Api<Deployment>, d: &Deployment) {
    api.create(&PostParams::default(), d)
        .await
        .expect("the Deployment is created");
}

async fn set_image(api: &Api<Deployment>, name: &str, image: &str) {
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}});
    api.patch(name, &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .expect("the template changes");
}

fn job(name: &str, annotations: Value, backoff_limit: i32) -> Job {
    serde_json::from_value(json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"backoffLimit": backoff_limit, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "validator", "image": "keystone:1"}]}}}}))
    .expect("a Job")
}

#[tokio::test]
async fn kubectl_rollout_status_and_wait_see_what_a_user_would() {
    let (server, client) = start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    create_deployment(&api, &deployment("api", 2, "keystone:1")).await;
    Api::<Job>::default_namespaced(client)
        .create(&PostParams::default(), &job("bootstrap", json!({}), 6))
        .await
        .expect("the Job");
    let kubectl = |args: &'static [&'static str]| {
        tokio::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .output()
    };
    let rollout = kubectl(&["rollout", "status", "deployment/api", "--timeout=60s"])
        .await
        .expect("kubectl runs");
    let text = String::from_utf8_lossy(&rollout.stdout);
    assert!(rollout.status.success(), "{rollout:?}");
    assert!(text.contains("successfully rolled out"), "{text}");
    let wait = kubectl(&[
        "wait",
        "--for=condition=Complete",
        "job/bootstrap",
        "--timeout=60s",
    ])
    .await
    .expect("kubectl runs");
    assert!(wait.status.success(), "{wait:?}");
    assert!(
        String::from_utf8_lossy(&wait.stdout).contains("condition met"),
        "{wait:?}"
    );
}
