//! Deletion end to end (facts §2.1 point 4, §2.20): the finalizers a Keystone gets, and
//! what its deletion cleans up before it lets them go.

use serde_json::json;
use wasm_operator_e2e::eventually;
use wasm_operator_runtime::backend::ClusterBackend as _;

use crate::harness::{GROUP_VERSION, Harness, WAIT, keystone, keystone_ref};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_keystone_removes_its_database_objects_and_backups_then_its_finalizers() {
    let h = Harness::start().await;
    h.cluster.create(keystone(json!({}))).await;
    let converged = h.condition("DeploymentReady", "DeploymentReady").await;
    assert_eq!(
        converged["metadata"]["finalizers"],
        json!([
            "keystone.openstack.c5c3.io/finalizer",
            "keystone.openstack.c5c3.io/openbao-finalizer"
        ])
    );
    let backups = ["ks-fernet-keys-backup", "ks-credential-keys-backup"];
    for backup in backups {
        // ESO's own finalizer, which the OpenBao finalizer waits for.
        eventually(&format!("{backup} adopted by ESO"), WAIT, || async {
            let push = h
                .cluster
                .get("external-secrets.io/v1alpha1", "PushSecret", "ns", backup)
                .await?;
            push["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| f.contains(&json!("pushsecret.externalsecrets.io/finalizer")))
                .then_some(())
        })
        .await;
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
    // The deletes are sent, not waited for: each is gone or on its way out.
    for kind in ["Database", "User", "Grant"] {
        let object = h
            .cluster
            .get("k8s.mariadb.com/v1alpha1", kind, "ns", "ks")
            .await;
        assert!(
            object
                .as_ref()
                .is_none_or(|o| o.pointer("/metadata/deletionTimestamp").is_some()),
            "{kind} ks: {object:?}"
        );
    }
    for backup in backups {
        assert!(
            h.cluster
                .get("external-secrets.io/v1alpha1", "PushSecret", "ns", backup)
                .await
                .is_none(),
            "{backup}"
        );
    }
    for reason in [
        "FinalizingDatabase",
        "DatabaseFinalized",
        "FinalizingOpenBaoSecrets",
        "OpenBaoSecretsFinalized",
    ] {
        assert!(
            !h.cluster.events_with_reason("ns", reason).await.is_empty(),
            "event {reason}"
        );
    }
}
