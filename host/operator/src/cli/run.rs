//! `wasm-operator run`: the plugins of a directory as an operator against a cluster, until
//! SIGTERM or Ctrl-C; and `wasm-operator rbac`: the RBAC they need.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::cluster::kube::RateLimit;
use crate::controller::{Backoff, ControllerConfig};
use crate::operator::{LeaderElection, Operator, OperatorConfig, loader, rbac};
use wasm_operator_runtime::Runtime;
use wasm_operator_types::ObjectRef;

/// The options of `run`.
#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("webhook_cert").args(["webhook_cert_dir", "webhook_secret"])))]
pub struct RunArgs {
    /// The directory of `.wasm` plugins (writable when a plugin has an OCI source).
    #[arg(long)]
    pub plugins: PathBuf,
    /// Their `plugins.toml`, when it is not the directory's own (in a Pod: a mounted
    /// ConfigMap, beside a writable plugin directory).
    #[arg(long)]
    pub plugins_config: Option<PathBuf>,
    /// The kubeconfig of the cluster (default: in-cluster config, then $KUBECONFIG or
    /// ~/.kube/config).
    #[arg(long, conflicts_with = "in_cluster")]
    pub kubeconfig: Option<PathBuf>,
    /// Use the in-cluster config (the Pod's service account).
    #[arg(long)]
    pub in_cluster: bool,
    /// With --in-cluster: the directory holding the ServiceAccount's `token`, `ca.crt` and
    /// `namespace`.
    #[arg(long, env = "WASM_OPERATOR_SERVICE_ACCOUNT_DIR", default_value = super::in_cluster::SERVICE_ACCOUNT_DIR)]
    pub service_account_dir: PathBuf,
    /// Watch and reconcile only this namespace.
    #[arg(long)]
    pub namespace: Option<String>,
    /// Where to serve /metrics, /healthz and /readyz (in a Pod: its own address, e.g.
    /// `$(POD_IP):8080`; never all interfaces by default).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub health_addr: SocketAddr,
    /// Elect a leader on a Lease, so several replicas can run.
    #[arg(long)]
    pub leader_elect: bool,
    /// The Lease's namespace (default: --namespace, $POD_NAMESPACE, then `default`).
    #[arg(long)]
    pub lease_namespace: Option<String>,
    /// The Lease's name.
    #[arg(long, default_value = "wasm-operator-leader")]
    pub lease_name: String,
    /// How long the Lease is valid after its last renewal, in seconds.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(2..))]
    pub lease_duration_s: u64,
    /// How long before expiry the holder renews it, in seconds (less than the duration).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    pub lease_renew_before_s: u64,
    /// Passes of one plugin at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// API requests per second for plugins (0: unlimited).
    #[arg(long, default_value_t = 50)]
    pub api_qps: u32,
    /// API request burst.
    #[arg(long, default_value_t = 100)]
    pub api_burst: u32,
    /// First retry delay after a failed pass, in milliseconds (doubling per failure).
    #[arg(long, default_value_t = 5)]
    pub backoff_base_ms: u64,
    /// Longest retry delay, in seconds.
    #[arg(long, default_value_t = 1000)]
    pub backoff_max_s: u64,
    /// How often the plugin directory is checked for changed files, in milliseconds.
    #[arg(long, default_value_t = 250)]
    pub watch_ms: u64,
    /// How often the tags of plugins' OCI sources are checked for a new digest, in seconds.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub registry_poll_s: u64,
    #[command(flatten)]
    pub registry: crate::oci::RegistryArgs,
    /// How long SIGTERM waits for the passes in flight, in seconds.
    #[arg(long, default_value_t = 30)]
    pub drain_s: u64,
    /// Plugins' HTTP requests resolve `*.svc.cluster.local` through the cluster's DNS;
    /// without it, from the Services' EndpointSlices (off-cluster).
    #[arg(long, env = "WASM_OPERATOR_CLUSTER_DNS")]
    pub cluster_dns: bool,
    /// The namespace of target cluster registrations: Secrets labelled
    /// `sigs.k8s.io/multicluster-runtime-kubeconfig=true`, named after their cluster, with
    /// data keys `kubeconfig` and optional `namespaces` (watched only when a plugin writes
    /// to target clusters).
    #[arg(long, default_value = crate::targets::DEFAULT_CLUSTERS_NAMESPACE)]
    pub clusters_namespace: String,
    /// Serve the plugins' admission webhooks (HTTPS) here, e.g. `0.0.0.0:9443`; needs
    /// `--webhook-cert-dir` or `--webhook-secret`.
    #[arg(long, requires = "webhook_cert")]
    pub webhook_addr: Option<SocketAddr>,
    /// The directory holding the webhook certificate's `tls.crt` and `tls.key` (a mounted
    /// Secret, e.g. cert-manager's); read again when they change.
    #[arg(long, requires = "webhook_addr")]
    pub webhook_cert_dir: Option<PathBuf>,
    /// `NAMESPACE/NAME` of a Secret the host keeps its own CA and webhook certificate in
    /// (made when missing, renewed 30 days before expiry); needs `--webhook-service`.
    #[arg(long, requires_all = ["webhook_addr", "webhook_service"], value_parser = namespaced_name)]
    pub webhook_secret: Option<(String, String)>,
    /// `NAMESPACE/NAME` of the Service the API server calls the webhooks through (the
    /// certificate's DNS names).
    #[arg(long, requires = "webhook_secret", value_parser = namespaced_name)]
    pub webhook_service: Option<(String, String)>,
}

