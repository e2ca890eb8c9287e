//! Test fixtures: a [`World`] of a FakeCluster with the backend `openstack/images` of the
//! Glance `glance`, and builders for the Glance, the credentials Secret, its
//! ExternalSecret and the Glance's Deployment.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ClusterExt, Outcome, ReconcileError, Request};

use crate::types::GlanceBackend;

/// The namespace of everything.
pub(crate) const NS: &str = "openstack";
/// The backend's name.
pub(crate) const BACKEND: &str = "images";
/// The Glance's name (and its Deployment's).
pub(crate) const GLANCE: &str = "glance";
/// The S3 credentials Secret.
pub(crate) const CREDENTIALS: &str = "images-s3";
/// The Secret the Deployment's `backends` volume mounts.
pub(crate) const PROJECTION_SECRET: &str = "glance-backends-0001";

/// The backend `images` of Glance `glance`, the default store, generation 3.
pub(crate) fn backend() -> Value {
    json!({
        "apiVersion": "glance.openstack.c5c3.io/v1alpha1",
        "kind": "GlanceBackend",
        "metadata": {"name": BACKEND, "namespace": NS, "generation": 3, "uid": "backend-uid"},
        "spec": {
            "glanceRef": {"name": GLANCE},
            "type": "S3",
            "isDefault": true,
            "s3": {"host": "https://s3.example.com", "bucket": "images",
                   "credentialsSecretRef": {"name": CREDENTIALS}, "bucketURLFormat": "path"},
        },
    })
}

/// The Glance `glance`, on the management cluster unless `target` names another.
pub(crate) fn glance(target: Option<&str>) -> Value {
    let mut glance = json!({
        "apiVersion": "glance.openstack.c5c3.io/v1alpha1",
        "kind": "Glance",
        "metadata": {"name": GLANCE, "namespace": NS},
        "spec": {"openStackRelease": "2025.2"},
    });
    if let Some(target) = target {
        glance["spec"]["targetClusterRef"] = json!({"name": target});
    }
    glance
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

/// The credentials Secret with both keys.
pub(crate) fn credentials() -> Value {
    secret(
        CREDENTIALS,
        &[("access-key-id", "AKIA"), ("secret-access-key", "s3cr3t")],
    )
}

/// The ExternalSecret of the credentials, synced by ESO or not.
pub(crate) fn external_secret(synced: bool) -> Value {
    let status = if synced { "True" } else { "False" };
    json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
           "metadata": {"name": CREDENTIALS, "namespace": NS},
           "status": {"conditions": [{"type": "Ready", "status": status}]}})
}

/// The Glance's Deployment mounting [`PROJECTION_SECRET`] as its volume `volume`.
pub(crate) fn deployment(volume: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": GLANCE, "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "glance"}},
                 "template": {"spec": {"containers": [{"name": "glance-api"}],
                     "volumes": [{"name": "config", "secret": {"secretName": "glance-config-1"}},
                                 {"name": volume, "secret": {"secretName": PROJECTION_SECRET}}]}}},
    })
}

/// The projection Secret with `backends.conf` = `rendered`.
pub(crate) fn projection(rendered: &str) -> Value {
    secret(PROJECTION_SECRET, &[("backends.conf", rendered)])
}

/// A backends.conf carrying the backend's section.
pub(crate) const RENDERED: &str = "[images]\ns3_store_host = https://s3.example.com\n\
    s3_store_bucket = images\n\n[archive]\ns3_store_host = https://s3.example.com\n";

/// A backend and what it reads.
pub(crate) struct World {
    pub(crate) cluster: FakeCluster,
}

impl World {
    /// `backend` alone.
    pub(crate) fn of(backend: Value) -> Self {
        Self {
            cluster: FakeCluster::new().with(backend),
        }
    }

    /// The backend, its Glance and its credentials; nothing projected.
    pub(crate) fn credentialed() -> Self {
        Self::of(backend()).with(glance(None)).with(credentials())
    }

    /// [`credentialed`](Self::credentialed), with the backend's section mounted.
    pub(crate) fn projected() -> Self {
        Self::credentialed()
            .with(deployment("backends"))
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
            name: BACKEND.into(),
        };
        crate::reconcile::reconcile(&self.cluster, &request)
    }

    /// The backend as stored.
    pub(crate) fn stored(&self) -> GlanceBackend {
        self.cluster
            .get_typed(Some(NS), BACKEND)
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
