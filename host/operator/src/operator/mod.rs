//! The operator: the plugins of a directory run as controllers against one cluster.
//!
//! [`Operator::start`]:
//! 1. loads the plugins of the plugin directory as [`loader`] lists them, each declared kind
//!    checked against API discovery ([`kinds`]); a file that fails is refused, logged and
//!    counted; the others run;
//! 2. starts leader election when configured (otherwise this replica always leads);
//! 3. starts one [`Controller`] per reconciler over shared informers and one kube-rs
//!    backend (rate-limited, counted in the metrics);
//! 4. serves `/metrics`, `/healthz` and `/readyz` when an address is given.
//!
//! [`RunningOperator::shutdown`] is the SIGTERM path: no new pass starts, the passes in
//! flight finish (up to the drain deadline), the Lease is released.

pub(crate) mod http;
pub(crate) mod kinds;
pub(crate) mod leader;
pub mod loader;
pub mod plugin_config;
pub(crate) mod plugin_dir;
pub(crate) mod rbac;
pub(crate) mod status_subresource;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::cluster::kube::{KubeCluster, RateLimit};
use crate::controller::{Controller, ControllerConfig};
use crate::informer::Informers;
use crate::metrics::Metrics;
pub use leader::LeaderElection;
use plugin_dir::PluginDirectory;
use wasm_operator_runtime::Runtime;
use wasm_operator_runtime::backend::ClusterBackend;
use wasm_operator_types::ObjectRef;

/// How the operator runs.
#[derive(Debug, Clone)]
pub struct OperatorConfig {
    /// The directory of `.wasm` plugins.
    pub plugins: PathBuf,
    /// Their `plugins.toml` (default: the directory's own).
    pub plugins_config: Option<PathBuf>,
    /// Watch and reconcile only this namespace (namespaced kinds).
    pub namespace: Option<String>,
    /// How each controller runs its passes.
    pub controller: ControllerConfig,
    /// The client-side limit on API requests made for plugins (`None`: unlimited).
    pub rate_limit: Option<RateLimit>,
    /// Leader election; `None` makes this replica the leader (or follows [`leading`]).
    ///
    /// [`leading`]: Self::leading
    pub leader_election: Option<LeaderElection>,
    /// Leadership decided outside the operator (an embedding program, tests): passes run
    /// while it holds `true`, and losing it cancels the passes in flight. Ignored when
    /// `leader_election` is set.
    pub leading: Option<watch::Receiver<bool>>,
    /// Where to serve `/metrics`, `/healthz` and `/readyz`.
    pub health_addr: Option<SocketAddr>,
    /// How often the plugin directory is checked for changes; `None` loads it once.
    pub watch_interval: Option<Duration>,
    /// The object events about plugins (refused files) are recorded on.
    pub report_to: Option<ObjectRef>,
    /// Plugins' HTTP requests resolve `*.svc.cluster.local` through the system's resolver
    /// (a cluster's DNS); `false` resolves them from the Services' EndpointSlices
    /// (off-cluster: `dev-cluster`, the demo, tests).
    pub cluster_dns: bool,
    /// Serve the plugins' admission as webhooks (every replica serves them).
    pub webhook: Option<crate::webhook::WebhookConfig>,
    /// The namespace of the target clusters' registration Secrets (watched once a plugin
    /// that writes to targets is loaded).
    pub clusters_namespace: String,
}

impl OperatorConfig {
    /// Runs the plugins of `plugins` with the defaults.
    pub fn new(plugins: impl Into<PathBuf>) -> Self {
        Self {
            plugins: plugins.into(),
            plugins_config: None,
            namespace: None,
            controller: ControllerConfig::default(),
            rate_limit: Some(RateLimit::default()),
            leader_election: None,
            leading: None,
            health_addr: None,
            watch_interval: Some(Duration::from_millis(250)),
            report_to: None,
            cluster_dns: false,
            webhook: None,
            clusters_namespace: crate::targets::DEFAULT_CLUSTERS_NAMESPACE.to_owned(),
        }
    }
}

