//! Cinder, its CinderBackends and its CinderBackupBackend (facts §3.4, §3.5, §4):
//! cinder.wasm, cinderbackends.wasm and cinderbackupbackends.wasm through the handshake —
//! one Secret and one cinder-volume Deployment per backend, the backup Secret in the
//! cinder-backup Deployment — and a deleted backend's service removal.

use serde_json::{Value, json};
use wasm_operator_e2e::{current_condition, eventually};
use wasm_operator_runtime::backend::ClusterBackend as _;
use wasm_operator_sdk::DeleteOptions;

use crate::harness::{Harness, WAIT, in_ns, secret};

const GROUP_VERSION: &str = "cinder.openstack.c5c3.io/v1alpha1";
const NS: &str = "ns";

async fn start() -> Harness {
    let h = Harness::start(
        &["cinder", "cinderbackends", "cinderbackupbackends"],
        &[
            "cinder.openstack.c5c3.io_cinders.yaml",
            "cinder.openstack.c5c3.io_cinderbackends.yaml",
            "cinder.openstack.c5c3.io_cinderbackupbackends.yaml",
        ],
        false,
    )
    .await;
    for object in [
        json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
            "metadata": {"name": "maria", "namespace": NS}, "spec": {"replicas": 1}}),
        secret(
            NS,
            "cinder-db",
            json!({"username": "cinder", "password": "db-pw"}),
        ),
        secret(NS, "cinder-service", json!({"password": "svc-pw"})),
    ] {
        h.cluster.create(object).await;
    }
    h
}

fn cinder() -> Value {
    json!({"apiVersion": GROUP_VERSION, "kind": "Cinder",
        "metadata": {"name": "cinder", "namespace": NS},
        "spec": {
            "openStackRelease": "2025.2",
            "image": {"repository": "ghcr.io/c5c3/cinder", "tag": "2025.2"},
            "database": {"clusterRef": {"name": "maria"}, "database": "cinder",
                         "secretRef": {"name": "cinder-db"}},
            "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.pymemcache"},
            "keystoneEndpoint": "http://keystone.ns.svc:5000/v3",
            "serviceUser": {"secretRef": {"name": "cinder-service"}}}})
}

fn nfs(kind: &str, name: &str) -> Value {
    json!({"apiVersion": GROUP_VERSION, "kind": kind,
        "metadata": {"name": name, "namespace": NS},
        "spec": {"cinderRef": {"name": "cinder"}, "type": "NFS",
                 "nfs": {"server": "nfs.example.com", "path": format!("/exports/{name}")}}})
}

impl Harness {
    async fn satellite_condition(
        &self,
        kind: &str,
        name: &str,
        type_: &str,
        reason: &str,
    ) -> Value {
        self.cluster
            .condition_reached(GROUP_VERSION, kind, NS, name, type_, reason, WAIT)
            .await
    }

    async fn cinder_condition(&self, type_: &str, reason: &str) -> Value {
        self.cluster
            .condition_reached(GROUP_VERSION, "Cinder", NS, "cinder", type_, reason, WAIT)
            .await
    }

    /// The Secret the Deployment `deployment` mounts as `volume`.
    async fn mounted(&self, deployment: &str, volume: &str) -> Option<String> {
        let deployment = self
            .cluster
            .get("apps/v1", "Deployment", NS, deployment)
            .await?;
        deployment
            .pointer("/spec/template/spec/volumes")?
            .as_array()?
            .iter()
            .find(|v| v["name"] == volume)?
            .pointer("/secret/secretName")?
            .as_str()
            .map(str::to_owned)
    }
}

