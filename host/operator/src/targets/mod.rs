//! Target clusters: the clusters a plugin's primaries name for their children (contract
//! 1.3, CobaltCore's `spec.targetClusterRef`), engaged from registration Secrets.
//!
//! - [`TargetRegistry`] watches the registration Secrets ([`registration`]) of the clusters
//!   namespace once a plugin that writes to targets is loaded. Each Secret's cluster is
//!   engaged at run time: a client from its kubeconfig, a rate-limited backend, and caches
//!   scoped to the namespaces it lists. A changed Secret engages its cluster anew (the old
//!   caches stop), a deleted one disengages it, and a Secret the host cannot use leaves its
//!   name registered but unavailable, with the reason (what a pass's open answers).
//! - Every change of what is engaged is published ([`TargetRegistry::subscribe`]): each
//!   targeting controller then re-subscribes its target watches and runs every primary once,
//!   so a primary that could not open its target (or whose target went) is reconciled.
//! - [`PluginTargets`] is what one plugin's passes open targets through: per target, its
//!   reads served from that target's caches and the plugin's own writes.

mod plugin_targets;
pub(crate) mod registration;

pub(crate) use plugin_targets::PluginTargets;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, Weak};

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt as _;
use kube::api::{Api, ApiResource};
use kube::runtime::WatchStreamExt as _;
use kube::runtime::watcher::{self, Event};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use wasm_operator_runtime::backend::ClusterBackend;

use crate::cluster::kube::{KubeCluster, RateLimit};
use crate::cluster::raw::RawObject;
use crate::informer::Informers;
use crate::metrics::Metrics;
use registration::{REGISTRATION_LABEL, Registration};

/// The namespace registration Secrets live in unless `--clusters-namespace` says otherwise.
pub const DEFAULT_CLUSTERS_NAMESPACE: &str = "c5c3-clusters";

/// One engaged target cluster.
pub(crate) struct EngagedTarget {
    pub(crate) name: String,
    /// The namespaces its registration scopes it to; `None`: all.
    pub(crate) namespaces: Option<Vec<String>>,
    /// Its API server under its own credentials.
    pub(crate) server: Arc<dyn ClusterBackend>,
    /// Its caches: one set per registered namespace, or one for all (key `None`).
    pub(crate) informers: BTreeMap<Option<String>, Arc<Informers>>,
    /// Its Services, from its EndpointSlices, for the HTTP requests of a pass on it.
    pub(crate) services: Arc<dyn wasm_operator_runtime::ServiceResolver>,
    /// The registration's resourceVersion when it was engaged.
    version: String,
}

/// A registered name: engaged, or the reason it cannot be.
#[derive(Clone)]
pub(crate) enum Registered {
    Engaged(Arc<EngagedTarget>),
    Unavailable { version: String, reason: String },
}

impl Registered {
    fn version(&self) -> &str {
        match self {
            Self::Engaged(t) => &t.version,
            Self::Unavailable { version, .. } => version,
        }
    }
}

/// What is registered now, by name.
pub(crate) type Snapshot = Arc<BTreeMap<String, Registered>>;

/// The target clusters of one host.
pub struct TargetRegistry {
    client: kube::Client,
    namespace: String,
    rate_limit: Option<RateLimit>,
    metrics: Arc<Metrics>,
    state: watch::Sender<Snapshot>,
    /// The watch of registration Secrets, started by the first targeting plugin.
    task: OnceLock<JoinHandle<()>>,
}

