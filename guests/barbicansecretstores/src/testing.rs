//! Test fixtures: a [`World`] of a FakeCluster, a [`FakeOpenBao`] and a pinned clock,
//! with the store `openstack/vault` of the Barbican `barbican` (brownfield or managed),
//! and builders for what it reads.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ClusterExt, Outcome, ReconcileError, Request};

use crate::openbao::fake::FakeOpenBao;
use crate::types::BarbicanSecretStore;

/// The namespace of everything.
pub(crate) const NS: &str = "openstack";
/// The store's name.
pub(crate) const STORE: &str = "vault";
/// The Barbican's name (and its Deployment's).
pub(crate) const BARBICAN: &str = "barbican";
/// The brownfield credentials Secret.
pub(crate) const CREDENTIALS: &str = "vault-credentials";
/// The brownfield CA bundle Secret.
pub(crate) const CA_BUNDLE: &str = "vault-ca";
/// The brownfield server.
pub(crate) const SERVER: &str = "https://openbao.example.com:8200";
/// The managed store's OpenBaoCluster.
pub(crate) const INSTANCE: &str = "bao";
/// The managed store's minted credentials Secret.
pub(crate) const MINTED: &str = "vault-approle";
/// The role ID of the AppRole `barbican`.
pub(crate) const ROLE_ID: &str = "role-1";
/// The provisioner's token the FakeCluster's TokenRequest answers.
pub(crate) const JWT: &str = "jwt-provisioner";
/// The Secret the Deployment's `config` volume mounts.
pub(crate) const PROJECTION_SECRET: &str = "barbican-config-0001";
/// The pinned clock.
pub(crate) const NOW: &str = "2026-12-03T12:00:00Z";

/// The pinned clock.
pub(crate) fn now() -> Timestamp {
    NOW.parse().expect("a timestamp")
}

/// `now` plus `seconds`.
pub(crate) fn at(seconds: i64) -> Timestamp {
    now()
        .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(seconds))
        .expect("in range")
}

fn store(open_bao: Value) -> Value {
    json!({
        "apiVersion": "barbican.openstack.c5c3.io/v1alpha1",
        "kind": "BarbicanSecretStore",
        "metadata": {"name": STORE, "namespace": NS, "generation": 2, "uid": "store-uid"},
        "spec": {"barbicanRef": {"name": BARBICAN}, "type": "OpenBao", "isDefault": true,
                 "openBao": open_bao},
    })
}

/// The brownfield store `vault`, with its CA bundle and the namespace `tenant-a`.
pub(crate) fn brownfield_store() -> Value {
    store(json!({
        "server": {"url": SERVER, "credentialsSecretRef": {"name": CREDENTIALS},
                   "caBundleSecretRef": {"name": CA_BUNDLE}},
        "kvMountpoint": "secrets",
        "namespace": "tenant-a",
    }))
}

/// The managed store `vault` of OpenBaoCluster `bao`.
pub(crate) fn managed_store() -> Value {
    store(json!({"instanceRef": {"name": INSTANCE}, "kvMountpoint": "barbican"}))
}

/// The Barbican `barbican`, on the management cluster unless `target` names another.
pub(crate) fn barbican(target: Option<&str>) -> Value {
    let mut barbican = json!({
        "apiVersion": "barbican.openstack.c5c3.io/v1alpha1",
        "kind": "Barbican",
        "metadata": {"name": BARBICAN, "namespace": NS},
        "spec": {"openStackRelease": "2025.2"},
    });
    if let Some(target) = target {
        barbican["spec"]["targetClusterRef"] = json!({"name": target});
    }
    barbican
}

/// A Secret `name` with `data` (text values) and `annotations`.
pub(crate) fn secret_annotated(name: &str, data: &[(&str, &str)], annotations: Value) -> Value {
    let mut secret = secret(name, data);
    secret["metadata"]["annotations"] = annotations;
    secret
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

/// The brownfield credentials Secret with both keys.
pub(crate) fn credentials() -> Value {
    secret(
        CREDENTIALS,
        &[("role-id", ROLE_ID), ("secret-id", "secret-a")],
    )
}

/// The brownfield CA bundle Secret.
pub(crate) fn ca_bundle() -> Value {
    secret(CA_BUNDLE, &[("ca.crt", "-----BEGIN CERTIFICATE-----\n")])
}

/// A server holding the AppRole `barbican` with secret ID `secret-a`, granted `caps` on
/// `secrets/data/probe`, and the mount `barbican`, the provisioner role, the TTL `ttl`.
pub(crate) fn openbao(caps: &[&str], ttl: u64) -> FakeOpenBao {
    FakeOpenBao::new()
        .with_mount("barbican")
        .with_approle("barbican", ROLE_ID, ttl)
        .with_secret_id("barbican", "secret-a")
        .granting("barbican", "secrets/data/probe", caps)
        .granting("barbican", "barbican/data/probe", caps)
        .with_kubernetes_role("provisioner", JWT)
}

/// Everything Barbican's vault plugin needs.
pub(crate) const ALL: [&str; 5] = ["create", "read", "update", "delete", "list"];

/// The Barbican's Deployment mounting [`PROJECTION_SECRET`] as its volume `volume`.
pub(crate) fn deployment(volume: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": BARBICAN, "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "barbican"}},
                 "template": {"spec": {"containers": [{"name": "barbican-api"}],
                     "volumes": [{"name": volume, "secret": {"secretName": PROJECTION_SECRET}}]}}},
    })
}

