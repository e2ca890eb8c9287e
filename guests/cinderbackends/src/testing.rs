//! Test fixtures: a [`World`] of a FakeCluster with the backend `openstack/nfs-a` (or the
//! RBD backend `openstack/rbd-a`) of the Cinder `cinder`, and builders for the Cinder, the
//! RBD key Secret, its ExternalSecret and the backend's cinder-volume Deployment.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ClusterExt, Outcome, ReconcileError, Request};

use crate::detach::FINALIZER;
use crate::types::CinderBackend;

/// The namespace of everything.
pub(crate) const NS: &str = "openstack";
/// The NFS backend's name.
pub(crate) const NFS: &str = "nfs-a";
/// The RBD backend's name.
pub(crate) const RBD: &str = "rbd-a";
/// The Cinder's name.
pub(crate) const CINDER: &str = "cinder";
/// The RBD key Secret.
pub(crate) const KEY_SECRET: &str = "rbd-a-key";
/// A cephx key.
pub(crate) const CEPHX_KEY: &str = "AQDHlkVoYx3QKRAAk9m6j4QzG8w2yK0hfr9c6g==";
/// The Secret the Deployment's `backend` volume mounts.
pub(crate) const PROJECTION_SECRET: &str = "cinder-backend-nfs-a-0001";

/// The NFS backend `nfs-a` of Cinder `cinder`, generation 3, holding the finalizer.
pub(crate) fn nfs_backend() -> Value {
    json!({
        "apiVersion": "cinder.openstack.c5c3.io/v1alpha1",
        "kind": "CinderBackend",
        "metadata": {"name": NFS, "namespace": NS, "generation": 3, "uid": "nfs-uid",
                     "finalizers": [FINALIZER]},
        "spec": {
            "cinderRef": {"name": CINDER},
            "type": "NFS",
            "nfs": {"server": "nfs.example.com", "path": "/exports/cinder",
                    "mountOptions": "nfsvers=4.1,soft,timeo=30,retrans=2"},
        },
    })
}

/// The RBD backend `rbd-a` of Cinder `cinder`, generation 3, holding the finalizer.
pub(crate) fn rbd_backend() -> Value {
    json!({
        "apiVersion": "cinder.openstack.c5c3.io/v1alpha1",
        "kind": "CinderBackend",
        "metadata": {"name": RBD, "namespace": NS, "generation": 3, "uid": "rbd-uid",
                     "finalizers": [FINALIZER]},
        "spec": {
            "cinderRef": {"name": CINDER},
            "type": "RBD",
            "rbd": {"pool": "volumes", "user": "cinder", "monitors": ["mon-a.ceph.svc"],
                    "networks": ["10.0.0.0/16"], "clusterName": "ceph",
                    "keySecretRef": {"name": KEY_SECRET}},
        },
    })
}

/// The Cinder `cinder`, on the management cluster unless `target` names another.
pub(crate) fn cinder(target: Option<&str>) -> Value {
    let mut cinder = json!({
        "apiVersion": "cinder.openstack.c5c3.io/v1alpha1",
        "kind": "Cinder",
        "metadata": {"name": CINDER, "namespace": NS},
        "spec": {"openStackRelease": "2025.2"},
    });
    if let Some(target) = target {
        cinder["spec"]["targetClusterRef"] = json!({"name": target});
    }
    cinder
}

/// A Secret `name` with `data` (text values).
pub(crate) fn secret(name: &str, data: &[(&str, &str)]) -> Value {
    use wasm_operator_sdk::k8s_openapi::ByteString;
    let data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(k, v)| {
            let encoded =
                serde_json::to_value(ByteString(v.as_bytes().to_vec())).expect("bytes encode");
            ((*k).to_owned(), encoded)
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Secret",
           "metadata": {"name": name, "namespace": NS}, "data": data})
}

/// The RBD key Secret with `userKey` = `key`.
pub(crate) fn key_secret(key: &str) -> Value {
    secret(KEY_SECRET, &[("userKey", key)])
}