impl TargetRegistry {
    /// A registry of the registration Secrets in `namespace` of `client`'s cluster; nothing
    /// is watched until [`start`](Self::start).
    pub(crate) fn new(
        client: kube::Client,
        namespace: String,
        rate_limit: Option<RateLimit>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            client,
            namespace,
            rate_limit,
            metrics,
            state: watch::Sender::new(Arc::default()),
            task: OnceLock::new(),
        }
    }

    /// Starts watching the registration Secrets (once; later calls do nothing). The watch
    /// holds the registry weakly: it ends when the registry's last owner drops it.
    pub(crate) fn start(self: &Arc<Self>) {
        self.task.get_or_init(|| {
            tracing::info!(
                namespace = self.namespace,
                "watching target cluster registrations"
            );
            tokio::spawn(Self::watch(Arc::downgrade(self), self.registrations()))
        });
    }

    /// The registration Secrets' events; a failing watch is retried with backoff, so an
    /// unreachable API server costs a retry every few seconds, not a busy core.
    fn registrations(
        &self,
    ) -> impl futures::Stream<Item = Result<Event<RawObject>, watcher::Error>> + Send + 'static
    {
        // Read raw: one Secret that does not decode must not fail the list (and have
        // kube-rs log its body, every registration's kubeconfig).
        let resource = ApiResource::erase::<Secret>(&());
        let api: Api<RawObject> =
            Api::namespaced_with(self.client.clone(), &self.namespace, &resource);
        let config = watcher::Config::default().labels(&format!("{REGISTRATION_LABEL}=true"));
        watcher::watcher(api, config).default_backoff()
    }

    /// What is registered now.
    pub(crate) fn snapshot(&self) -> Snapshot {
        self.state.borrow().clone()
    }

    /// Every change of what is registered.
    pub(crate) fn subscribe(&self) -> watch::Receiver<Snapshot> {
        self.state.subscribe()
    }

    async fn watch(
        registry: Weak<Self>,
        events: impl futures::Stream<Item = Result<Event<RawObject>, watcher::Error>>,
    ) {
        let mut events = std::pin::pin!(events);
        let mut listing: Option<Vec<RawObject>> = None;
        while let Some(event) = events.next().await {
            let Some(registry) = registry.upgrade() else {
                return;
            };
            registry.handle(event, &mut listing).await;
        }
    }

    /// Applies one event of the registrations' watch; `listing` gathers an initial list.
    async fn handle(
        &self,
        event: Result<Event<RawObject>, watcher::Error>,
        listing: &mut Option<Vec<RawObject>>,
    ) {
        match event {
            Ok(Event::Init) => *listing = Some(Vec::new()),
            Ok(Event::InitApply(secret)) => listing.get_or_insert_default().push(secret),
            Ok(Event::InitDone) => {
                let secrets = listing.take().unwrap_or_default();
                self.replace_all(secrets).await;
            }
            Ok(Event::Apply(secret)) => self.apply(&secret).await,
            Ok(Event::Delete(secret)) => {
                let name = secret.name_any();
                self.update(|state| {
                    if state.remove(&name).is_some() {
                        tracing::info!(target_cluster = name, "target cluster disengaged");
                    }
                });
            }
            Err(error) => {
                tracing::warn!(namespace = self.namespace, %error, "watching target cluster registrations");
            }
        }
    }

    async fn replace_all(&self, secrets: Vec<RawObject>) {
        let names: Vec<String> = secrets.iter().map(|s| s.name_any()).collect();
        self.update(|state| state.retain(|name, _| names.contains(name)));
        for secret in &secrets {
            self.apply(secret).await;
        }
    }

    /// Engages (or re-engages) the cluster of `secret` unless it is engaged at its version.
    async fn apply(&self, secret: &RawObject) {
        let name = secret.name_any();
        let version = secret.resource_version().unwrap_or_default();
        if self
            .snapshot()
            .get(&name)
            .is_some_and(|r| r.version() == version)
        {
            return;
        }
        let registered = match self.engage(secret).await {
            Ok(target) => {
                tracing::info!(target_cluster = name, namespaces = ?target.namespaces, "target cluster engaged");
                Registered::Engaged(Arc::new(target))
            }
            Err(error) => {
                tracing::warn!(target_cluster = name, %error, "target cluster registration refused");
                Registered::Unavailable {
                    version,
                    reason: error.to_string(),
                }
            }
        };
        self.update(|state| {
            state.insert(name, registered);
        });
    }

    async fn engage(
        &self,
        object: &RawObject,
    ) -> Result<EngagedTarget, registration::RegistrationError> {
        let malformed = |reason: String| registration::RegistrationError::Malformed {
            secret: object.key(),
            reason,
        };
        if let Some(why) = object.malformed() {
            return Err(malformed(why.to_owned()));
        }
        let secret: Secret = serde_json::from_value(object.clone().into_value())
            .map_err(|e| malformed(e.to_string()))?;
        let registration = Registration::of(&secret)?;
        let client = registration.client().await?;
        let server = KubeCluster::new(client.clone())
            .with_rate_limit(self.rate_limit)
            .with_metrics(self.metrics.clone());
        let informers = match &registration.namespaces {
            Some(namespaces) if !namespaces.is_empty() => namespaces
                .iter()
                .map(|ns| {
                    let informers = Informers::new(client.clone(), Some(ns.clone()));
                    (Some(ns.clone()), Arc::new(informers))
                })
                .collect(),
            _ => BTreeMap::from([(None, Arc::new(Informers::new(client.clone(), None)))]),
        };
        let services = Arc::new(crate::cluster::endpoints::EndpointSliceResolver::new(
            client.clone(),
        ));
        Ok(EngagedTarget {
            services,
            name: registration.name,
            namespaces: registration.namespaces.filter(|n| !n.is_empty()),
            server: Arc::new(server),
            informers,
            version: registration.version,
        })
    }

    fn update(&self, change: impl FnOnce(&mut BTreeMap<String, Registered>)) {
        self.state.send_modify(|state| change(Arc::make_mut(state)));
    }
}

