//! The managed mode: for each OpenBaoCluster (`openbao.org/v1alpha1`) the actor runs a
//! stand-in server of its own and makes what the OpenBao operator, cert-manager and
//! CobaltCore's ControlPlane leave around a dedicated instance, so a managed
//! BarbicanSecretStore finds everything its controller reads (facts §3.6, managed flow):
//!
//! - a server with its own data, provisioned as the self-init requests leave it
//!   ([`super::provision`]), its certificate valid for `{name}.{ns}.svc`,
//!   `{name}.{ns}.svc.cluster.local` and `127.0.0.1`, signed by a CA of its own;
//! - Secret `{name}-tls-ca` carrying that CA as `ca.crt`;
//! - ServiceAccount `{name}-provisioner` (no auto-mounted token), the `provisioner` role's;
//! - the operator's headless Service `{name}`, port `api` 8200, and the EndpointSlice
//!   `{name}-stand-in` (manager [`ENDPOINT_MANAGER`]) pointing at the server's loopback
//!   port, ready while the cluster is available, so `https://{name}.{ns}.svc:8200`
//!   resolves to it;
//! - the status the operator's status controller writes (manager
//!   [`OPENBAO_STATUS_MANAGER`]): `phase`, `readyReplicas`, `currentVersion` and the
//!   `Available` condition, True (`AllReplicasReady`) once all of the above is served.
//!
//! Children are applied under [`OPENBAO_CHILD_MANAGER`] with the cluster as their
//! controlling owner (the EndpointSlice is the Service's), so deleting the OpenBaoCluster
//! has the garbage collector remove them; the actor stops the server once the cluster is
//! gone (or was recreated: a new uid gets a new server).
//!
//! Fault toggle: [`NOT_READY_ANNOTATION`](crate::NOT_READY_ANNOTATION) on the cluster keeps
//! `Available=False` (`NoReplicasReady`, with the annotation's message) and the endpoint
//! not ready; removing it makes the cluster available again.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use base64::Engine as _;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::controls::OpenBaoStandIn;
use super::{OpenBao, SpawnError, provision};
use crate::actors::keystone::ENDPOINT_MANAGER;
use crate::actors::kit::{self, Condition, Kind, Pass};
use crate::actors::{Actor, ActorError};

/// The field manager of the status the actor writes (the OpenBao operator's status
/// controller's).
pub const OPENBAO_STATUS_MANAGER: &str = "openbao-status-controller";
/// The field manager of the objects the actor makes for an OpenBaoCluster.
pub const OPENBAO_CHILD_MANAGER: &str = "openbao-operator";
/// The port the instance serves its API on, and the Service port's name.
const API_PORT: u16 = 8200;
const API_PORT_NAME: &str = "api";

/// The OpenBaoCluster kind.
pub(crate) const OPENBAO_CLUSTER: Kind = Kind {
    group: "openbao.org",
    version: "v1alpha1",
    kind: "OpenBaoCluster",
    plural: "openbaoclusters",
    namespaced: true,
};

const CRDS: &str = include_str!("../../../../../crds/external/openbao.yaml");

/// Why one OpenBaoCluster could not be served (retried on the next pass).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ManagedError {
    #[error("OpenBaoCluster {namespace}/{name}: cannot start its server: {source}")]
    Spawn {
        namespace: String,
        name: String,
        #[source]
        source: SpawnError,
    },
    #[error("OpenBaoCluster {namespace}/{name}: cannot provision its server: {source}")]
    Provision {
        namespace: String,
        name: String,
        #[source]
        source: super::OpenBaoControlError,
    },
    #[error("OpenBaoCluster {namespace}/{name}: cannot {action}: {source}")]
    Kube {
        namespace: String,
        name: String,
        action: &'static str,
        #[source]
        source: kube::Error,
    },
}

/// One cluster's server and the task serving it.
struct Instance {
    uid: String,
    bao: Arc<OpenBao>,
    task: JoinHandle<()>,
}

/// The servers by (namespace, name).
#[derive(Default)]
pub(crate) struct Instances {
    map: Mutex<BTreeMap<(String, String), Instance>>,
}

