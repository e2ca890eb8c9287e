//! A Barbican whose `targetClusterRef` names a registered cluster, with a managed store on
//! an OpenBaoCluster there (facts §2.20, §3.6 "Remote target"): the Barbican and its store
//! on the management cluster; the OpenBao actor, the provisioner's TokenRequest, the minted
//! AppRole Secret and every child of the Barbican on the target; two embedded API servers,
//! each with its actors, in one test.

use serde_json::json;
use wasm_operator_apiserver::Actor;
use wasm_operator_e2e::{cluster_with_actors, eventually};
use wasm_operator_runtime::backend::ClusterBackend as _;
use wasm_operator_sdk::DeleteOptions;

use crate::barbican::{GROUP_VERSION, NS, barbican, managed_store, openbao_cluster, start};
use crate::harness::{WAIT, in_ns, secret};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_store_of_a_targeted_barbican_mints_on_the_target_and_both_deletions_sweep_it() {
    let h = start().await;
    let target =
        cluster_with_actors(&[Actor::Workloads, Actor::MariaDb, Actor::OpenBao], &[]).await;
    for object in [
        json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
            "metadata": {"name": "maria", "namespace": NS}, "spec": {"replicas": 1}}),
        secret(
            NS,
            "barbican-db",
            json!({"username": "barbican", "password": "db-pw"}),
        ),
        secret(NS, "barbican-service", json!({"password": "svc-pw"})),
        openbao_cluster(),
    ] {
        target.create(object).await;
    }
    h.cluster.register_target("edge", &target).await;
    let mut targeted = barbican();
    targeted["spec"]["targetClusterRef"] = json!({"name": "edge"});
    h.cluster.create(targeted).await;
    h.cluster.create(managed_store()).await;

    // Provisioned and minted on the target, projected into the Barbican there.
    let store = h.store_condition("vault", "Ready", "AllReady").await;
    assert_eq!(
        store["metadata"]["annotations"]["openstack.c5c3.io/children-cluster"],
        "edge"
    );
    assert_eq!(
        store["metadata"]["finalizers"],
        json!(["openstack.c5c3.io/remote-children"])
    );
    h.barbican_condition("SecretStoresReady", "AllStoresProjected")
        .await;
    let minted = target
        .get("v1", "Secret", NS, "vault-approle")
        .await
        .expect("the AppRole Secret on the target");
    let labels = &minted["metadata"]["labels"];
    assert_eq!(
        labels["openstack.c5c3.io/owner-kind"],
        "BarbicanSecretStore"
    );
    assert_eq!(labels["openstack.c5c3.io/owner-name"], "vault");
    assert_eq!(minted["metadata"].get("ownerReferences"), None);
    assert!(
        h.cluster
            .get("v1", "Secret", NS, "vault-approle")
            .await
            .is_none(),
        "nothing minted on the management cluster"
    );
    assert!(
        target
            .get("apps/v1", "Deployment", NS, "barbican")
            .await
            .is_some()
    );
    assert!(
        h.cluster
            .get("apps/v1", "Deployment", NS, "barbican")
            .await
            .is_none()
    );

    // The store's deletion sweeps its Secret from the target, then releases it.
    h.cluster
        .backend
        .delete(
            &in_ns(GROUP_VERSION, "BarbicanSecretStore", "vault"),
            &DeleteOptions::default(),
        )
        .await
        .expect("the store deleted");
    eventually("the store's Secret swept from the target", WAIT, || async {
        target
            .get("v1", "Secret", NS, "vault-approle")
            .await
            .is_none()
            .then_some(())
    })
    .await;
    eventually("the store released", WAIT, || async {
        h.cluster
            .get(GROUP_VERSION, "BarbicanSecretStore", NS, "vault")
            .await
            .is_none()
            .then_some(())
    })
    .await;

    // The Barbican's deletion sweeps its Deployment from the target.
    h.cluster
        .backend
        .delete(
            &in_ns(GROUP_VERSION, "Barbican", "barbican"),
            &DeleteOptions::default(),
        )
        .await
        .expect("the Barbican deleted");
    eventually(
        "the Barbican's Deployment swept from the target",
        WAIT,
        || async {
            target
                .get("apps/v1", "Deployment", NS, "barbican")
                .await
                .is_none()
                .then_some(())
        },
    )
    .await;
    eventually("the Barbican released", WAIT, || async {
        h.cluster
            .get(GROUP_VERSION, "Barbican", NS, "barbican")
            .await
            .is_none()
            .then_some(())
    })
    .await;
}
