//! The workloads actor: Deployment status and stepped rollouts, Jobs' pods and outcomes,
//! HPA replicas, each observed through the API (and kubectl) as a user would.

use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
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

#[tokio::test]
async fn a_new_deployment_becomes_available_with_the_controller_managers_status() {
    let (_server, client) = start().await;
    let api: Api<Deployment> = Api::default_namespaced(client);
    create_deployment(&api, &deployment("api", 2, "keystone:1")).await;
    let d = eventually(
        "the Deployment to be available",
        || async { api.get("api").await.expect("get") },
        |d| rolled_out(d, 2),
    )
    .await;
    let s = status(&d);
    assert_eq!(s["observedGeneration"], 1);
    let available = condition(&s, "Available");
    assert_eq!(
        (&available["status"], &available["reason"]),
        (&json!("True"), &json!("MinimumReplicasAvailable"))
    );
    assert_eq!(condition(&s, "Progressing")["status"], "True");
    let managers: Vec<_> = d
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|m| {
            (
                m.manager.clone(),
                m.operation.clone(),
                m.subresource.clone(),
            )
        })
        .collect();
    assert!(
        managers.contains(&(
            Some("kube-controller-manager".into()),
            Some("Update".into()),
            Some("status".into())
        )),
        "the status is written by kube-controller-manager: {managers:?}"
    );
}

#[tokio::test]
async fn a_changed_pod_template_rolls_out_one_replica_per_step() {
    let (_server, client) = start().await;
    let api: Api<Deployment> = Api::default_namespaced(client);
    create_deployment(&api, &deployment("api", 3, "keystone:1")).await;
    eventually(
        "the first rollout",
        || async { api.get("api").await.expect("get") },
        |d| rolled_out(d, 3),
    )
    .await;
    // Every status write is a watch event: collect them while the new template rolls out.
    let events = watcher(api.clone(), watcher::Config::default())
        .applied_objects()
        .boxed();
    set_image(&api, "api", "keystone:2").await;
    let seen: Vec<Deployment> = tokio::time::timeout(
        Duration::from_secs(60),
        events
            .try_take_while(|d| {
                std::future::ready(Ok(!(d.metadata.generation == Some(2) && rolled_out(d, 3))))
            })
            .try_collect(),
    )
    .await
    .expect("the rollout finishes")
    .expect("the watch runs");
    let steps: Vec<(i64, i64, i64)> = seen
        .iter()
        .filter(|d| d.metadata.generation == Some(2))
        .map(status)
        .filter(|s| s["observedGeneration"] == 2)
        .map(|s| {
            let n = |f: &str| s[f].as_i64().unwrap_or(0);
            (n("replicas"), n("updatedReplicas"), n("readyReplicas"))
        })
        .collect();
    // One surge pod at a time: (replicas, updated, ready).
    let expected = [(4, 1, 3), (3, 1, 3), (4, 2, 3), (3, 2, 3), (4, 3, 3)];
    let mut dedup = steps.clone();
    dedup.dedup();
    assert_eq!(dedup, expected, "the rollout's steps as watched");
}

#[tokio::test]
async fn a_held_rollout_stays_part_way_until_the_hold_is_removed() {
    let (_server, client) = start().await;
    let api: Api<Deployment> = Api::default_namespaced(client);
    create_deployment(&api, &deployment("api", 2, "keystone:1")).await;
    eventually(
        "the first rollout",
        || async { api.get("api").await.expect("get") },
        |d| rolled_out(d, 2),
    )
    .await;
    let hold =
        json!({"metadata": {"annotations": {"actors.wasm-operator.dev/hold-rollout": "true"}}});
    api.patch("api", &PatchParams::default(), &Patch::Merge(hold))
        .await
        .expect("the hold is set");
    set_image(&api, "api", "keystone:2").await;
    let part_way = |d: &Deployment| {
        let s = status(d);
        s["observedGeneration"] == 2 && s["updatedReplicas"] == 1 && s["replicas"] == 3
    };
    eventually(
        "the rollout to start",
        || async { api.get("api").await.expect("get") },
        part_way,
    )
    .await;
    // Another Deployment rolls all the way out meanwhile: the actor kept stepping.
    create_deployment(&api, &deployment("other", 2, "keystone:1")).await;
    eventually(
        "the other rollout",
        || async { api.get("other").await.expect("get") },
        |d| rolled_out(d, 2),
    )
    .await;
    set_image(&api, "other", "keystone:2").await;
    eventually(
        "the other rollout",
        || async { api.get("other").await.expect("get") },
        |d| d.metadata.generation == Some(2) && rolled_out(d, 2),
    )
    .await;
    let held = api.get("api").await.expect("get");
    assert!(
        part_way(&held),
        "the held rollout did not go on: {:#?}",
        held.status
    );
    let progressing = condition(&status(&held), "Progressing").clone();
    assert_eq!(progressing["reason"], "ReplicaSetUpdated");
    let release =
        json!({"metadata": {"annotations": {"actors.wasm-operator.dev/hold-rollout": null}}});
    api.patch("api", &PatchParams::default(), &Patch::Merge(release))
        .await
        .expect("the hold is removed");
    eventually(
        "the released rollout",
        || async { api.get("api").await.expect("get") },
        |d| rolled_out(d, 2),
    )
    .await;
}