/// The operator could not start.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The plugin directory cannot be read.
    #[error("cannot read plugin directory {dir}: {source}")]
    PluginDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// No reconciler loaded.
    #[error("no reconciler plugin loaded from {dir}")]
    NoReconciler { dir: PathBuf },
    /// Leader election could not start.
    #[error(transparent)]
    Leader(#[from] leader::LeaderError),
    /// The webhook server cannot start.
    #[error(transparent)]
    Webhook(#[from] crate::webhook::WebhookError),
    /// The operations endpoint cannot bind.
    #[error("cannot serve /metrics on {addr}: {source}")]
    Http {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// The operator entry point.
pub struct Operator;

/// A started operator.
pub struct RunningOperator {
    refusals: Vec<(PathBuf, String)>,
    directory: JoinHandle<PluginDirectory>,
    controllers: watch::Receiver<Vec<Arc<Controller>>>,
    election: Option<leader::Election>,
    leading: watch::Receiver<bool>,
    metrics: Arc<Metrics>,
    http: Option<(SocketAddr, JoinHandle<()>)>,
    webhook: Option<crate::webhook::WebhookServer>,
    stop: watch::Sender<bool>,
    leader_gauge: JoinHandle<()>,
    /// Invalidates discovery on every CRD change.
    crd_watch: JoinHandle<()>,
}

impl Operator {
    /// Starts the plugins of `config.plugins` against the cluster of `client`.
    pub async fn start(
        runtime: Runtime,
        client: kube::Client,
        config: OperatorConfig,
    ) -> Result<RunningOperator, OperatorError> {
        if !config.plugins.is_dir() {
            return Err(OperatorError::PluginDir {
                dir: config.plugins.clone(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory"),
            });
        }
        let metrics = Arc::new(Metrics::with_runtime(&runtime));
        runtime.set_egress(wasm_operator_runtime::EgressEnv {
            resolver: (!config.cluster_dns).then(|| {
                Arc::new(crate::cluster::endpoints::EndpointSliceResolver::new(
                    client.clone(),
                )) as Arc<dyn wasm_operator_runtime::ServiceResolver>
            }),
            observer: Some(metrics.clone()),
        });
        let kube = KubeCluster::new(client.clone())
            .with_rate_limit(config.rate_limit)
            .with_metrics(metrics.clone());
        let discovery = kube.discovery();
        let crd_watch = discovery.watch_crds();
        let server: Arc<dyn ClusterBackend> = Arc::new(kube);
        let informers = Arc::new(Informers::new(client.clone(), config.namespace.clone()));

        let (election, leading) = match &config.leader_election {
            Some(election) => {
                let election = leader::Election::start(client.clone(), election).await?;
                let leading = election.leading();
                (Some(election), leading)
            }
            None => (
                None,
                config
                    .leading
                    .clone()
                    .unwrap_or_else(|| watch::channel(true).1),
            ),
        };
        let leader_gauge = spawn_leader_gauge(metrics.clone(), leading.clone());

        let (stop, stopped) = watch::channel(false);
        let (started_tx, started) = watch::channel(false);
        let mut directory = PluginDirectory::new(
            config.plugins.clone(),
            config.plugins_config.clone(),
            plugin_dir::Context {
                runtime,
                server,
                informers: informers.clone(),
                kinds: Arc::new(kinds::KindResolver::new(discovery)),
                metrics: metrics.clone(),
                controller: config.controller,
                leading: leading.clone(),
                report_to: config.report_to.clone(),
                targets: Arc::new(crate::targets::TargetRegistry::new(
                    client.clone(),
                    config.clusters_namespace.clone(),
                    config.rate_limit,
                    metrics.clone(),
                )),
            },
        );
        let http = match config.health_addr {
            Some(addr) => {
                let health = http::Health {
                    metrics: metrics.clone(),
                    informers: informers.clone(),
                    started,
                    controllers: directory.controllers(),
                    refused: directory.refused(),
                };
                Some(
                    http::serve(addr, health, stopped.clone())
                        .await
                        .map_err(|source| OperatorError::Http { addr, source })?,
                )
            }
            None => None,
        };

        let refusals = directory.sync().await;
        let controllers = directory.controllers();
        if controllers.borrow().is_empty() {
            tracing::warn!(dir = %config.plugins.display(), "no reconciler plugin serves yet");
        }
        let webhook = match &config.webhook {
            Some(webhook) => Some(
                crate::webhook::serve(
                    webhook,
                    &client,
                    controllers.clone(),
                    metrics.clone(),
                    stopped.clone(),
                )
                .await?,
            ),
            None => None,
        };
        started_tx.send_replace(true);
        let directory = tokio::spawn(watch_directory(directory, config.watch_interval, stopped));
        Ok(RunningOperator {
            refusals,
            directory,
            controllers,
            election,
            leading,
            metrics,
            http,
            webhook,
            stop,
            leader_gauge,
            crd_watch,
        })
    }
}

fn spawn_leader_gauge(metrics: Arc<Metrics>, mut leading: watch::Receiver<bool>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let now = *leading.borrow_and_update();
            metrics.leader(now);
            tracing::info!(leading = now, "leadership");
            if leading.changed().await.is_err() {
                break;
            }
        }
    })
}

/// Syncs `directory` every `interval` (never without one) until `stopped`; returns it.
async fn watch_directory(
    mut directory: PluginDirectory,
    interval: Option<Duration>,
    mut stopped: watch::Receiver<bool>,
) -> PluginDirectory {
    let Some(interval) = interval else {
        let _ = stopped.wait_for(|s| *s).await;
        return directory;
    };
    loop {
        let stop = tokio::time::timeout(interval, async {
            let _ = stopped.wait_for(|s| *s).await;
        })
        .await;
        if stop.is_ok() {
            return directory;
        }
        directory.sync().await;
    }
}

impl RunningOperator {
    /// The address `/metrics`, `/healthz` and `/readyz` are served on.
    pub fn health_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().map(|(addr, _)| *addr)
    }

    /// The address admission webhooks are served on.
    pub fn webhook_addr(&self) -> Option<SocketAddr> {
        self.webhook.as_ref().map(|w| w.addr)
    }

    /// The CA of the managed webhook certificate (what a configuration's `caBundle`
    /// holds); `None` for certificate files or without webhooks.
    pub fn webhook_ca(&self) -> Option<&str> {
        self.webhook.as_ref().and_then(|w| w.ca_pem.as_deref())
    }

    /// Whether this replica leads now.
    pub fn is_leading(&self) -> bool {
        *self.leading.borrow()
    }

    /// The metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The files refused when the operator started, with the reasons.
    pub fn refusals(&self) -> &[(PathBuf, String)] {
        &self.refusals
    }

    /// The running controllers, one per reconciler plugin.
    pub fn controllers(&self) -> Vec<Arc<Controller>> {
        self.controllers.borrow().clone()
    }

    /// The controller of the plugin named `name`.
    pub fn controller(&self, name: &str) -> Option<Arc<Controller>> {
        self.controllers().into_iter().find(|c| c.name() == name)
    }

    /// Stops gracefully: no new pass, the passes in flight finish (each controller up to
    /// its drain deadline), the Lease is released, the endpoint stops.
    pub async fn shutdown(self) {
        tracing::info!("shutting down");
        self.stop.send_replace(true);
        if let Ok(directory) = self.directory.await {
            directory.stop().await;
        }
        self.leader_gauge.abort();
        self.crd_watch.abort();
        drop(self.leading);
        drop(self.controllers);
        if let Some(election) = self.election {
            election.release(Duration::from_secs(5)).await;
        }
        if let Some(webhook) = &self.webhook {
            webhook.abort();
        }
        if let Some((_, task)) = self.http {
            let _ = task.await;
        }
    }

    /// Stops at once without draining or releasing the Lease: what a crash leaves behind
    /// (for failover tests).
    pub fn kill(self) {
        self.directory.abort();
        self.leader_gauge.abort();
        self.crd_watch.abort();
        if let Some(election) = self.election {
            election.abandon();
        }
        if let Some(webhook) = &self.webhook {
            webhook.abort();
        }
        if let Some((_, task)) = self.http {
            task.abort();
        }
    }
}