/// The ExternalSecret of the RBD key, synced by ESO or not.
pub(crate) fn external_secret(synced: bool) -> Value {
    let status = if synced { "True" } else { "False" };
    json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
           "metadata": {"name": KEY_SECRET, "namespace": NS},
           "status": {"conditions": [{"type": "Ready", "status": status}]}})
}

/// The cinder-volume Deployment `name` mounting [`PROJECTION_SECRET`] as its volume
/// `volume`.
pub(crate) fn deployment(name: &str, volume: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "cinder"}},
                 "template": {"spec": {"containers": [{"name": "cinder-volume"}],
                     "volumes": [{"name": "volume-overlay", "secret": {"secretName": "x-1"}},
                                 {"name": volume, "secret": {"secretName": PROJECTION_SECRET}}]}}},
    })
}

/// The projection Secret with `backend.conf` = `rendered`.
pub(crate) fn projection(rendered: &str) -> Value {
    secret(PROJECTION_SECRET, &[("backend.conf", rendered)])
}

/// A backend.conf carrying the NFS backend's section.
pub(crate) const RENDERED: &str = "[nfs-a]\nbackend_host = cinder\n\
    volume_backend_name = nfs-a\nvolume_driver = cinder.volume.drivers.nfs.NfsDriver\n";

/// A backend and what it reads.
pub(crate) struct World {
    pub(crate) cluster: FakeCluster,
    name: &'static str,
}

impl World {
    /// `backend` alone (its name read off it).
    pub(crate) fn of(backend: Value) -> Self {
        let name = if backend["metadata"]["name"] == RBD {
            RBD
        } else {
            NFS
        };
        Self {
            cluster: FakeCluster::new().with(backend),
            name,
        }
    }

    /// The NFS backend and its Cinder; nothing projected.
    pub(crate) fn attached() -> Self {
        Self::of(nfs_backend()).with(cinder(None))
    }

    /// [`attached`](Self::attached), with the backend's section mounted.
    pub(crate) fn projected() -> Self {
        Self::attached()
            .with(deployment("cinder-volume-nfs-a", "backend"))
            .with(projection(RENDERED))
    }

    /// Adds an object to the cluster.
    pub(crate) fn with(mut self, object: Value) -> Self {
        self.cluster = self.cluster.with(object);
        self
    }

    /// One pass.
    pub(crate) fn run(&self) -> Result<Outcome, ReconcileError> {
        let request = Request {
            namespace: Some(NS.into()),
            name: self.name.into(),
        };
        crate::reconcile::reconcile(&self.cluster, &request)
    }

    /// The backend as stored.
    pub(crate) fn stored(&self) -> CinderBackend {
        self.cluster
            .get_typed(Some(NS), self.name)
            .expect("readable")
            .expect("the backend exists")
    }

    /// The stored condition `type_`.
    pub(crate) fn condition(&self, type_: &str) -> Option<Condition> {
        let status = self.stored().status?;
        status.conditions.into_iter().find(|c| c.type_ == type_)
    }

    /// The stored condition `type_` as (status, reason, message).
    pub(crate) fn said(&self, type_: &str) -> Said {
        let c = self
            .condition(type_)
            .unwrap_or_else(|| panic!("no {type_} condition"));
        (c.status, c.reason, c.message)
    }

    /// How many status writes the passes made.
    pub(crate) fn status_writes(&self) -> usize {
        self.cluster
            .write_log()
            .iter()
            .filter(|w| w.starts_with("update-status"))
            .count()
    }
}

/// A condition as (status, reason, message).
pub(crate) type Said = (String, String, String);

/// `(status, reason, message)` owned, for comparing.
pub(crate) fn cond(status: &str, reason: &str, message: &str) -> Said {
    (status.into(), reason.into(), message.into())
}

/// Ready while a sub-condition is not True.
pub(crate) fn not_all_ready() -> Said {
    cond(
        "False",
        "NotAllReady",
        "One or more sub-conditions are not ready",
    )
}
