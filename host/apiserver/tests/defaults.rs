//! kube-apiserver's defaulting of Deployments, Jobs and CronJobs (and their pod templates),
//! done by the server on every write path, with no actor running.

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use crate::support::server;

fn job(name: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "run", "image": "busybox:1.36", "command": ["true"]}]}}}})
}

async fn apply(client: &kube::Client, path: &str, body: &Value) -> Value {
    let raw = crate::support::raw(
        client,
        "PATCH",
        &format!("{path}?fieldManager=tester&force=true"),
        "application/apply-patch+yaml",
        Some(body.clone()),
    )
    .await;
    assert!(
        matches!(raw.status.as_u16(), 200 | 201),
        "apply {path}: {} {}",
        raw.status,
        raw.body
    );
    raw.body
}

#[tokio::test]
async fn a_job_gets_the_server_defaults_and_a_generated_selector() {
    let (_server, client) = server().await;
    let stored = apply(
        &client,
        "/apis/batch/v1/namespaces/default/jobs/migrate",
        &job("migrate"),
    )
    .await;
    let spec = &stored["spec"];
    let uid = stored["metadata"]["uid"].as_str().expect("a uid");
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(spec["completions"], 1);
    assert_eq!(spec["parallelism"], 1);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    let labels = json!({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "migrate",
        "controller-uid": uid, "job-name": "migrate"});
    assert_eq!(spec["template"]["metadata"]["labels"], labels);
    assert_eq!(
        stored["metadata"]["labels"], labels,
        "the Job takes its template's labels"
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never", "a set field is kept");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["securityContext"], json!({}));
    let container = &pod["containers"][0];
    assert_eq!(container["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(container["terminationMessagePolicy"], "File");
    assert_eq!(container["imagePullPolicy"], "IfNotPresent");
}

#[tokio::test]
async fn a_reapplied_job_is_unchanged_and_keeps_its_generated_selector() {
    let (_server, client) = server().await;
    let path = "/apis/batch/v1/namespaces/default/jobs/migrate";
    let first = apply(&client, path, &job("migrate")).await;
    let second = apply(&client, path, &job("migrate")).await;
    assert_eq!(
        second["metadata"]["resourceVersion"], first["metadata"]["resourceVersion"],
        "a converged apply stores nothing"
    );
    assert_eq!(second["spec"]["selector"], first["spec"]["selector"]);
    // An update that omits the generated selector and labels keeps them (the template is
    // immutable, so losing them would be refused).
    let mut put = first.clone();
    put["spec"]
        .as_object_mut()
        .expect("a spec")
        .remove("selector");
    put["spec"]["template"]["metadata"] = json!({});
    put["metadata"]["annotations"] = json!({"note": "updated"});
    let raw = crate::support::raw(&client, "PUT", path, "application/json", Some(put)).await;
    assert_eq!(raw.status, 200, "the update is accepted: {}", raw.body);
    assert_eq!(raw.body["spec"]["selector"], first["spec"]["selector"]);
    assert_eq!(
        raw.body["spec"]["template"]["metadata"]["labels"],
        first["spec"]["template"]["metadata"]["labels"]
    );
}

#[tokio::test]
async fn a_cron_job_gets_the_server_defaults_but_its_job_template_spec_does_not() {
    let (_server, client) = server().await;
    let body = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "flush"},
        "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure", "containers": [{"name": "f", "image": "keystone"}]}}}}}});
    let stored = apply(
        &client,
        "/apis/batch/v1/namespaces/default/cronjobs/flush",
        &body,
    )
    .await;
    let spec = &stored["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["successfulJobsHistoryLimit"], 3);
    assert_eq!(spec["failedJobsHistoryLimit"], 1);
    assert_eq!(spec["jobTemplate"]["spec"].get("backoffLimit"), None);
    let container = &spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["imagePullPolicy"], "Always",
        "an untagged image is pulled always"
    );
    assert_eq!(
        spec["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"],
        "ClusterFirst"
    );
}

#[tokio::test]
async fn a_deployment_gets_rolling_update_probe_port_and_volume_defaults() {
    let (_server, client) = server().await;
    let body = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
        "spec": {"strategy": {"type": "RollingUpdate"}, "selector": {"matchLabels": {"app": "api"}},
            "template": {"metadata": {"labels": {"app": "api"}}, "spec": {
                "containers": [{"name": "api", "image": "registry:5000/keystone",
                    "ports": [{"name": "http", "containerPort": 5000}],
                    "startupProbe": {"httpGet": {"port": 5000}}}],
                "volumes": [{"name": "config", "configMap": {"name": "c"}}, {"name": "keys", "secret": {"secretName": "k", "defaultMode": 256}}]}}}});
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "apps",
            "v1",
            "Deployment",
        )),
    );
    let stored = api
        .patch("api", &PatchParams::apply("tester"), &Patch::Apply(&body))
        .await
        .expect("the apply succeeds");
    let spec = &stored.data["spec"];
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    let pod = &spec["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(
        container["imagePullPolicy"], "Always",
        "a registry port is no tag"
    );
    assert_eq!(container["ports"][0]["protocol"], "TCP");
    assert_eq!(
        container["startupProbe"],
        json!({"httpGet": {"port": 5000, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
            "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(pod["volumes"][0]["configMap"]["defaultMode"], 420);
    assert_eq!(
        pod["volumes"][1]["secret"]["defaultMode"], 256,
        "a set mode is kept"
    );
}

/// A created Service comes back with the empty status kube-apiserver gives it
/// (`loadBalancer: {}`), whatever status the client sent.
#[tokio::test]
async fn a_created_service_returns_an_empty_load_balancer_status() {
    let (_server, client) = server().await;
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.9"}]}}});
    let created =
        crate::support::post(&client, "/api/v1/namespaces/default/services", service).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["status"], json!({"loadBalancer": {}}));
    assert!(
        created.body["spec"]["clusterIP"].is_string(),
        "{}",
        created.body
    );
}
