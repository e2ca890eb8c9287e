//! Test fixtures: a FakeCluster holding the Barbican `openstack/barbican`, its credentials,
//! a ready MariaDB, and BarbicanSecretStores made by [`store`].

use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ClusterExt, Outcome, ReconcileError, Request};

use crate::types::Barbican;

/// The namespace of everything.
pub(crate) const NS: &str = "openstack";
/// The Barbican's name.
pub(crate) const NAME: &str = "barbican";

/// The Barbican `openstack/barbican` (generation 2) on the managed MariaDB `maria`.
pub(crate) fn barbican() -> Value {
    json!({
        "apiVersion": "barbican.openstack.c5c3.io/v1alpha1", "kind": "Barbican",
        "metadata": {"name": NAME, "namespace": NS, "uid": "barbican-uid", "generation": 2},
        "spec": {
            "openStackRelease": "2025.2",
            "image": {"repository": "ghcr.io/c5c3/barbican", "tag": "2025.2"},
            "database": {"clusterRef": {"name": "maria"}, "database": "barbican",
                         "secretRef": {"name": "barbican-db"}},
            "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.pymemcache"},
            "keystoneEndpoint": "http://keystone.openstack.svc:5000/v3",
            "serviceUser": {"secretRef": {"name": "barbican-service"}},
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

/// The AppRole credentials Secret `{name}-approle-creds` of a brownfield store.
pub(crate) fn credentials_secret(name: &str) -> Value {
    secret(
        &format!("{name}-creds"),
        &[("role-id", "role-1234"), ("secret-id", "secret-5678")],
    )
}

/// A brownfield BarbicanSecretStore `name` of the Barbican at `https://{name}.example.com`,
/// credential-ready (or not), the default (or not).
pub(crate) fn store(name: &str, ready: bool, default: bool) -> Value {
    let status = if ready { "True" } else { "False" };
    json!({
        "apiVersion": "barbican.openstack.c5c3.io/v1alpha1", "kind": "BarbicanSecretStore",
        "metadata": {"name": name, "namespace": NS, "uid": format!("{name}-uid")},
        "spec": {"barbicanRef": {"name": NAME}, "type": "OpenBao", "isDefault": default,
                 "openBao": {"server": {"url": format!("https://{name}.example.com:8200"),
                                        "credentialsSecretRef": {"name": format!("{name}-creds")}},
                             "kvMountpoint": "barbican"}},
        "status": {"conditions": [{"type": "CredentialsReady", "status": status,
            "reason": "CredentialsAvailable", "message": "",
            "lastTransitionTime": "2026-12-03T08:00:00Z"}]},
    })
}

/// The cluster: the Barbican, its credentials and a ready MariaDB.
pub(crate) fn cluster() -> FakeCluster {
    children_cluster().with(barbican())
}

/// What the Barbican's children need where they run: its credentials and a ready MariaDB.
pub(crate) fn children_cluster() -> FakeCluster {
    FakeCluster::new()
        .with(secret(
            "barbican-db",
            &[("username", "barbican"), ("password", "db-pw")],
        ))
        .with(secret("barbican-service", &[("password", "svc-pw")]))
        .with(
            json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
            "metadata": {"name": "maria", "namespace": NS},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
                "message": "", "lastTransitionTime": "2026-12-03T08:00:00Z"}]}}),
        )
}

/// [`cluster`] with the credential-ready default store `name` and its credentials.
pub(crate) fn cluster_with_store(name: &str) -> FakeCluster {
    cluster()
        .with(store(name, true, true))
        .with(credentials_secret(name))
}

/// Runs one pass.
pub(crate) fn reconcile(cluster: &FakeCluster) -> Result<Outcome, ReconcileError> {
    let request = Request {
        namespace: Some(NS.into()),
        name: NAME.into(),
    };
    crate::reconcile::reconcile(cluster, &request)
}

/// The Barbican as the cluster holds it.
pub(crate) fn stored(cluster: &FakeCluster) -> Barbican {
    cluster
        .get_typed::<Barbican>(Some(NS), NAME)
        .expect("reads")
        .expect("the Barbican")
}

/// `(status, reason, message)` of condition `type_` of the stored Barbican.
pub(crate) fn condition(cluster: &FakeCluster, type_: &str) -> (String, String, String) {
    stored(cluster)
        .status
        .and_then(|s| s.service.conditions.into_iter().find(|c| c.type_ == type_))
        .map(|c| (c.status, c.reason, c.message))
        .unwrap_or_default()
}

/// Marks MariaDB objects, the db-sync Job and the Deployment done, as their controllers
/// would.
pub(crate) fn settle(cluster: &FakeCluster) {
    let ready = json!([{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
        "lastTransitionTime": "2026-12-03T08:00:00Z"}]);
    for kind in ["Database", "User", "Grant"] {
        if !cluster.names(kind).is_empty() {
            cluster.change(kind, NAME, |o| o["status"] = json!({"conditions": ready}));
        }
    }
    let job = format!("{NAME}-db-sync");
    if cluster.names("Job").contains(&job) {
        cluster.change("Job", &job, |o| {
            o["status"] = json!({"succeeded": 1, "conditions": [{"type": "Complete",
                "status": "True"}]});
        });
    }
    if cluster.names("Deployment").contains(&NAME.to_owned()) {
        cluster.change("Deployment", NAME, |o| {
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

/// A pass over the stored Barbican.
pub(crate) fn pass(cluster: &FakeCluster) -> crate::pass::Pass<'_> {
    let barbican = stored(cluster);
    let owner = wasm_operator_sdk::Owner::of(&barbican).expect("an owner");
    crate::pass::Pass::new(cluster, barbican, owner)
}

/// `(status, reason, message)` of condition `type_` in a pass.
pub(crate) fn pass_condition(
    pass: &crate::pass::Pass<'_>,
    type_: &str,
) -> (String, String, String) {
    pass.barbican
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