fn job(name: &str, annotations: Value, backoff_limit: i32) -> Job {
    serde_json::from_value(json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"backoffLimit": backoff_limit, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "validator", "image": "keystone:1"}]}}}}))
    .expect("a Job")
}

fn job_condition(j: &Job, kind: &str) -> Option<(String, String)> {
    j.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .map(|c| (c.status.clone(), c.reason.clone().unwrap_or_default()))
}

async fn pods_of(client: &kube::Client, job: &str) -> Vec<Pod> {
    Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels(&format!("job-name={job}")))
        .await
        .expect("pods list")
        .items
}

#[tokio::test]
async fn a_job_runs_a_labelled_pod_and_completes() {
    let (_server, client) = start().await;
    let api: Api<Job> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &job("bootstrap", json!({}), 6))
        .await
        .expect("created");
    let done = eventually(
        "the Job to complete",
        || async { api.get("bootstrap").await.expect("get") },
        |j| job_condition(j, "Complete").is_some(),
    )
    .await;
    let status = done.status.clone().expect("a status");
    let types: Vec<_> = status
        .conditions
        .iter()
        .flatten()
        .map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_deref()))
        .collect();
    assert_eq!(
        types,
        [
            ("SuccessCriteriaMet", "True", Some("CompletionsReached")),
            ("Complete", "True", Some("CompletionsReached"))
        ]
    );
    assert_eq!(status.succeeded, Some(1));
    assert_eq!(status.failed, None);
    assert!(status.completion_time.is_some() && status.start_time.is_some());
    let pods = pods_of(&client, "bootstrap").await;
    assert_eq!(pods.len(), 1, "one pod");
    let pod = &pods[0];
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let uid = done.metadata.uid.clone().expect("a uid");
    assert_eq!(
        labels
            .get("batch.kubernetes.io/job-name")
            .map(String::as_str),
        Some("bootstrap")
    );
    assert_eq!(labels.get("controller-uid"), Some(&uid));
    let owner = &pod.metadata.owner_references.as_ref().expect("owned")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
        ("Job", uid.as_str(), Some(true))
    );
    assert_eq!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded")
    );
}

#[tokio::test]
async fn a_job_told_to_fail_fails_after_backoff_limit_plus_one_pods_with_their_termination_message()
{
    let (_server, client) = start().await;
    let api: Api<Job> = Api::default_namespaced(client.clone());
    let annotations = json!({"actors.wasm-operator.dev/job-outcome": "Fail",
        "actors.wasm-operator.dev/job-failure-message": "policy.yaml: rule admin_required is undefined"});
    api.create(
        &PostParams::default(),
        &job("policy-validation", annotations, 2),
    )
    .await
    .expect("created");
    let failed = eventually(
        "the Job to fail",
        || async { api.get("policy-validation").await.expect("get") },
        |j| job_condition(j, "Failed").is_some(),
    )
    .await;
    let status = failed.status.clone().expect("a status");
    assert_eq!(status.failed, Some(3), "backoffLimit 2: three pods failed");
    assert_eq!(
        job_condition(&failed, "FailureTarget"),
        Some(("True".into(), "BackoffLimitExceeded".into()))
    );
    assert_eq!(
        job_condition(&failed, "Failed"),
        Some(("True".into(), "BackoffLimitExceeded".into()))
    );
    assert_eq!(job_condition(&failed, "Complete"), None);
    let pods = pods_of(&client, "policy-validation").await;
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        let s = pod.status.as_ref().expect("a pod status");
        assert_eq!(s.phase.as_deref(), Some("Failed"));
        let terminated = s.container_statuses.as_ref().expect("container statuses")[0]
            .state
            .as_ref()
            .and_then(|st| st.terminated.as_ref())
            .expect("terminated");
        assert_eq!(terminated.exit_code, 1);
        assert_eq!(
            terminated.message.as_deref(),
            Some("policy.yaml: rule admin_required is undefined")
        );
    }
}

