//! EnsureDeployment, EnsureService, RunJob and EnsureCronJob in the real host.

use serde_json::{Value, json};
use wasm_operator_runtime::backend::ClusterBackend;

use crate::{Harness, in_ns, true_condition};

fn deployment(name: &str) -> wasm_operator_sdk::ObjectRef {
    in_ns("apps/v1", "Deployment", name)
}

fn job(name: &str) -> wasm_operator_sdk::ObjectRef {
    in_ns("batch/v1", "Job", name)
}

const POD_SPEC_HASH: &str = "cobaltcore.c5c3.io/pod-spec-hash";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_deployment_creates_an_owned_deployment_ready_once_available() {
    let h = Harness::start().await;
    let scenario = h
        .scenario(
            "web",
            "deployment",
            json!({"image": "registry.invalid/web:1.0"}),
        )
        .await;
    assert_eq!(h.first_outcome("web").await, json!({"ready": false}));
    let stored = h.must(&deployment("web")).await;
    let owner = &stored["metadata"]["ownerReferences"][0];
    assert_eq!(owner["uid"], scenario["metadata"]["uid"]);
    assert_eq!(owner["controller"], true);
    assert_eq!(
        stored["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.invalid/web:1.0"
    );
    h.set_status(
        &deployment("web"),
        json!({"replicas": 1, "readyReplicas": 1, "availableReplicas": 1,
            "conditions": true_condition("Available")}),
    )
    .await;
    // The Deployment's status change maps to its owner and starts a pass.
    h.outcome("web", 1, |o| o["ready"] == true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_converged_ensure_deployment_makes_no_write() {
    let h = Harness::start().await;
    h.scenario("web", "deployment", json!({})).await;
    h.first_outcome("web").await;
    h.assert_converged_pass_writes_nothing("web", &[("deployments", deployment("web"))])
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_defaulted_deployment_fields_the_builder_omits_survive_an_update() {
    let h = Harness::start().await;
    h.scenario(
        "web",
        "deployment",
        json!({"image": "registry.invalid/web:1.0"}),
    )
    .await;
    h.first_outcome("web").await;
    let created = h.must(&deployment("web")).await;
    assert_eq!(created["spec"]["progressDeadlineSeconds"], 600);
    assert_eq!(created["spec"]["revisionHistoryLimit"], 10);
    // Another field manager (an HPA) scales it; the builder leaves replicas unset.
    h.cluster
        .backend
        .patch(
            &crate::setup(),
            &deployment("web"),
            &wasm_operator_sdk::Patch::Merge(json!({"spec": {"replicas": 3}})),
            None,
        )
        .await
        .expect("scaled");
    let generation = h
        .patch_spec(
            "web",
            json!({"params": {"image": "registry.invalid/web:2.0"}}),
        )
        .await;
    h.outcome("web", generation, |_| true).await;
    let updated = h.must(&deployment("web")).await;
    let container = &updated["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["image"], "registry.invalid/web:2.0",
        "the update landed"
    );
    assert_eq!(container["imagePullPolicy"], "IfNotPresent");
    assert_eq!(container["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(updated["spec"]["replicas"], 3, "the HPA's replicas survive");
    let owners: Vec<&Value> = updated["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .filter(|e| e.pointer("/fieldsV1/f:spec/f:replicas").is_some())
        .collect();
    assert!(
        !owners.is_empty() && owners.iter().all(|e| e["operation"] == "Update"),
        "only the scaler owns replicas, the operator's apply left them out: {owners:?}"
    );
    assert_eq!(updated["spec"]["progressDeadlineSeconds"], 600);
    assert_eq!(updated["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(updated["spec"]["strategy"], created["spec"]["strategy"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_service_keeps_the_assigned_cluster_ip() {
    let h = Harness::start().await;
    let svc = in_ns("v1", "Service", "api");
    h.scenario("api", "service", json!({})).await;
    assert_eq!(h.first_outcome("api").await, json!({"applied": true}));
    let created = h.must(&svc).await;
    let ip = created["spec"]["clusterIP"].clone();
    assert!(ip.as_str().is_some_and(|ip| !ip.is_empty()), "{created}");
    let generation = h.patch_spec("api", json!({"params": {"port": 8080}})).await;
    h.outcome("api", generation, |_| true).await;
    let updated = h.must(&svc).await;
    assert_eq!(
        updated["spec"]["ports"][0]["port"], 8080,
        "the update landed"
    );
    assert_eq!(updated["spec"]["clusterIP"], ip);
    assert_eq!(updated["spec"]["clusterIPs"], created["spec"]["clusterIPs"]);
    h.assert_converged_pass_writes_nothing("api", &[("services", svc.clone())])
        .await;
    assert_eq!(h.must(&svc).await["spec"]["clusterIP"], ip);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_service_refuses_a_cluster_ip_other_than_the_assigned_one() {
    let h = Harness::start().await;
    let svc = in_ns("v1", "Service", "api");
    h.scenario("api", "service", json!({})).await;
    h.first_outcome("api").await;
    let ip = h.must(&svc).await["spec"]["clusterIP"].clone();
    let generation = h
        .patch_spec("api", json!({"params": {"clusterIP": "10.96.200.200"}}))
        .await;
    let outcome = h
        .outcome("api", generation, |o| o.get("error").is_some())
        .await;
    let error = outcome["error"].as_str().unwrap_or_default();
    assert!(error.contains("spec.clusterIP is immutable"), "{error}");
    assert_eq!(h.must(&svc).await["spec"]["clusterIP"], ip);
}

async fn job_key(h: &Harness) -> (Value, Value) {
    let stored = h.must(&job("db-sync")).await;
    (
        stored["metadata"]["uid"].clone(),
        stored["metadata"]["annotations"][POD_SPEC_HASH].clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_job_creates_the_job_once_and_reports_its_completion() {
    let h = Harness::start().await;
    let scenario = h
        .scenario("db-sync", "job", json!({"args": ["sync", "--all"]}))
        .await;
    assert_eq!(h.first_outcome("db-sync").await, json!({"complete": false}));
    let stored = h.must(&job("db-sync")).await;
    assert_eq!(
        stored["metadata"]["ownerReferences"][0]["uid"],
        scenario["metadata"]["uid"]
    );
    let (uid, key) = job_key(&h).await;
    assert!(key.as_str().is_some_and(|k| k.len() == 64), "{key}");
    h.set_status(
        &job("db-sync"),
        json!({"succeeded": 1, "conditions": true_condition("Complete")}),
    )
    .await;
    h.outcome("db-sync", 1, |o| o["complete"] == true).await;
    h.settle().await;
    let before = h.cluster.counts();
    let generation = h.rerun("db-sync").await;
    h.outcome("db-sync", generation, |o| o["complete"] == true)
        .await;
    let since = h.cluster.counts().since(&before);
    assert_eq!(since.get("create", "jobs") + since.get("delete", "jobs"), 0);
    assert_eq!(
        job_key(&h).await,
        (uid, key),
        "the complete Job was not re-run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_job_re_runs_after_the_pod_template_changes() {
    let h = Harness::start().await;
    h.scenario("db-sync", "job", json!({"args": ["sync"]}))
        .await;
    h.first_outcome("db-sync").await;
    let (uid, key) = job_key(&h).await;
    h.set_status(
        &job("db-sync"),
        json!({"succeeded": 1, "conditions": true_condition("Complete")}),
    )
    .await;
    h.outcome("db-sync", 1, |o| o["complete"] == true).await;
    let generation = h
        .patch_spec("db-sync", json!({"params": {"args": ["sync", "--v2"]}}))
        .await;
    assert_eq!(
        h.outcome("db-sync", generation, |_| true).await,
        json!({"complete": false})
    );
    let (new_uid, new_key) = job_key(&h).await;
    assert_ne!(new_uid, uid, "the Job was deleted and created again");
    assert_ne!(new_key, key);
    let rerun = h.must(&job("db-sync")).await;
    assert_eq!(
        rerun["spec"]["template"]["spec"]["containers"][0]["args"],
        json!(["sync", "--v2"])
    );
    assert!(
        rerun
            .get("status")
            .is_none_or(|s| s.get("conditions").is_none())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_job_reports_a_failed_job_until_its_pod_template_changes() {
    let h = Harness::start().await;
    h.scenario("db-sync", "job", json!({"args": ["sync"]}))
        .await;
    h.first_outcome("db-sync").await;
    let (uid, _) = job_key(&h).await;
    h.set_status(
        &job("db-sync"),
        json!({"failed": 1, "conditions": true_condition("Failed")}),
    )
    .await;
    let outcome = h.outcome("db-sync", 1, |o| o.get("error").is_some()).await;
    assert!(
        outcome["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("job failed"),
        "{outcome}"
    );
    assert_eq!(
        job_key(&h).await.0,
        uid,
        "a failed Job is not re-run as it is"
    );
    let generation = h
        .patch_spec("db-sync", json!({"params": {"args": ["sync", "--fixed"]}}))
        .await;
    assert_eq!(
        h.outcome("db-sync", generation, |_| true).await,
        json!({"complete": false})
    );
    assert_ne!(job_key(&h).await.0, uid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_cron_job_applies_the_schedule_and_a_converged_one_makes_no_write() {
    let h = Harness::start().await;
    let cron = in_ns("batch/v1", "CronJob", "rotate");
    let scenario = h
        .scenario("rotate", "cron-job", json!({"schedule": "0 * * * *"}))
        .await;
    assert_eq!(h.first_outcome("rotate").await, json!({"applied": true}));
    let stored = h.must(&cron).await;
    assert_eq!(stored["spec"]["schedule"], "0 * * * *");
    assert_eq!(
        stored["metadata"]["ownerReferences"][0]["uid"],
        scenario["metadata"]["uid"]
    );
    h.assert_converged_pass_writes_nothing("rotate", &[("cronjobs", cron.clone())])
        .await;
    let generation = h
        .patch_spec("rotate", json!({"params": {"schedule": "30 2 * * *"}}))
        .await;
    h.outcome("rotate", generation, |_| true).await;
    assert_eq!(h.must(&cron).await["spec"]["schedule"], "30 2 * * *");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_deployment_recreates_a_deployment_whose_selector_changed() {
    let h = Harness::start().await;
    h.scenario("web", "deployment", json!({})).await;
    h.first_outcome("web").await;
    let uid = h.must(&deployment("web")).await["metadata"]["uid"].clone();
    let generation = h
        .patch_spec(
            "web",
            json!({"params": {"labels": {"app": "web", "track": "v2"}}}),
        )
        .await;
    // A pass that starts before the operator's cache holds the first Deployment applies
    // the new selector to it, which the server refuses (the selector is immutable): that
    // outcome is an error, and the Deployment's own watch event brings the pass that
    // recreates it.
    h.outcome("web", generation, |o| o.get("error").is_none())
        .await;
    let recreated = h.must(&deployment("web")).await;
    assert_ne!(
        recreated["metadata"]["uid"], uid,
        "deleted and created again"
    );
    assert_eq!(
        recreated["spec"]["selector"]["matchLabels"],
        json!({"app": "web", "track": "v2"})
    );
}
