//! The cluster every Keystone test runs on: the embedded API server with the actors, the
//! Keystone CRD, a ready store; per namespace a MariaDB `maria` and the credentials
//! `ks-db` / `ks-admin`; the operator running the shipped keystone.wasm.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::watcher;
use serde_json::{Value, json};
use wasm_operator::operator::{OperatorConfig, RunningOperator};
use wasm_operator_apiserver::Actor;
use wasm_operator_e2e::webhooks::webhook_config;
use wasm_operator_e2e::{Cluster, cluster_with_actors};
use wasm_operator_sdk::ObjectRef;

/// Long enough for a cold start of the plugin and every step's actor on a busy machine.
pub(crate) const WAIT: Duration = Duration::from_secs(90);
pub(crate) const GROUP_VERSION: &str = "keystone.openstack.c5c3.io/v1alpha1";

/// The actors a Keystone needs to converge through its Deployment.
pub(crate) const ACTORS: [Actor; 3] = [Actor::Workloads, Actor::MariaDb, Actor::ExternalSecrets];

/// The actors a Keystone needs to become Ready: also the Keystone API stand-in its health
/// check reaches, and the Gateway API that accepts its route.
pub(crate) const READY_ACTORS: [Actor; 5] = [
    Actor::Workloads,
    Actor::MariaDb,
    Actor::ExternalSecrets,
    Actor::Keystone,
    Actor::Gateway,
];

/// A shipped plugin a harness loads, with the CRD of its primary kind.
#[derive(Debug, Clone, Copy)]
enum Plugin {
    Keystone,
    IdentityBackends,
}

impl Plugin {
    fn name(self) -> &'static str {
        match self {
            Self::Keystone => "keystone",
            Self::IdentityBackends => "keystoneidentitybackends",
        }
    }

    /// The generated CRD in `crds/`.
    fn crd(self) -> Value {
        let plural = match self {
            Self::Keystone => "keystones",
            Self::IdentityBackends => "keystoneidentitybackends",
        };
        let path = format!(
            "{}/../crds/keystone.openstack.c5c3.io_{plural}.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        wasm_operator_e2e::yaml_objects(&text).remove(0)
    }
}

pub(crate) fn secret(namespace: &str, name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "Opaque", "stringData": data})
}

/// The MariaDB `maria` and the credentials a Keystone of [`keystone_in`] reads, by name.
pub(crate) fn fixtures(namespace: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "maria",
            json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
                "metadata": {"name": "maria", "namespace": namespace},
                "spec": {"replicas": 1}}),
        ),
        (
            "ks-db",
            secret(
                namespace,
                "ks-db",
                json!({"username": "keystone", "password": "db-pw"}),
            ),
        ),
        (
            "ks-admin",
            secret(namespace, "ks-admin", json!({"password": "admin-pw"})),
        ),
    ]
}