/// The projection Secret with `barbican.conf` = `rendered`.
pub(crate) fn projection(rendered: &str) -> Value {
    secret(PROJECTION_SECRET, &[("barbican.conf", rendered)])
}

/// A barbican.conf carrying the store's section.
pub(crate) const RENDERED: &str = "[DEFAULT]\ndebug = false\n\n[secretstore:vault]\n\
    secret_store_plugin = vault_plugin\nglobal_default = True\n\n[secretstore:vault2]\n";

/// The OpenBaoCluster `bao`, Available or not.
pub(crate) fn openbao_cluster(available: bool) -> Value {
    let status = if available { "True" } else { "False" };
    json!({"apiVersion": "openbao.org/v1alpha1", "kind": "OpenBaoCluster",
           "metadata": {"name": INSTANCE, "namespace": NS},
           "status": {"phase": "Running",
                      "conditions": [{"type": "Available", "status": status,
                                      "reason": "AllReplicasReady", "message": "",
                                      "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
}

/// The provisioner ServiceAccount `bao-provisioner`.
pub(crate) fn provisioner_account() -> Value {
    json!({"apiVersion": "v1", "kind": "ServiceAccount",
           "metadata": {"name": "bao-provisioner", "namespace": NS}})
}

/// What a TokenRequest answers.
pub(crate) fn token_answer() -> Value {
    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
           "spec": {"audiences": [INSTANCE]},
           "status": {"token": JWT, "expirationTimestamp": "2026-12-03T12:10:00Z"}})
}

/// A store, what it reads, its OpenBao and the clock.
pub(crate) struct World {
    pub(crate) cluster: FakeCluster,
    pub(crate) bao: FakeOpenBao,
    pub(crate) now: Timestamp,
}

impl World {
    /// `store` alone, against `bao`.
    pub(crate) fn of(store: Value, bao: FakeOpenBao) -> Self {
        Self {
            cluster: FakeCluster::new()
                .with(store)
                .answer_subresource("token", token_answer()),
            bao,
            now: now(),
        }
    }

    /// The brownfield store with its Barbican, credentials and CA bundle, against a
    /// server granting `caps`; nothing projected.
    pub(crate) fn brownfield(caps: &[&str]) -> Self {
        Self::of(brownfield_store(), openbao(caps, 3600))
            .with(barbican(None))
            .with(credentials())
            .with(ca_bundle())
    }

    /// The managed store with its Barbican, an Available instance, its CA and provisioner
    /// account, against a provisioned server minting secret IDs of `ttl` s; nothing
    /// projected.
    pub(crate) fn managed(ttl: u64) -> Self {
        Self::of(managed_store(), openbao(&ALL, ttl))
            .with(barbican(None))
            .with(openbao_cluster(true))
            .with(secret(
                "bao-tls-ca",
                &[("ca.crt", "-----BEGIN CERTIFICATE-----\n")],
            ))
            .with(provisioner_account())
    }

    /// The store's section mounted.
    pub(crate) fn projected(self) -> Self {
        self.with(deployment("config")).with(projection(RENDERED))
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
            name: STORE.into(),
        };
        crate::reconcile::reconcile_with(&self.cluster, &request, &self.bao, self.now)
    }

    /// The store as stored.
    pub(crate) fn stored(&self) -> BarbicanSecretStore {
        self.cluster
            .get_typed(Some(NS), STORE)
            .expect("readable")
            .expect("the store exists")
    }

    /// The store as stored, as JSON.
    pub(crate) fn stored_json(&self) -> Value {
        serde_json::to_value(self.stored()).expect("encodes")
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

    /// The events recorded, as (type, reason, note).
    pub(crate) fn events(&self) -> Vec<(String, String, String)> {
        self.cluster
            .events()
            .into_iter()
            .map(|(_, e)| (format!("{:?}", e.event_type), e.reason, e.note))
            .collect()
    }

    /// The writes the passes made, as the FakeCluster lists them.
    pub(crate) fn writes(&self) -> Vec<String> {
        self.cluster.write_log()
    }

    /// The minted credentials Secret, if written.
    pub(crate) fn minted(&self) -> Option<k8s_openapi::api::core::v1::Secret> {
        self.cluster.get_typed(Some(NS), MINTED).expect("readable")
    }
}

/// A condition as (status, reason, message).
pub(crate) type Said = (String, String, String);

/// `(status, reason, message)` owned, for comparing.
pub(crate) fn cond(status: &str, reason: &str, message: &str) -> Said {
    (status.into(), reason.into(), message.into())
}
