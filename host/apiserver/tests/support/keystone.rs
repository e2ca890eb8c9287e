//! A Keystone as the Keystone reconciler leaves one in the cluster (facts §2.16, §2.18):
//! Service `{name}`, Deployment `{name}`, the admin password Secret and the bootstrap Job,
//! with statuses the tests write as the workload controllers would.

use base64::Engine as _;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::http::eventually;

/// The labels of a Keystone API Deployment.
pub fn labels(name: &str) -> Value {
    json!({"app.kubernetes.io/name": "keystone", "app.kubernetes.io/instance": name,
           "app.kubernetes.io/managed-by": "keystone-operator", "app.kubernetes.io/component": "api"})
}

async fn create(client: &kube::Client, path: &str, body: Value) {
    let answer = super::post(client, path, body).await;
    assert_eq!(answer.status, 201, "create {path}: {}", answer.body);
}

/// Service `{name}` (port 5000 named `api`) and Deployment `{name}`, not yet available.
pub async fn keystone(client: &kube::Client, ns: &str, name: &str) {
    create(client, &format!("/api/v1/namespaces/{ns}/services"), json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "labels": labels(name)},
        "spec": {"ports": [{"name": "api", "port": 5000, "targetPort": 5000, "protocol": "TCP"}],
                 "selector": {"app.kubernetes.io/name": "keystone", "app.kubernetes.io/instance": name}},
    })).await;
    create(client, &format!("/apis/apps/v1/namespaces/{ns}/deployments"), json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels(name)},
        "spec": {"replicas": 1,
                 "selector": {"matchLabels": {"app.kubernetes.io/name": "keystone", "app.kubernetes.io/instance": name}},
                 "template": {"metadata": {"labels": labels(name)},
                              "spec": {"containers": [{"name": "keystone", "image": "keystone:2025.2",
                                                       "ports": [{"name": "keystone", "containerPort": 5000}]}]}}},
    })).await;
}

/// Writes the Deployment's status: available (1 replica, `Available=True`) or not.
pub async fn set_available(client: &kube::Client, ns: &str, name: &str, available: bool) {
    let (n, status) = if available { (1, "True") } else { (0, "False") };
    let patch = json!({"status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1,
        "readyReplicas": n, "availableReplicas": n,
        "conditions": [{"type": "Available", "status": status, "reason": "MinimumReplicasAvailable",
                        "lastUpdateTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    Api::<k8s_openapi::api::apps::v1::Deployment>::namespaced(client.clone(), ns)
        .patch_status(
            name,
            &PatchParams {
                field_manager: Some("kube-controller-manager".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(&patch),
        )
        .await
        .expect("the Deployment status is written");
}

/// The admin password Secret `{name}-admin` and the bootstrap Job `{name}-bootstrap`
/// reading it (not completed).
pub async fn bootstrap(client: &kube::Client, ns: &str, name: &str, password: &str) {
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("{name}-admin")},
        "data": {"password": base64::engine::general_purpose::STANDARD.encode(password)}});
    let secrets = Api::<k8s_openapi::api::core::v1::Secret>::namespaced(client.clone(), ns);
    secrets
        .patch(
            &format!("{name}-admin"),
            &PatchParams::apply("test").force(),
            &Patch::Apply(&secret),
        )
        .await
        .expect("the admin Secret is applied");
    let url = format!("http://{name}.{ns}.svc.cluster.local:5000/v3");
    let job: k8s_openapi::api::batch::v1::Job = serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": format!("{name}-bootstrap")},
        "spec": {"backoffLimit": 4, "template": {"spec": {"restartPolicy": "Never", "containers": [{
            "name": "bootstrap", "image": "keystone:2025.2",
            "command": ["/bin/sh", "-eu", "-c", "exec keystone-manage bootstrap"],
            "env": [
                {"name": "BOOTSTRAP_PASSWORD", "valueFrom": {"secretKeyRef": {"name": format!("{name}-admin"), "key": "password"}}},
                {"name": "BOOTSTRAP_REGION_ID", "value": "RegionOne"},
                {"name": "BOOTSTRAP_ADMIN_URL", "value": url},
                {"name": "BOOTSTRAP_INTERNAL_URL", "value": url},
                {"name": "BOOTSTRAP_PUBLIC_URL", "value": url},
            ]}]}}},
    })).expect("a Job");
    Api::<k8s_openapi::api::batch::v1::Job>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &job)
        .await
        .expect("the bootstrap Job is created");
}

/// Marks the bootstrap Job `Complete`, as the Job controller would.
pub async fn complete_bootstrap(client: &kube::Client, ns: &str, name: &str) {
    let patch = json!({"status": {"succeeded": 1, "conditions": [
        {"type": "Complete", "status": "True", "lastProbeTime": "2026-01-01T00:00:00Z",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    Api::<k8s_openapi::api::batch::v1::Job>::namespaced(client.clone(), ns)
        .patch_status(
            &format!("{name}-bootstrap"),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .expect("the Job status is written");
}

/// The EndpointSlices of Service `name`.
pub async fn slices(client: &kube::Client, ns: &str, name: &str) -> Vec<EndpointSlice> {
    Api::<EndpointSlice>::namespaced(client.clone(), ns)
        .list(
            &kube::api::ListParams::default().labels(&format!("kubernetes.io/service-name={name}")),
        )
        .await
        .expect("EndpointSlices list")
        .items
}

/// Waits for Service `name`'s EndpointSlice with a ready endpoint, and answers the
/// stand-in's base URL it points at.
pub async fn ready_endpoint(client: &kube::Client, ns: &str, name: &str) -> String {
    eventually("a ready EndpointSlice", || async {
        let slices = slices(client, ns, name).await;
        let slice = slices.first()?;
        let endpoint = slice.endpoints.as_ref()?.first()?;
        if endpoint.conditions.as_ref()?.ready != Some(true) {
            return None;
        }
        let port = slice.ports.as_ref()?.first()?.port?;
        Some(format!("http://{}:{port}", endpoint.addresses.first()?))
    })
    .await
}

/// Password authentication of `admin` scoped to project `admin`, as the
/// KeystoneIdentityBackend's identity client sends it.
pub fn password_auth(password: &str) -> Value {
    json!({"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"name": "Default"}, "password": password}}},
        "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}}}})
}

/// A Keystone the stand-in serves, available and bootstrapped with `password`: its URL.
pub async fn bootstrapped(client: &kube::Client, ns: &str, name: &str, password: &str) -> String {
    keystone(client, ns, name).await;
    bootstrap(client, ns, name, password).await;
    complete_bootstrap(client, ns, name).await;
    set_available(client, ns, name, true).await;
    let url = ready_endpoint(client, ns, name).await;
    let auth = password_auth(password);
    eventually("the admin password to take", || async {
        let answer =
            super::http::send("POST", &format!("{url}/v3/auth/tokens"), &[], Some(&auth)).await;
        (answer.status == 201).then_some(())
    })
    .await;
    url
}
