//! A Glance whose `targetClusterRef` names a registered cluster (facts §2.1, §2.20, §3.1,
//! §4): the Glance and its GlanceBackend on the management cluster, every child of the
//! Glance on the target, and the backend observing its projection there; two embedded API
//! servers, each with its actors, in one test. A target whose token lacks a verb leaves the
//! Glance not Ready, the refusal named in a `PassFailed` Warning.

use serde_json::json;
use wasm_operator_apiserver::{Actor, Fault, FaultAction};
use wasm_operator_e2e::{cluster_with_actors, current_condition, eventually};
use wasm_operator_runtime::backend::ClusterBackend as _;
use wasm_operator_sdk::DeleteOptions;

use crate::glance::{
    GROUP_VERSION, NS, backend, children_inputs, glance, object_ref, s3_secret, start,
};
use crate::harness::WAIT;

const OWNER_LABELS: [(&str, &str); 3] = [
    ("openstack.c5c3.io/owner-kind", "Glance"),
    ("openstack.c5c3.io/owner-name", "glance"),
    ("openstack.c5c3.io/owner-namespace", NS),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_targeted_glance_and_its_backend_converge_with_every_child_on_the_target_and_its_deletion_sweeps_them()
 {
    let h = start().await;
    let target = cluster_with_actors(&[Actor::Workloads, Actor::MariaDb], &[]).await;
    for object in children_inputs() {
        target.create(object).await;
    }
    target.create(s3_secret("store", "s3-secret")).await;
    h.cluster.register_target("edge", &target).await;
    h.cluster.create(backend("store", true)).await;
    let mut targeted = glance();
    targeted["spec"]["targetClusterRef"] = json!({"name": "edge"});
    h.cluster.create(targeted).await;

    // The backend read its credentials and found its section in the target's Deployment.
    h.backend_condition("store", "Ready", "AllReady").await;
    let converged = h.glance_condition("Ready", "AllReady").await;
    assert_eq!(
        converged["metadata"]["finalizers"],
        json!(["openstack.c5c3.io/remote-children"])
    );
    let deployment = target
        .get("apps/v1", "Deployment", NS, "glance")
        .await
        .expect("the Deployment on the target");
    for (key, value) in OWNER_LABELS {
        assert_eq!(deployment["metadata"]["labels"][key], value, "{key}");
    }
    assert_eq!(deployment["metadata"].get("ownerReferences"), None);
    assert!(target.get("v1", "Service", NS, "glance").await.is_some());
    for (api_version, kind, name) in [
        ("apps/v1", "Deployment", "glance"),
        ("v1", "Service", "glance"),
        ("batch/v1", "Job", "glance-db-sync"),
        ("k8s.mariadb.com/v1alpha1", "Database", "glance"),
    ] {
        assert!(
            h.cluster.get(api_version, kind, NS, name).await.is_none(),
            "{kind} {name} on the management cluster"
        );
    }

    // Deletion sweeps the target by the owner labels, then releases the Glance.
    h.cluster
        .backend
        .delete(&object_ref("Glance", "glance"), &DeleteOptions::default())
        .await
        .expect("deleted");
    eventually(
        "the Glance's Deployment swept from the target",
        WAIT,
        || async {
            target
                .get("apps/v1", "Deployment", NS, "glance")
                .await
                .is_none()
                .then_some(())
        },
    )
    .await;
    eventually("the Glance released", WAIT, || async {
        h.cluster
            .get(GROUP_VERSION, "Glance", NS, "glance")
            .await
            .is_none()
            .then_some(())
    })
    .await;
    assert!(
        target.get("v1", "Secret", NS, "glance-db").await.is_some(),
        "the user's Secrets on the target are not the Glance's children"
    );
}

/// kube-apiserver's answer to a target token without `patch` on Secrets.
const FORBIDDEN: &str = "secrets \"glance-db-connection\" is forbidden: User \
    \"system:serviceaccount:c5c3-system:wasm-operator\" cannot patch resource \"secrets\" in \
    the namespace \"ns\"";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_whose_token_lacks_a_verb_leaves_the_glance_not_ready_with_the_forbidden_error_named()
 {
    let h = start().await;
    let target = cluster_with_actors(&[Actor::Workloads, Actor::MariaDb], &[]).await;
    for object in children_inputs() {
        target.create(object).await;
    }
    target.server.inject(Fault {
        verb: None,
        resource: Some("secrets".into()),
        name: Some("glance-db-connection".into()),
        namespace: None,
        action: FaultAction::Fail {
            code: 403,
            message: FORBIDDEN.into(),
        },
        remaining: None,
    });
    h.cluster.register_target("edge", &target).await;
    let mut targeted = glance();
    targeted["spec"]["targetClusterRef"] = json!({"name": "edge"});
    h.cluster.create(targeted).await;

    let event = eventually("the PassFailed event naming the refusal", WAIT, || async {
        h.cluster
            .events_with_reason(NS, "PassFailed")
            .await
            .into_iter()
            .find(|e| e["note"].as_str().is_some_and(|n| n.contains(FORBIDDEN)))
    })
    .await;
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["regarding"]["name"], "glance");
    let glance = h
        .cluster
        .get(GROUP_VERSION, "Glance", NS, "glance")
        .await
        .expect("the Glance");
    assert_eq!(
        current_condition(&glance, "Ready").map(|c| c["status"].clone()),
        Some(json!("False")),
        "{}",
        glance["status"]
    );
    target.server.clear_faults();
    assert!(
        target
            .get("v1", "Secret", NS, "glance-db-connection")
            .await
            .is_none(),
        "the refused Secret is not there"
    );
}