impl Instances {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<(String, String), Instance>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The server of `namespace/name`, when it runs.
    pub(crate) fn get(&self, namespace: &str, name: &str) -> Option<Arc<OpenBao>> {
        self.lock()
            .get(&(namespace.to_owned(), name.to_owned()))
            .map(|i| i.bao.clone())
    }

    /// Stops every server whose cluster is not in `live` (by key and uid).
    fn retain(&self, live: &BTreeSet<(String, String, String)>) {
        self.lock().retain(|(namespace, name), instance| {
            let keep = live.contains(&(namespace.clone(), name.clone(), instance.uid.clone()));
            if !keep {
                instance.task.abort();
                tracing::info!(
                    namespace,
                    cluster = name,
                    "OpenBaoCluster gone; its stand-in stopped"
                );
            }
            keep
        });
    }
}

impl Drop for Instances {
    fn drop(&mut self) {
        for instance in self
            .map
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
        {
            instance.task.abort();
        }
    }
}

/// Installs the CRD and starts the loop.
pub(crate) async fn start(
    client: &kube::Client,
    instances: &Arc<Instances>,
) -> Result<Vec<JoinHandle<()>>, ActorError> {
    kit::install_crds(client, Actor::OpenBao, OPENBAO_CHILD_MANAGER, CRDS).await?;
    let wake = Arc::new(Notify::new());
    let mut tasks = kit::spawn_watchers(Actor::OpenBao, client, &[OPENBAO_CLUSTER], &wake);
    let pass = Arc::new(Managed {
        client: client.clone(),
        instances: instances.clone(),
    });
    tasks.push(kit::spawn_loop(pass, wake));
    Ok(tasks)
}

struct Managed {
    client: kube::Client,
    instances: Arc<Instances>,
}

impl Pass for Managed {
    async fn pass(&self) {
        let clusters = match OPENBAO_CLUSTER.list(&self.client).await {
            Ok(clusters) => clusters,
            Err(error) => {
                tracing::warn!(%error, "the OpenBao actor cannot list OpenBaoClusters");
                return;
            }
        };
        let mut live = BTreeSet::new();
        for cluster in clusters.iter().filter(|c| !kit::is_deleting(c)) {
            let (namespace, name) = kit::namespace_name(cluster);
            let namespace = namespace.unwrap_or_default();
            let uid = kit::str_at(cluster, "/metadata/uid")
                .unwrap_or_default()
                .to_owned();
            live.insert((namespace.clone(), name.clone(), uid.clone()));
            if let Err(error) = self.reconcile(cluster, &namespace, &name, &uid).await {
                tracing::warn!(%error, "OpenBaoCluster not served yet; retrying");
            }
        }
        self.instances.retain(&live);
    }
}

impl Managed {
    /// The cluster's server, started and provisioned on first sight (or a new uid).
    async fn server(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
    ) -> Result<Arc<OpenBao>, ManagedError> {
        let key = (namespace.to_owned(), name.to_owned());
        if let Some(found) = self.instances.lock().get(&key).filter(|i| i.uid == uid) {
            return Ok(found.bao.clone());
        }
        let names = vec![
            format!("{name}.{namespace}.svc"),
            format!("{name}.{namespace}.svc.cluster.local"),
            "127.0.0.1".to_owned(),
        ];
        let (bao, task) = OpenBao::spawn(self.client.clone(), names)
            .await
            .map_err(|source| ManagedError::Spawn {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                source,
            })?;
        let controls = OpenBaoStandIn { bao: bao.clone() };
        if let Err(source) = provision::self_init(&controls, namespace, name) {
            task.abort();
            return Err(ManagedError::Provision {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                source,
            });
        }
        tracing::info!(namespace, cluster = name, addr = %bao.addr, "OpenBaoCluster stand-in started");
        let previous = self.instances.lock().insert(
            key,
            Instance {
                uid: uid.to_owned(),
                bao: bao.clone(),
                task,
            },
        );
        if let Some(previous) = previous {
            previous.task.abort();
        }
        Ok(bao)
    }

