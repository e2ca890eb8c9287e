//! The real control plane this crate starts, judged by what a user of a kubeadm cluster
//! observes: Nodes Ready, `default` ServiceAccounts, Deployments whose Pods are scheduled and
//! become Ready, Jobs that succeed, EndpointSlices for Services, and the garbage collector
//! removing children with foreground and background propagation. The binaries come from
//! `controlplane/build.sh` (`.ci/run` builds them); without them these tests fail.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod, Service, ServiceAccount};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, DeleteParams, ListParams, PostParams, PropagationPolicy};
use serde_json::json;
use wasm_operator_controlplane::{ControlPlane, Error, Options, default_bin_dir};

const WITHIN: Duration = Duration::from_secs(60);

async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    mut probe: impl FnMut() -> F,
) -> T {
    let start = Instant::now();
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(start.elapsed() < WITHIN, "{what}: not within {WITHIN:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "example.invalid/app:1",
                    "ports": [{"containerPort": 8080}]}]},
            },
        },
    }))
    .expect("a Deployment")
}

async fn pods_of(client: &kube::Client, app: &str) -> Vec<Pod> {
    Api::<Pod>::namespaced(client.clone(), "default")
        .list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .expect("pods")
        .items
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_control_plane_runs_workloads_and_collects_garbage_as_a_kubeadm_cluster_does() {
    let plane = ControlPlane::start(Options::new(default_bin_dir()))
        .await
        .expect("the control plane starts");
    let client = plane.client().await.expect("an admin client");

    // Ready means: three Nodes Ready, the default ServiceAccounts made by the controller
    // manager, and the API server's version the one go.mod pins.
    let nodes = Api::<Node>::all(client.clone())
        .list(&ListParams::default())
        .await
        .expect("nodes");
    assert_eq!(nodes.items.len(), 3);
    let version = client.apiserver_version().await.expect("version");
    assert_eq!(version.git_version, "v1.37.2");
    Api::<ServiceAccount>::namespaced(client.clone(), "default")
        .get("default")
        .await
        .expect("the default ServiceAccount");

    // A Deployment: the deployment and replicaset controllers, the scheduler and KWOK.
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 2))
        .await
        .expect("the Deployment");
    eventually("the Deployment's 2 replicas Ready", || async {
        let d = deployments.get("web").await.ok()?;
        (d.status?.ready_replicas? == 2).then_some(())
    })
    .await;
    let pods = pods_of(&client, "web").await;
    assert_eq!(pods.len(), 2);
    for pod in &pods {
        let spec = pod.spec.as_ref().expect("spec");
        assert!(
            spec.node_name
                .as_deref()
                .is_some_and(|n| n.starts_with("kwok-node-")),
            "{spec:?}"
        );
        let status = pod.status.as_ref().expect("status");
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert!(
            status
                .pod_ip
                .as_deref()
                .is_some_and(|ip| ip.starts_with("10.244."))
        );
    }

    // A Service selecting them: the endpointslice controller lists the Pods' addresses.
    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    services
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
            }))
            .expect("a Service"),
        )
        .await
        .expect("the Service");
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), "default");
    eventually("the Service's EndpointSlice with both Pods", || async {
        let list = slices
            .list(&ListParams::default().labels("kubernetes.io/service-name=web"))
            .await
            .ok()?;
        let ready = list
            .items
            .iter()
            .flat_map(|s| s.endpoints.iter().flatten())
            .filter(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
            .count();
        (ready == 2).then_some(())
    })
    .await;

    // A Job: the job controller and KWOK's pod-complete stage.
    let jobs: Api<Job> = Api::namespaced(client.clone(), "default");
    jobs.create(
        &PostParams::default(),
        &serde_json::from_value(json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "once", "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "main", "image": "example.invalid/job:1"}]}}},
        }))
        .expect("a Job"),
    )
    .await
    .expect("the Job");
    eventually("the Job Complete", || async {
        let job = jobs.get("once").await.ok()?;
        let complete = job
            .status?
            .conditions?
            .iter()
            .any(|c| c.type_ == "Complete" && c.status == "True");
        complete.then_some(())
    })
    .await;

    // Garbage collection: foreground deletion waits for the children, background does not,
    // and in both the ReplicaSets and Pods go.
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("batch", 1))
        .await
        .expect("a second Deployment");
    eventually("the second Deployment Ready", || async {
        let d = deployments.get("batch").await.ok()?;
        (d.status?.ready_replicas? == 1).then_some(())
    })
    .await;
    for (name, propagation) in [
        ("web", PropagationPolicy::Foreground),
        ("batch", PropagationPolicy::Background),
    ] {
        let params = DeleteParams {
            propagation_policy: Some(propagation.clone()),
            ..DeleteParams::default()
        };
        deployments.delete(name, &params).await.expect("deleted");
        eventually(
            &format!("{name}: its ReplicaSets and Pods gone"),
            || async {
                let sets = replica_sets
                    .list(&ListParams::default().labels(&format!("app={name}")))
                    .await
                    .ok()?;
                let gone = sets.items.is_empty() && pods_of(&client, name).await.is_empty();
                let deployment_gone = deployments.get_opt(name).await.ok()?.is_none();
                (gone && deployment_gone).then_some(())
            },
        )
        .await;
    }
}

#[tokio::test]
async fn a_missing_binary_is_named_with_how_to_build_it() {
    let empty = tempfile::tempdir().expect("tempdir");
    let error = ControlPlane::start(Options::new(empty.path()))
        .await
        .err()
        .expect("no binaries, no control plane");
    assert!(
        matches!(&error, Error::MissingBinary { component: "etcd", path } if path == &empty.path().join("etcd")),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("controlplane/build.sh"),
        "{error}"
    );
}

#[tokio::test]
async fn a_port_in_use_is_named_before_anything_starts() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("addr").port();
    let error = ControlPlane::start(Options {
        apiserver_port: port,
        ..Options::new(default_bin_dir())
    })
    .await
    .err()
    .expect("the port is taken");
    assert!(
        matches!(&error, Error::PortInUse { component: "kube-apiserver", port: p, .. } if *p == port),
        "{error:?}"
    );
}
