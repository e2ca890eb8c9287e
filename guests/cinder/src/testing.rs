//! Test fixtures: a FakeCluster holding the Cinder `openstack/cinder`, its credentials,
//! a ready MariaDB, and satellites made by [`backend`] and [`backup_backend`].

use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ClusterExt, Outcome, ReconcileError, Request};

use crate::types::Cinder;

/// The namespace of everything.
pub(crate) const NS: &str = "openstack";
/// The Cinder's name.
pub(crate) const NAME: &str = "cinder";

/// The Cinder `openstack/cinder` (generation 2) on the managed MariaDB `maria`.
pub(crate) fn cinder() -> Value {
    json!({
        "apiVersion": "cinder.openstack.c5c3.io/v1alpha1", "kind": "Cinder",
        "metadata": {"name": NAME, "namespace": NS, "uid": "cinder-uid", "generation": 2},
        "spec": {
            "openStackRelease": "2025.2",
            "image": {"repository": "ghcr.io/c5c3/cinder", "tag": "2025.2"},
            "database": {"clusterRef": {"name": "maria"}, "database": "cinder",
                         "secretRef": {"name": "cinder-db"}},
            "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.pymemcache"},
            "keystoneEndpoint": "http://keystone.openstack.svc:5000/v3",
            "serviceUser": {"secretRef": {"name": "cinder-service"}},
        },
    })
}

/// The Secret `name` with `data` (text values).
pub(crate) fn secret(name: &str, data: &[(&str, &str)]) -> Value {
    let data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(k, v)| {
            let encoded = serde_json::to_value(k8s_openapi::ByteString(v.as_bytes().to_vec()))
                .expect("bytes encode");
            ((*k).to_owned(), encoded)
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": NS}, "type": "Opaque", "data": data})
}

/// A credential-ready (or not) satellite of `kind` named `name` of the Cinder: NFS on
/// `nfs.example.com:/exports/{name}`.
pub(crate) fn satellite(kind: &str, name: &str, ready: bool) -> Value {
    let status = if ready { "True" } else { "False" };
    json!({
        "apiVersion": "cinder.openstack.c5c3.io/v1alpha1", "kind": kind,
        "metadata": {"name": name, "namespace": NS, "uid": format!("{name}-uid")},
        "spec": {"cinderRef": {"name": NAME}, "type": "NFS",
                 "nfs": {"server": "nfs.example.com", "path": format!("/exports/{name}")}},
        "status": {"conditions": [{"type": "CredentialsReady", "status": status,
            "reason": "CredentialsNotRequired", "message": "",
            "lastTransitionTime": "2026-12-03T08:00:00Z"}]},
    })
}

/// A CinderBackend (see [`satellite`]).
pub(crate) fn backend(name: &str, ready: bool) -> Value {
    satellite("CinderBackend", name, ready)
}

/// A CinderBackupBackend (see [`satellite`]).
pub(crate) fn backup_backend(name: &str, ready: bool) -> Value {
    satellite("CinderBackupBackend", name, ready)
}

/// The cluster: the Cinder, its credentials and a ready MariaDB.
pub(crate) fn cluster() -> FakeCluster {
    children_cluster().with(cinder())
}

/// What the Cinder's children need where they run: its credentials and a ready MariaDB.
pub(crate) fn children_cluster() -> FakeCluster {
    FakeCluster::new()
        .with(secret(
            "cinder-db",
            &[("username", "cinder"), ("password", "db-pw")],
        ))
        .with(secret("cinder-service", &[("password", "svc-pw")]))
        .with(
            json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
            "metadata": {"name": "maria", "namespace": NS},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
                "message": "", "lastTransitionTime": "2026-12-03T08:00:00Z"}]}}),
        )
}

/// Runs one pass.
pub(crate) fn reconcile(cluster: &FakeCluster) -> Result<Outcome, ReconcileError> {
    let request = Request {
        namespace: Some(NS.into()),
        name: NAME.into(),
    };
    crate::reconcile::reconcile(cluster, &request)
}

/// The Cinder as the cluster holds it.
pub(crate) fn stored(cluster: &FakeCluster) -> Cinder {
    cluster
        .get_typed::<Cinder>(Some(NS), NAME)
        .expect("reads")
        .expect("the Cinder")
}

/// `(status, reason, message)` of condition `type_` of the stored Cinder.
pub(crate) fn condition(cluster: &FakeCluster, type_: &str) -> (String, String, String) {
    stored(cluster)
        .status
        .and_then(|s| s.service.conditions.into_iter().find(|c| c.type_ == type_))
        .map(|c| (c.status, c.reason, c.message))
        .unwrap_or_default()
}

/// Marks MariaDB objects, every Job and every Deployment done, as their controllers
/// would.
pub(crate) fn settle(cluster: &FakeCluster) {
    let ready = json!([{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
        "lastTransitionTime": "2026-12-03T08:00:00Z"}]);
    for kind in ["Database", "User", "Grant"] {
        if !cluster.names(kind).is_empty() {
            cluster.change(kind, NAME, |o| o["status"] = json!({"conditions": ready}));
        }
    }
    for job in cluster.names("Job") {
        cluster.change("Job", &job, |o| {
            o["status"] = json!({"succeeded": 1, "conditions": [{"type": "Complete",
                "status": "True"}]});
        });
    }
    for deployment in cluster.names("Deployment") {
        cluster.change("Deployment", &deployment, |o| {
            let generation = o["metadata"]["generation"].clone();
            o["status"] = json!({"observedGeneration": generation, "replicas": 1,
                "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1,
                "conditions": [{"type": "Available", "status": "True"}]});
        });
    }
}

/// Runs passes, settling the children between them, until one neither requeues nor
/// fails (at most 8).
pub(crate) fn converge(cluster: &FakeCluster) -> Outcome {
    for _ in 0..8 {
        let outcome = reconcile(cluster).expect("a pass");
        settle(cluster);
        if outcome.requeue_after.is_none() {
            return outcome;
        }
    }
    panic!("no convergence: {:?}", stored(cluster).status);
}

/// A pass over the stored Cinder.
pub(crate) fn pass(cluster: &FakeCluster) -> crate::pass::Pass<'_> {
    let cinder = stored(cluster);
    let owner = wasm_operator_sdk::Owner::of(&cinder).expect("an owner");
    crate::pass::Pass::new(cluster, cinder, owner)
}

/// `(status, reason, message)` of condition `type_` in a pass.
pub(crate) fn pass_condition(
    pass: &crate::pass::Pass<'_>,
    type_: &str,
) -> (String, String, String) {
    pass.cinder
        .status
        .as_ref()
        .and_then(|s| s.service.conditions.iter().find(|c| c.type_ == type_))
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
        .unwrap_or_default()
}

/// The text of data key `key` of Secret `name`.
pub(crate) fn secret_text(cluster: &FakeCluster, name: &str, key: &str) -> String {
    let data = cluster.secret_data(name);
    let bytes = data
        .get(key)
        .unwrap_or_else(|| panic!("key {key} in Secret {name}: {:?}", data.keys()));
    String::from_utf8(bytes.clone()).expect("text")
}