    async fn reconcile(
        &self,
        cluster: &Value,
        namespace: &str,
        name: &str,
        uid: &str,
    ) -> Result<(), ManagedError> {
        let kube = |action: &'static str| {
            move |source| ManagedError::Kube {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                action,
                source,
            }
        };
        let bao = self.server(namespace, name, uid).await?;
        let owner = json!([{
            "apiVersion": OPENBAO_CLUSTER.api_version(), "kind": OPENBAO_CLUSTER.kind,
            "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true,
        }]);
        let labels = json!({"openbao.org/cluster": name});
        let ca = base64::engine::general_purpose::STANDARD.encode(&bao.ca_pem);
        self.apply(namespace, &kit::SECRET, json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": format!("{name}-tls-ca"), "labels": labels, "ownerReferences": owner},
            "type": "Opaque",
            "data": {"ca.crt": ca},
        }), OPENBAO_CHILD_MANAGER).await.map_err(kube("apply the CA Secret"))?;
        self.apply(
            namespace,
            &SERVICE_ACCOUNT,
            json!({
                "apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": format!("{name}{}", provision::PROVISIONER_SA_SUFFIX),
                             "labels": labels, "ownerReferences": owner},
                "automountServiceAccountToken": false,
            }),
            OPENBAO_CHILD_MANAGER,
        )
        .await
        .map_err(kube("apply the provisioner ServiceAccount"))?;
        let service = self.apply(namespace, &SERVICE, json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "labels": labels, "ownerReferences": owner},
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": true, "selector": labels,
                     "ports": [{"name": API_PORT_NAME, "port": API_PORT, "protocol": "TCP"}]},
        }), OPENBAO_CHILD_MANAGER).await.map_err(kube("apply the Service"))?;
        let toggle = kit::not_ready_toggle(cluster);
        let available = toggle.is_none();
        let service_uid = kit::str_at(&service, "/metadata/uid").unwrap_or_default();
        self.apply(namespace, &ENDPOINT_SLICE, json!({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {
                "name": format!("{name}-stand-in"),
                "labels": {"kubernetes.io/service-name": name,
                           "endpointslice.kubernetes.io/managed-by": ENDPOINT_MANAGER},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": name,
                                     "uid": service_uid, "controller": true, "blockOwnerDeletion": true}],
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["127.0.0.1"],
                           "conditions": {"ready": available, "serving": available, "terminating": false}}],
            "ports": [{"name": API_PORT_NAME, "port": bao.addr.port(), "protocol": "TCP"}],
        }), ENDPOINT_MANAGER).await.map_err(kube("apply the EndpointSlice"))?;
        let replicas = cluster
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(3);
        let condition = match &toggle {
            None => Condition::new(
                "Available",
                true,
                "AllReplicasReady",
                format!("All {replicas} replicas are ready"),
            ),
            Some(message) => Condition::new("Available", false, "NoReplicasReady", message.clone()),
        };
        let status = json!({
            "phase": if available { "Running" } else { "Initializing" },
            "readyReplicas": if available { replicas } else { 0 },
            "currentVersion": kit::str_at(cluster, "/spec/version").unwrap_or_default(),
            "conditions": kit::conditions(cluster, &[condition], true),
        });
        kit::apply_status(
            &self.client,
            &OPENBAO_CLUSTER,
            cluster,
            OPENBAO_STATUS_MANAGER,
            status,
        )
        .await
        .map_err(kube("write the status"))?;
        Ok(())
    }

    /// Applies `body` in `namespace` under `manager`; answers the stored object.
    async fn apply(
        &self,
        namespace: &str,
        kind: &Kind,
        body: Value,
        manager: &str,
    ) -> Result<Value, kube::Error> {
        let name = kit::str_at(&body, "/metadata/name")
            .unwrap_or_default()
            .to_owned();
        let stored = kind
            .api(&self.client, Some(namespace))
            .patch(
                &name,
                &PatchParams::apply(manager).force(),
                &Patch::Apply(&body),
            )
            .await?;
        Ok(serde_json::to_value(stored).unwrap_or(Value::Null))
    }
}

const SERVICE_ACCOUNT: Kind = Kind {
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    namespaced: true,
};

const SERVICE: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Service",
    plural: "services",
    namespaced: true,
};

const ENDPOINT_SLICE: Kind = Kind {
    group: "discovery.k8s.io",
    version: "v1",
    kind: "EndpointSlice",
    plural: "endpointslices",
    namespaced: true,
};