/// A Keystone `ks` in `namespace` on the managed MariaDB `maria`, its credentials in
/// `ks-db`/`ks-admin`; `extra` replaces top-level spec fields.
pub(crate) fn keystone_in(namespace: &str, extra: Value) -> Value {
    let mut spec = json!({
        "image": {"repository": "ghcr.io/c5c3/keystone", "tag": "2025.2"},
        "database": {"clusterRef": {"name": "maria"}, "database": "keystone",
                     "secretRef": {"name": "ks-db"}},
        "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.pymemcache"},
        "bootstrap": {"adminPasswordSecretRef": {"name": "ks-admin"}},
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    json!({"apiVersion": GROUP_VERSION, "kind": "Keystone",
        "metadata": {"name": "ks", "namespace": namespace}, "spec": spec})
}

/// [`keystone_in`] namespace `ns`.
pub(crate) fn keystone(extra: Value) -> Value {
    keystone_in("ns", extra)
}

pub(crate) fn keystone_ref(namespace: &str) -> ObjectRef {
    ObjectRef {
        api_version: GROUP_VERSION.into(),
        kind: "Keystone".into(),
        namespace: Some(namespace.into()),
        name: "ks".into(),
    }
}

/// Every `(namespace, condition type, reason)` any Keystone's status has held since the
/// log started, from a watch: every status write, however short-lived.
#[derive(Clone, Default)]
pub(crate) struct ReasonLog(Arc<Mutex<BTreeSet<(String, String, String)>>>);

impl ReasonLog {
    fn record(&self, object: &DynamicObject) {
        let namespace = object.metadata.namespace.clone().unwrap_or_default();
        let conditions = object
            .data
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut seen = self.0.lock().expect("the reason log");
        for c in conditions {
            let text = |key: &str| c[key].as_str().unwrap_or_default().to_owned();
            seen.insert((namespace.clone(), text("type"), text("reason")));
        }
    }

    /// Whether `namespace`'s Keystone has held `reason` on condition `type_`.
    pub(crate) fn saw(&self, namespace: &str, type_: &str, reason: &str) -> bool {
        let key = (namespace.to_owned(), type_.to_owned(), reason.to_owned());
        self.0.lock().expect("the reason log").contains(&key)
    }
}

pub(crate) struct Harness {
    pub(crate) cluster: Cluster,
    pub(crate) operator: RunningOperator,
    pub(crate) plugins: tempfile::TempDir,
    pub(crate) reasons: ReasonLog,
}

impl Harness {
    /// [`Harness::start_with`] the [`ACTORS`] and namespace `ns` seeded.
    pub(crate) async fn start() -> Self {
        let h = Self::start_with(&ACTORS).await;
        h.seed("ns", &[]).await;
        h
    }

    /// The API server with `actors`, the CRD and a ready ClusterSecretStore; the operator
    /// running keystone.wasm with its webhooks; the reason log watching.
    pub(crate) async fn start_with(actors: &[Actor]) -> Self {
        Self::start_plugins(actors, &[Plugin::Keystone]).await
    }

    /// [`Harness::start_with`], the operator also running keystoneidentitybackends.wasm,
    /// with that kind's CRD.
    pub(crate) async fn start_with_identity_backends(actors: &[Actor]) -> Self {
        Self::start_plugins(actors, &[Plugin::Keystone, Plugin::IdentityBackends]).await
    }

    async fn start_plugins(actors: &[Actor], loaded: &[Plugin]) -> Self {
        wasm_operator_e2e::init_logs();
        let crds: Vec<Value> = loaded.iter().map(|p| p.crd()).collect();
        let cluster = cluster_with_actors(actors, &crds).await;
        cluster
            .create(
                json!({"apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
                "metadata": {"name": "openbao-cluster-store"},
                "spec": {"provider": {"vault": {"server": "http://openbao:8200", "path": "kv"}}}}),
            )
            .await;
        let reasons = ReasonLog::default();
        let client = cluster.server.client().expect("a client");
        let resource = ApiResource {
            group: "keystone.openstack.c5c3.io".into(),
            version: "v1alpha1".into(),
            api_version: GROUP_VERSION.into(),
            kind: "Keystone".into(),
            plural: "keystones".into(),
        };
        let api: Api<DynamicObject> = Api::all_with(client, &resource);
        let log = reasons.clone();
        let (listed, watching) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let mut events = watcher(api, watcher::Config::default()).boxed();
            let mut listed = Some(listed);
            while let Some(event) = events.next().await {
                match event {
                    Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => {
                        log.record(&object);
                    }
                    Ok(watcher::Event::InitDone) => {
                        if let Some(listed) = listed.take() {
                            let _ = listed.send(());
                        }
                    }
                    _ => {}
                }
            }
        });
        // Every status write after this point is seen: the watch is established.
        tokio::time::timeout(WAIT, watching)
            .await
            .expect("the reason log's watch starts")
            .expect("the reason log's watch runs");
        let plugins = tempfile::tempdir().expect("plugins");
        for plugin in loaded {
            let file = format!("{}.wasm", plugin.name());
            std::fs::copy(
                wasm_operator::cli::shipped_plugin_dir().join(&file),
                plugins.path().join(&file),
            )
            .unwrap_or_else(|e| panic!("{file} is copied: {e}"));
        }
        // The store gate reads the ClusterSecretStore; admission reads PriorityClasses.
        std::fs::write(
            plugins.path().join("plugins.toml"),
            "[plugins.keystone]\ncluster_scoped = true\n",
        )
        .expect("plugins.toml");
        let mut config = OperatorConfig::new(plugins.path());
        config.watch_interval = Some(Duration::from_millis(100));
        config.controller.backoff.base = Duration::from_millis(50);
        config.controller.backoff.max = Duration::from_secs(2);
        config.webhook = Some(webhook_config());
        let operator = cluster
            .start_operator(wasm_operator_e2e::shared_cache(), config)
            .await;
        for plugin in loaded {
            assert!(
                operator.controller(plugin.name()).is_some(),
                "{} serves",
                plugin.name()
            );
        }
        Self {
            cluster,
            operator,
            plugins,
            reasons,
        }
    }

    /// Creates `namespace` (unless it is `ns`, which the cluster starts with) and its
    /// [`fixtures`] but those named in `without`.
    pub(crate) async fn seed(&self, namespace: &str, without: &[&str]) {
        if namespace != "ns" {
            self.cluster
                .create(json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": namespace}}))
                .await;
        }
        for (name, object) in fixtures(namespace) {
            if !without.contains(&name) {
                self.cluster.create(object).await;
            }
        }
    }

    pub(crate) async fn keystone_in(&self, namespace: &str) -> Option<Value> {
        self.cluster
            .get(GROUP_VERSION, "Keystone", namespace, "ks")
            .await
    }

    pub(crate) async fn keystone(&self) -> Option<Value> {
        self.keystone_in("ns").await
    }

    /// Waits until condition `type_` of the current generation of `namespace`'s Keystone
    /// has `reason`; the Keystone then.
    pub(crate) async fn condition_in(&self, namespace: &str, type_: &str, reason: &str) -> Value {
        self.cluster
            .condition_reached(
                GROUP_VERSION,
                "Keystone",
                namespace,
                "ks",
                type_,
                reason,
                WAIT,
            )
            .await
    }

    /// [`Harness::condition_in`] namespace `ns`.
    pub(crate) async fn condition(&self, type_: &str, reason: &str) -> Value {
        self.condition_in("ns", type_, reason).await
    }

    /// API requests the operator made for its plugins that write, by `verb kind code`.
    pub(crate) fn plugin_writes(&self) -> std::collections::BTreeMap<String, u64> {
        wasm_operator_e2e::writes(&self.operator)
    }

    /// The ConfigMap the Deployment `ks` of `ns` mounts as `config`.
    pub(crate) async fn config_volume(&self) -> Option<String> {
        let deployment = self
            .cluster
            .get("apps/v1", "Deployment", "ns", "ks")
            .await?;
        deployment
            .pointer("/spec/template/spec/volumes")?
            .as_array()?
            .iter()
            .find(|v| v["name"] == "config")?
            .pointer("/configMap/name")?
            .as_str()
            .map(str::to_owned)
    }

    /// Says, before the Jobs exist, how Jobs of `namespace` end: `(job, outcome, message)`.
    pub(crate) async fn job_outcomes(&self, namespace: &str, outcomes: &[(&str, &str, &str)]) {
        let mut data = serde_json::Map::new();
        for (job, outcome, message) in outcomes {
            data.insert((*job).to_owned(), json!(outcome));
            data.insert(format!("{job}.message"), json!(message));
        }
        let table = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": wasm_operator_apiserver::JOB_OUTCOMES_CONFIG_MAP,
                         "namespace": namespace},
            "data": data});
        let reference = ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some(namespace.into()),
            name: wasm_operator_apiserver::JOB_OUTCOMES_CONFIG_MAP.into(),
        };
        if self
            .cluster
            .get("v1", "ConfigMap", namespace, &reference.name)
            .await
            .is_some()
        {
            self.cluster
                .merge_patch(&reference, json!({"data": data}))
                .await;
        } else {
            self.cluster.create(table).await;
        }
    }
}