/// `NAMESPACE/NAME`.
fn namespaced_name(text: &str) -> Result<(String, String), String> {
    match text.split_once('/') {
        Some((ns, name))
            if wasm_operator_types::is_dns_label(ns) && !name.is_empty() && !name.contains('/') =>
        {
            Ok((ns.to_owned(), name.to_owned()))
        }
        _ => Err(format!("{text:?} is not NAMESPACE/NAME")),
    }
}

impl RunArgs {
    /// The operator configuration these options describe.
    pub fn config(&self) -> OperatorConfig {
        let lease_namespace = self
            .lease_namespace
            .clone()
            .or_else(|| self.namespace.clone())
            .or_else(|| std::env::var("POD_NAMESPACE").ok())
            .unwrap_or_else(|| "default".into());
        let identity = std::env::var("POD_NAME")
            .or_else(|_| std::env::var("HOSTNAME"))
            .unwrap_or_else(|_| format!("wasm-operator-{}", std::process::id()));
        OperatorConfig {
            plugins: self.plugins.clone(),
            plugins_config: self.plugins_config.clone(),
            namespace: self.namespace.clone(),
            controller: ControllerConfig {
                backoff: Backoff {
                    base: Duration::from_millis(self.backoff_base_ms),
                    max: Duration::from_secs(self.backoff_max_s),
                },
                concurrency: self.concurrency,
                drain: Duration::from_secs(self.drain_s),
            },
            rate_limit: (self.api_qps > 0).then_some(RateLimit {
                qps: self.api_qps,
                burst: self.api_burst,
            }),
            leader_election: self.leader_elect.then(|| LeaderElection {
                lease_name: self.lease_name.clone(),
                duration: Duration::from_secs(self.lease_duration_s),
                grace: Duration::from_secs(self.lease_renew_before_s),
                ..LeaderElection::new(&lease_namespace, &identity)
            }),
            leading: None,
            health_addr: Some(self.health_addr),
            watch_interval: Some(Duration::from_millis(self.watch_ms)),
            report_to: pod_ref(),
            cluster_dns: self.cluster_dns,
            webhook: self.webhook(),
            clusters_namespace: self.clusters_namespace.clone(),
        }
    }

    /// The webhook server these options describe (clap has checked that an address comes
    /// with one certificate source).
    fn webhook(&self) -> Option<crate::webhook::WebhookConfig> {
        use crate::webhook::{CertSource, WebhookConfig};
        let addr = self.webhook_addr?;
        let cert = match (
            &self.webhook_cert_dir,
            &self.webhook_secret,
            &self.webhook_service,
        ) {
            (Some(dir), _, _) => CertSource::Files(dir.clone()),
            (
                None,
                Some((secret_namespace, secret_name)),
                Some((service_namespace, service_name)),
            ) => CertSource::Managed {
                secret_namespace: secret_namespace.clone(),
                secret_name: secret_name.clone(),
                service_namespace: service_namespace.clone(),
                service_name: service_name.clone(),
            },
            _ => return None,
        };
        Some(WebhookConfig { addr, cert })
    }

    /// The client of the chosen cluster.
    pub(crate) async fn client(&self) -> anyhow::Result<kube::Client> {
        let config = if let Some(path) = &self.kubeconfig {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .with_context(|| format!("kubeconfig {}", path.display()))?
        } else if self.in_cluster {
            super::in_cluster::config(&self.service_account_dir).context("the in-cluster config")?
        } else {
            kube::Config::infer()
                .await
                .context("no in-cluster config and no kubeconfig")?
        };
        kube::Client::try_from(config).context("cannot build the Kubernetes client")
    }
}

/// The operator's own Pod ($POD_NAME in $POD_NAMESPACE), which plugin events are about.
fn pod_ref() -> Option<ObjectRef> {
    Some(ObjectRef {
        api_version: "v1".into(),
        kind: "Pod".into(),
        namespace: Some(std::env::var("POD_NAMESPACE").ok()?),
        name: std::env::var("POD_NAME").ok()?,
    })
}