#[tokio::test]
async fn a_job_told_to_run_stays_active_until_told_otherwise() {
    let (_server, client) = start().await;
    let api: Api<Job> = Api::default_namespaced(client.clone());
    let run = json!({"actors.wasm-operator.dev/job-outcome": "Run"});
    api.create(&PostParams::default(), &job("db-sync", run, 6))
        .await
        .expect("created");
    let active = |j: &Job| {
        j.status
            .as_ref()
            .is_some_and(|s| s.active == Some(1) && s.ready == Some(1))
    };
    eventually(
        "the Job to run",
        || async { api.get("db-sync").await.expect("get") },
        active,
    )
    .await;
    // A second Job completes meanwhile: the actor kept stepping Jobs.
    api.create(&PostParams::default(), &job("other", json!({}), 6))
        .await
        .expect("created");
    eventually(
        "the other Job",
        || async { api.get("other").await.expect("get") },
        |j| job_condition(j, "Complete").is_some(),
    )
    .await;
    let still = api.get("db-sync").await.expect("get");
    assert!(
        active(&still) && job_condition(&still, "Complete").is_none(),
        "still running: {:#?}",
        still.status
    );
    let pods = pods_of(&client, "db-sync").await;
    assert_eq!(pods.len(), 1);
    assert_eq!(
        pods[0].status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Running")
    );
    let succeed =
        json!({"metadata": {"annotations": {"actors.wasm-operator.dev/job-outcome": "Succeed"}}});
    api.patch("db-sync", &PatchParams::default(), &Patch::Merge(succeed))
        .await
        .expect("annotated");
    eventually(
        "the Job to complete",
        || async { api.get("db-sync").await.expect("get") },
        |j| job_condition(j, "Complete").is_some(),
    )
    .await;
}

#[tokio::test]
async fn an_hpa_reports_its_targets_replicas_clamped_to_its_bounds() {
    let (_server, client) = start().await;
    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    create_deployment(&deployments, &deployment("api", 1, "keystone:1")).await;
    let hpas: Api<HorizontalPodAutoscaler> = Api::default_namespaced(client);
    let hpa = |name: &str, target: &str| -> HorizontalPodAutoscaler {
        serde_json::from_value(json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name}, "spec": {"minReplicas": 2, "maxReplicas": 5,
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target}}}))
        .expect("an HPA")
    };
    hpas.create(&PostParams::default(), &hpa("api", "api"))
        .await
        .expect("created");
    hpas.create(&PostParams::default(), &hpa("orphan", "missing"))
        .await
        .expect("created");
    let api = eventually(
        "the HPA status",
        || async { hpas.get("api").await.expect("get") },
        |h| {
            h.status
                .as_ref()
                .is_some_and(|s| s.current_replicas == Some(1))
        },
    )
    .await;
    let s = api.status.expect("a status");
    assert_eq!(s.desired_replicas, 2, "1 replica clamped to minReplicas 2");
    let limited = s
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "ScalingLimited")
        .expect("ScalingLimited");
    assert_eq!(
        (limited.status.as_str(), limited.reason.as_deref()),
        ("True", Some("TooFewReplicas"))
    );
    let orphan = eventually(
        "the orphan HPA status",
        || async { hpas.get("orphan").await.expect("get") },
        |h| h.status.is_some(),
    )
    .await;
    let able = orphan.status.and_then(|s| s.conditions).unwrap_or_default();
    let able = able
        .iter()
        .find(|c| c.type_ == "AbleToScale")
        .expect("AbleToScale");
    assert_eq!(
        (able.status.as_str(), able.reason.as_deref()),
        ("False", Some("FailedGetScale"))
    );
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