fn message(object: &Value, type_: &str) -> Value {
    current_condition(object, type_)
        .map(|c| c["message"].clone())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backends_run_their_own_volume_services_the_backup_its_service_and_a_deleted_backend_is_removed()
 {
    let h = start().await;
    // GitOps order: the satellites before their Cinder.
    h.cluster.create(nfs("CinderBackend", "fast")).await;
    h.cluster
        .create(nfs("CinderBackupBackend", "nightly"))
        .await;
    let waiting = h
        .satellite_condition(
            "CinderBackend",
            "fast",
            "CredentialsReady",
            "WaitingForParent",
        )
        .await;
    assert_eq!(
        message(&waiting, "CredentialsReady"),
        "parent Cinder ns/cinder does not exist; the cluster this backend's volume service runs on is unknown"
    );
    let waiting = h
        .satellite_condition(
            "CinderBackupBackend",
            "nightly",
            "CredentialsReady",
            "WaitingForParent",
        )
        .await;
    assert_eq!(
        message(&waiting, "CredentialsReady"),
        "parent Cinder ns/cinder does not exist; the cluster this backup target is written from is unknown"
    );
    h.cluster.create(cinder()).await;

    let fast = h
        .satellite_condition("CinderBackend", "fast", "Ready", "AllReady")
        .await;
    assert_eq!(
        current_condition(&fast, "CredentialsReady").map(|c| c["reason"].clone()),
        Some(json!("CredentialsNotRequired"))
    );
    h.satellite_condition("CinderBackupBackend", "nightly", "Ready", "AllReady")
        .await;
    let cinder = h.cinder_condition("Ready", "AllReady").await;
    assert_eq!(
        message(&cinder, "BackendsReady"),
        "All 1 attached backends are projected: fast"
    );
    assert_eq!(
        cinder["status"]["volumeServices"],
        json!([{"backend": "fast", "host": "cinder@fast"}])
    );
    let backend_secret = h
        .mounted("cinder-volume-fast", "backend")
        .await
        .expect("the volume service mounts its backend");
    assert!(
        backend_secret.starts_with("cinder-backend-fast-"),
        "{backend_secret}"
    );
    let backup_secret = h
        .mounted("cinder-backup", "backup")
        .await
        .expect("the backup service mounts its backend");
    assert!(
        backup_secret.starts_with("cinder-backup-nightly-"),
        "{backup_secret}"
    );

    // A converged pass of each of the three plugins writes nothing.
    let writes = h.writes();
    // (each satellite watches only its own service's Deployment).
    h.touch_deployment("cinder-volume-fast", &["cinder", "cinderbackends"])
        .await;
    h.touch_deployment("cinder-backup", &["cinder", "cinderbackupbackends"])
        .await;
    assert_eq!(h.writes(), writes, "a converged pass wrote");

    // A second backend: its own Secret and Deployment; the first one's pods do not roll.
    h.cluster.create(nfs("CinderBackend", "slow")).await;
    h.satellite_condition(
        "CinderBackend",
        "slow",
        "ConfigProjected",
        "ConfigProjected",
    )
    .await;
    assert_eq!(
        h.mounted("cinder-volume-fast", "backend").await,
        Some(backend_secret),
        "another backend rolls no other volume service"
    );

    // Deleting `slow`: its service stops, the removal Job runs, the finalizer goes.
    let slow = in_ns(GROUP_VERSION, "CinderBackend", "slow");
    h.cluster
        .backend
        .delete(&slow, &DeleteOptions::default())
        .await
        .expect("deleted");
    eventually("the backend gone", WAIT, || async {
        h.cluster
            .get(GROUP_VERSION, "CinderBackend", NS, "slow")
            .await
            .is_none()
            .then_some(())
    })
    .await;
    assert!(
        h.cluster
            .get("apps/v1", "Deployment", NS, "cinder-volume-slow")
            .await
            .is_none(),
        "its volume service is gone"
    );
    let job = h
        .cluster
        .get("batch/v1", "Job", NS, "cinder-slow-service-remove")
        .await
        .expect("the removal Job ran");
    assert!(
        job["spec"]["template"]["spec"]["containers"][0]["command"][2]
            .as_str()
            .is_some_and(
                |c| c.starts_with("cinder-manage service remove cinder-volume cinder@slow")
            ),
        "{job}"
    );
}

/// Two CinderBackupBackends: the Cinder names them and stops its backup service; deleting
/// one de-projects it while its object is still there, and the other is backed up to again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_backup_backend_is_named_on_the_cinder_and_a_deleting_one_leaves_at_once() {
    let h = start().await;
    h.cluster
        .create(nfs("CinderBackupBackend", "nightly"))
        .await;
    h.cluster.create(cinder()).await;
    h.satellite_condition("CinderBackupBackend", "nightly", "Ready", "AllReady")
        .await;
    let nightly = h
        .mounted("cinder-backup", "backup")
        .await
        .expect("the backup service mounts its backend");

    let mut weekly = nfs("CinderBackupBackend", "weekly");
    weekly["metadata"]["finalizers"] = json!(["test.example.com/hold"]);
    h.cluster.create(weekly).await;
    let cinder = h
        .cinder_condition("BackupBackendReady", "MultipleBackupBackends")
        .await;
    assert_eq!(
        message(&cinder, "BackupBackendReady"),
        "More than one attached, credential-ready CinderBackupBackend (nightly, weekly); \
         exactly one is supported"
    );
    eventually("the backup service stopped", WAIT, || async {
        h.cluster
            .get("apps/v1", "Deployment", NS, "cinder-backup")
            .await
            .is_none()
            .then_some(())
    })
    .await;

    // Deleting `weekly`: it leaves at once, held by its finalizer, and `nightly` is the
    // backup backend again.
    h.cluster
        .backend
        .delete(
            &in_ns(GROUP_VERSION, "CinderBackupBackend", "weekly"),
            &DeleteOptions::default(),
        )
        .await
        .expect("deleted");
    let cinder = h
        .cinder_condition("BackupBackendReady", "BackupBackendProjected")
        .await;
    assert_eq!(
        message(&cinder, "BackupBackendReady"),
        "Backup backend nightly is projected"
    );
    let mounted = eventually("the backup service back", WAIT, || async {
        h.mounted("cinder-backup", "backup").await
    })
    .await;
    assert_eq!(mounted, nightly, "the same Secret: its hash is stable");
    assert!(
        h.cluster
            .get(GROUP_VERSION, "CinderBackupBackend", NS, "weekly")
            .await
            .is_some(),
        "the backend is still there, held by its finalizer"
    );
}
