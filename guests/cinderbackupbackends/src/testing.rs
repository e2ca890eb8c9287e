//! Test fixtures: a [`World`] of a FakeCluster with the backup target `openstack/nfsbk`
//! (or the RBD target `openstack/rbdbk`) of the Cinder `cinder`, and builders for the
//! Cinder, the RBD key Secret, its ExternalSecret and the Cinder's backup Deployment.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ClusterExt, Outcome, ReconcileError, Request};

use crate::types::CinderBackupBackend;

/// The namespace of everything.
pub(crate) const NS: &str = "openstack";
/// The NFS target's name.
pub(crate) const NFS: &str = "nfsbk";
/// The RBD target's name.
pub(crate) const RBD: &str = "rbdbk";
/// The Cinder's name.
pub(crate) const CINDER: &str = "cinder";
/// The RBD key Secret.
pub(crate) const KEY_SECRET: &str = "rbdbk-key";
/// A cephx key.
pub(crate) const CEPHX_KEY: &str = "AQDHlkVoYx3QKRAAk9m6j4QzG8w2yK0hfr9c6g==";
/// The Secret the backup Deployment's `backup` volume mounts for the NFS target.
pub(crate) const PROJECTION_SECRET: &str = "cinder-backup-nfsbk-5f7c9d";

/// The NFS target `nfsbk` of Cinder `cinder`, generation 3, as defaulted.
pub(crate) fn nfs_target() -> Value {
    json!({
        "apiVersion": "cinder.openstack.c5c3.io/v1alpha1",
        "kind": "CinderBackupBackend",
        "metadata": {"name": NFS, "namespace": NS, "generation": 3, "uid": "nfs-uid"},
        "spec": {
            "cinderRef": {"name": CINDER},
            "type": "NFS",
            "nfs": {"server": "nfs.example.com", "path": "/exports/backup",
                    "mountOptions": "nfsvers=4.1,soft,timeo=30,retrans=2"},
            "fileSize": 52428800,
            "compression": "zlib",
        },
    })
}

/// The RBD target `rbdbk` of Cinder `cinder`, generation 3, as defaulted.
pub(crate) fn rbd_target() -> Value {
    json!({
        "apiVersion": "cinder.openstack.c5c3.io/v1alpha1",
        "kind": "CinderBackupBackend",
        "metadata": {"name": RBD, "namespace": NS, "generation": 3, "uid": "rbd-uid"},
        "spec": {
            "cinderRef": {"name": CINDER},
            "type": "RBD",
            "rbd": {"pool": "backups", "user": "cinder-backup", "monitors": ["mon-a.ceph.svc"],
                    "networks": ["10.0.0.0/16"], "clusterName": "ceph",
                    "keySecretRef": {"name": KEY_SECRET}},
            "fileSize": 52428800,
            "compression": "zlib",
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

/// The backup Deployment `cinder-backup` mounting `secret` as its volume `volume`.
pub(crate) fn deployment(volume: &str, secret: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "cinder-backup", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "cinder"}},
                 "template": {"spec": {"containers": [{"name": "cinder-backup"}],
                     "volumes": [{"name": "config", "secret": {"secretName": "cinder-config-1"}},
                                 {"name": volume, "secret": {"secretName": secret}}]}}},
    })
}

/// A backup target and what it reads.
pub(crate) struct World {
    pub(crate) cluster: FakeCluster,
    name: &'static str,
}

impl World {
    /// `target` alone (its name read off it).
    pub(crate) fn of(target: Value) -> Self {
        let name = if target["metadata"]["name"] == RBD {
            RBD
        } else {
            NFS
        };
        Self {
            cluster: FakeCluster::new().with(target),
            name,
        }
    }

    /// The NFS target and its Cinder; nothing projected.
    pub(crate) fn attached() -> Self {
        Self::of(nfs_target()).with(cinder(None))
    }

    /// [`attached`](Self::attached), with the target's Secret mounted.
    pub(crate) fn projected() -> Self {
        Self::attached().with(deployment("backup", PROJECTION_SECRET))
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

    /// The target as stored.
    pub(crate) fn stored(&self) -> CinderBackupBackend {
        self.cluster
            .get_typed(Some(NS), self.name)
            .expect("readable")
            .expect("the target exists")
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