impl Drop for TargetRegistry {
    fn drop(&mut self) {
        if let Some(task) = self.task.get() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A registry whose API server is unreachable: its watch fails on every try.
    fn unreachable_registry() -> Arc<TargetRegistry> {
        let url = "http://127.0.0.1:9".parse().expect("a URL");
        let client = kube::Client::try_from(kube::Config::new(url)).expect("a client");
        Arc::new(TargetRegistry::new(
            client,
            DEFAULT_CLUSTERS_NAMESPACE.to_string(),
            None,
            Arc::new(Metrics::new()),
        ))
    }

    #[tokio::test]
    async fn a_registry_whose_server_is_gone_is_dropped_with_its_last_owner() {
        let registry = unreachable_registry();
        registry.start();
        // The watch has failed by now (connection refused) and is backing off.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let weak = Arc::downgrade(&registry);
        drop(registry);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            weak.upgrade().is_none(),
            "the registrations' watch kept the registry alive"
        );
    }

    #[tokio::test]
    async fn a_failing_registrations_watch_retries_with_backoff_not_in_a_loop() {
        let registry = unreachable_registry();
        let events = registry.registrations();
        let mut events = std::pin::pin!(events);
        let mut failures = 0;
        let window = tokio::time::sleep(Duration::from_millis(500));
        let mut window = std::pin::pin!(window);
        loop {
            tokio::select! {
                _ = &mut window => break,
                event = events.next() => match event {
                    Some(Err(_)) => failures += 1,
                    // The watcher announces each relist it starts.
                    Some(Ok(Event::Init)) => {}
                    Some(Ok(_)) => panic!("an unreachable server listed registrations"),
                    None => panic!("the registrations' watch ended"),
                },
            }
        }
        assert!(
            (1..=3).contains(&failures),
            "{failures} failed watch attempts in 500 ms"
        );
    }

    #[tokio::test]
    async fn a_registration_secret_that_does_not_decode_is_unavailable_with_the_reason() {
        let registry = unreachable_registry();
        let object = RawObject::from(serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "edge", "namespace": DEFAULT_CLUSTERS_NAMESPACE,
                         "resourceVersion": "3", "labels": ["leaky-label"]},
            "data": {"kubeconfig": "bGVha2VkLWt1YmVjb25maWc="}}));
        registry.apply(&object).await;
        let snapshot = registry.snapshot();
        let Some(Registered::Unavailable { reason, version }) = snapshot.get("edge") else {
            panic!("edge is not registered as unavailable");
        };
        assert_eq!(version, "3");
        assert!(
            reason.starts_with(
                "registration Secret c5c3-clusters/edge does not decode: metadata does not \
                 decode: invalid type: sequence"
            ),
            "{reason}"
        );
        assert!(
            !reason.contains("leaky") && !reason.contains("bGVha2Vk"),
            "{reason}"
        );
    }
}