/// Runs the operator until SIGTERM or Ctrl-C, then shuts it down gracefully.
pub async fn run(runtime: Runtime, args: &RunArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.lease_renew_before_s < args.lease_duration_s,
        "--lease-renew-before-s ({}) must be less than --lease-duration-s ({})",
        args.lease_renew_before_s,
        args.lease_duration_s
    );
    let client = args.client().await?;
    // Plugins with an OCI source are pulled beside the operator, which serves its health
    // endpoints and loads each file as it lands (a slow registry delays readiness, never
    // liveness).
    let puller = crate::oci::Puller::new(
        args.registry.clone(),
        args.plugins.clone(),
        args.plugins_config.clone(),
    )?;
    let polling = tokio::spawn(puller.run(Duration::from_secs(args.registry_poll_s)));
    let operator = Operator::start(runtime, client, args.config()).await?;
    if let Some(addr) = operator.health_addr() {
        tracing::info!(%addr, "serving /metrics, /healthz and /readyz");
    }
    if let Some(addr) = operator.webhook_addr() {
        tracing::info!(%addr, "serving admission webhooks");
    }
    wait_for_termination().await?;
    polling.abort();
    operator.shutdown().await;
    Ok(())
}

async fn wait_for_termination() -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("cannot listen for SIGTERM")?;
        tokio::select! {
            _ = term.recv() => {}
            r = tokio::signal::ctrl_c() => r.context("cannot listen for Ctrl-C")?,
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c()
        .await
        .context("cannot listen for Ctrl-C")?;
    Ok(())
}

/// What `wasm-operator rbac` renders besides the plugins' own rules; each pair is
/// `(namespace, name)`.
#[derive(Debug, Clone, Copy)]
pub struct RbacOptions<'a> {
    /// Roles in this namespace instead of one ClusterRole (`run --namespace`).
    pub namespace: Option<&'a str>,
    /// What leader election on this Lease needs.
    pub lease: Option<(&'a str, &'a str)>,
    /// What the webhook server's managed certificate in this Secret needs.
    pub webhook_secret: Option<(&'a str, &'a str)>,
    /// The namespace of target cluster registrations (`run --clusters-namespace`).
    pub clusters_namespace: &'a str,
    /// The operator resolves plugins' Service names from EndpointSlices (`run` without
    /// `--cluster-dns`).
    pub resolves_services: bool,
    /// Bind every role to this ServiceAccount.
    pub service_account: Option<(&'a str, &'a str)>,
}

/// The RBAC the reconcilers of `plugins` need, as YAML: the plugins and canaries
/// `plugins.toml` enables (a disabled file gets none), laid out as `options` says (see
/// [`RbacOptions`]); when a plugin writes to target clusters, a Role reading the
/// registrations too. A refused file is an error: roles that leave out a plugin would be
/// found missing only when it serves. `plugins_config` is their `plugins.toml` when it is
/// not the directory's own.
pub async fn rbac_yaml(
    runtime: &Runtime,
    plugins: &std::path::Path,
    plugins_config: Option<&std::path::Path>,
    options: &RbacOptions<'_>,
) -> anyhow::Result<String> {
    let loaded = load_all(runtime, plugins, plugins_config).await?;
    rbac_yaml_of(&loaded, options)
}

/// [`rbac_yaml`] for the plugins of `loaded` that load, whatever was refused.
pub fn rbac_yaml_of(loaded: &loader::Loaded, options: &RbacOptions<'_>) -> anyhow::Result<String> {
    fn name<'n>((namespace, name): (&'n str, &'n str)) -> rbac::ObjectName<'n> {
        rbac::ObjectName { namespace, name }
    }
    let layout = rbac::Layout {
        namespace: options.namespace,
        lease: options.lease.map(name),
        webhook_secret: options.webhook_secret.map(name),
        clusters_namespace: options.clusters_namespace,
        resolves_services: options.resolves_services,
        service_account: options.service_account.map(name),
    };
    Ok(rbac::render(&loaded.granted(), &layout)?)
}

/// The webhook configurations the plugins of `plugins` need, as YAML (`wasm-operator
/// webhooks`): the plugins `plugins.toml` enables that admit writes.
pub async fn webhooks_yaml(
    runtime: &Runtime,
    plugins: &std::path::Path,
    plugins_config: Option<&std::path::Path>,
    endpoint: &crate::webhook::configurations::Endpoint,
    ca_bundle: Option<&str>,
    name: &str,
) -> anyhow::Result<String> {
    let loaded = load_all(runtime, plugins, plugins_config).await?;
    let granted = loaded.granted();
    let descriptions: Vec<&wasm_operator_types::Description> =
        granted.iter().map(|(d, _)| d).collect();
    let mut yaml = String::new();
    for object in
        crate::webhook::configurations::configurations(&descriptions, endpoint, ca_bundle, name)
    {
        yaml.push_str("---\n");
        yaml.push_str(&serde_yaml_ng::to_string(&object).context("YAML")?);
    }
    Ok(yaml)
}

/// Every plugin of `plugins`, or the first refusal.
async fn load_all(
    runtime: &Runtime,
    plugins: &std::path::Path,
    plugins_config: Option<&std::path::Path>,
) -> anyhow::Result<loader::Loaded> {
    let loaded = loader::load_directory(runtime, plugins, plugins_config).await?;
    if let Some(refusal) = loaded.refused.first() {
        anyhow::bail!(
            "plugin {} refused: {}",
            refusal.file.display(),
            refusal.reason
        );
    }
    Ok(loaded)
}
