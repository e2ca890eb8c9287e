//! Target clusters end to end (facts §2.1 point 3, §2.20, §3.1): a Keystone on the
//! management cluster whose `targetClusterRef` names a cluster registered by a Secret in
//! `c5c3-clusters`; two embedded API servers, each with its actors, in one test.

use serde_json::{Value, json};
use wasm_operator_e2e::{Cluster, cluster_with_actors, eventually};
use wasm_operator_runtime::backend::ClusterBackend as _;

use crate::harness::{
    ACTORS, GROUP_VERSION, Harness, READY_ACTORS, WAIT, fixtures, keystone_in, keystone_ref,
};

pub(crate) use wasm_operator_e2e::CLUSTERS_NAMESPACE as CLUSTERS;
const OWNER_LABELS: [&str; 3] = [
    "openstack.c5c3.io/owner-kind",
    "openstack.c5c3.io/owner-name",
    "openstack.c5c3.io/owner-namespace",
];

pub(crate) use wasm_operator_e2e::target_registration as registration;

/// A target cluster with the actors a Keystone needs to become Ready (its API stand-in
/// among them), the store, and the Keystone's MariaDB and Secrets in `ns`.
async fn target_cluster() -> Cluster {
    target_cluster_with(&READY_ACTORS).await
}

/// [`target_cluster`] with `actors`.
pub(crate) async fn target_cluster_with(actors: &[wasm_operator_apiserver::Actor]) -> Cluster {
    let target = cluster_with_actors(actors, &[]).await;
    target
        .create(
            json!({"apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
            "metadata": {"name": "openbao-cluster-store"},
            "spec": {"provider": {"vault": {"server": "http://openbao:8200", "path": "kv"}}}}),
        )
        .await;
    for (_, object) in fixtures("ns") {
        target.create(object).await;
    }
    target
}

pub(crate) fn targeted(name: &str) -> Value {
    keystone_in("ns", json!({"targetClusterRef": {"name": name}}))
}

fn labels_of(object: &Value) -> Vec<Option<&str>> {
    OWNER_LABELS
        .iter()
        .map(|key| object["metadata"]["labels"][key].as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_targeted_keystone_writes_every_child_on_its_target_with_owner_labels_and_its_deletion_sweeps_them()
 {
    let h = Harness::start_with(&ACTORS).await;
    // The clusters namespace is there: the operator's RBAC has a Role in it.
    let target = target_cluster().await;
    h.cluster.create(registration("edge", &target)).await;
    h.cluster.create(targeted("edge")).await;

    // Ready: the health check reached the Keystone API through the target's Service.
    let converged = h.condition("Ready", "AllReady").await;
    assert_eq!(
        converged["metadata"]["finalizers"],
        json!([
            "keystone.openstack.c5c3.io/finalizer",
            "keystone.openstack.c5c3.io/openbao-finalizer",
            "openstack.c5c3.io/remote-children"
        ])
    );
    let deployment = target
        .get("apps/v1", "Deployment", "ns", "ks")
        .await
        .expect("the Deployment is on the target");
    assert_eq!(
        labels_of(&deployment),
        [Some("Keystone"), Some("ks"), Some("ns")]
    );
    assert_eq!(
        deployment["metadata"].get("ownerReferences"),
        None,
        "no owner reference crosses clusters"
    );
    for (api_version, kind, name) in [
        ("apps/v1", "Deployment", "ks"),
        ("v1", "Service", "ks"),
        ("k8s.mariadb.com/v1alpha1", "Database", "ks"),
    ] {
        assert!(
            h.cluster.get(api_version, kind, "ns", name).await.is_none(),
            "no {kind} {name} on the management cluster"
        );
        let child = target
            .get(api_version, kind, "ns", name)
            .await
            .unwrap_or_else(|| panic!("{kind} {name} on the target"));
        assert_eq!(
            labels_of(&child),
            [Some("Keystone"), Some("ks"), Some("ns")],
            "{kind}"
        );
    }

    h.cluster
        .backend
        .delete(
            &keystone_ref("ns"),
            &wasm_operator_sdk::DeleteOptions::default(),
        )
        .await
        .expect("deleted");
    eventually("the Keystone gone", WAIT, || async {
        h.cluster
            .get(GROUP_VERSION, "Keystone", "ns", "ks")
            .await
            .is_none()
            .then_some(())
    })
    .await;
    for (api_version, kind) in [("apps/v1", "Deployment"), ("v1", "Service")] {
        eventually(
            &format!("the {kind} swept from the target"),
            WAIT,
            || async {
                target
                    .get(api_version, kind, "ns", "ks")
                    .await
                    .is_none()
                    .then_some(())
            },
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unregistered_target_adds_no_finalizer_and_a_deregistered_one_flips_the_keystone_and_leaves_its_children()
 {
    let h = Harness::start_with(&ACTORS).await;
    // The clusters namespace is there: the operator's RBAC has a Role in it.
    h.cluster.create(targeted("nowhere")).await;
    let waiting = h
        .condition("SecretsReady", "TargetClusterUnavailable")
        .await;
    let message = waiting["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "SecretsReady"))
        .and_then(|c| c["message"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert_eq!(message, "target cluster \"nowhere\" is not registered");
    assert_eq!(
        waiting["metadata"].get("finalizers"),
        None,
        "no finalizer added"
    );

    // Registered under that name, the same Keystone converges there.
    let target = target_cluster().await;
    h.cluster.create(registration("nowhere", &target)).await;
    h.condition("DeploymentReady", "DeploymentReady").await;

    // Deregistered: the Keystone says so, and its children stay where they are.
    let secret = wasm_operator_sdk::ObjectRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        namespace: Some(CLUSTERS.into()),
        name: "nowhere".into(),
    };
    h.cluster
        .backend
        .delete(&secret, &wasm_operator_sdk::DeleteOptions::default())
        .await
        .expect("deregistered");
    h.condition("SecretsReady", "TargetClusterUnavailable")
        .await;
    assert!(
        target
            .get("apps/v1", "Deployment", "ns", "ks")
            .await
            .is_some(),
        "the children on the deregistered target are left"
    );
}
