//! A real Kubernetes control plane on loopback: etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler and KWOK with three fake Nodes, the binaries
//! built from Go modules by `controlplane/build.sh` (pinned in `controlplane/go.mod`).
//!
//! [`ControlPlane::start`] returns once every component is ready, the Nodes are `Ready`
//! and the `default` ServiceAccounts exist; dropping the value stops every process it
//! started. The embedded API server is the fast default; this is the judge.

mod component;
mod error;
mod nodes;
mod pki;
mod ports;
mod ready;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use error::Error;

use component::Component;
use pki::Pki;

/// The environment variable naming the directory of the control plane's binaries.
pub const BIN_DIR_ENV: &str = "WASM_OPERATOR_CONTROLPLANE_BIN";
/// The Service CIDR the API server allocates ClusterIPs from.
pub const SERVICE_CIDR: &str = "10.96.0.0/16";
/// The Pod CIDR KWOK gives Pods addresses from.
pub const POD_CIDR: &str = "10.244.0.0/16";
/// The fake Nodes KWOK runs.
pub const NODES: [&str; 3] = ["kwok-node-0", "kwok-node-1", "kwok-node-2"];

/// The controllers kube-controller-manager runs: what a kubeadm cluster's workloads, garbage
/// collection, namespaces and ServiceAccounts need; no node, volume or certificate
/// controllers (KWOK stands for the kubelets).
pub const CONTROLLERS: [&str; 15] = [
    "garbage-collector-controller",
    "namespace-controller",
    "deployment-controller",
    "replicaset-controller",
    "job-controller",
    "cronjob-controller",
    "ttl-after-finished-controller",
    "disruption-controller",
    "endpointslice-controller",
    "endpoints-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller",
    "clusterrole-aggregation-controller",
    // Lifts the `node.kubernetes.io/not-ready` taint the API server puts on a new Node once
    // KWOK reports it Ready (and taints Nodes whose lease KWOK stops renewing).
    "node-lifecycle-controller",
];

/// How to start a control plane.
#[derive(Clone, Debug)]
pub struct Options {
    /// The directory of the binaries (`etcd`, `kube-apiserver`, …, `kwok-stages.yaml`):
    /// usually [`default_bin_dir`].
    pub bin_dir: PathBuf,
    /// Where the state, certificates, kubeconfigs and logs go; `None` makes a temporary
    /// directory, removed on drop and kept when the start fails (its logs are named).
    pub dir: Option<PathBuf>,
    /// kube-apiserver's port on 127.0.0.1 (0 picks a free one).
    pub apiserver_port: u16,
    /// How long the whole start may take before it fails naming what is not ready.
    pub timeout: Duration,
}

impl Options {
    /// The binaries of `bin_dir`; a temporary directory; a free port; 120 s.
    pub fn new(bin_dir: impl Into<PathBuf>) -> Self {
        Self {
            bin_dir: bin_dir.into(),
            dir: None,
            apiserver_port: 0,
            timeout: Duration::from_secs(120),
        }
    }
}

/// Where the binaries are: `$WASM_OPERATOR_CONTROLPLANE_BIN`, else where
/// `controlplane/build.sh` writes them in the workspace this crate was built in.
pub fn default_bin_dir() -> PathBuf {
    std::env::var_os(BIN_DIR_ENV).map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/controlplane/bin"),
        PathBuf::from,
    )
}

/// A running control plane; dropping it stops every component (SIGTERM, then SIGKILL).
pub struct ControlPlane {
    /// Stopped in reverse order of start.
    components: Vec<Component>,
    dir: PathBuf,
    url: String,
    ca_pem: String,
    _temp: Option<tempfile::TempDir>,
}

impl ControlPlane {
    /// Starts every component on free loopback ports and waits until the cluster is ready.
    pub async fn start(options: Options) -> Result<Self, Error> {
        let (dir, temp) = match &options.dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(Error::io(format!(
                    "cannot create the control plane directory {}",
                    dir.display()
                )))?;
                (dir.clone(), None)
            }
            None => {
                let temp = tempfile::Builder::new()
                    .prefix("wasm-operator-controlplane-")
                    .tempdir()
                    .map_err(Error::io("cannot create a temporary directory"))?;
                (temp.path().to_owned(), Some(temp))
            }
        };
        let bins = component::Binaries::find(&options.bin_dir)?;
        let ports = ports::Ports::pick(options.apiserver_port)?;
        let url = format!("https://127.0.0.1:{}", ports.apiserver);
        let pki = Pki::write(&dir, &url)?;
        let mut plane = Self {
            components: Vec::new(),
            dir: dir.clone(),
            url,
            ca_pem: pki.ca_pem.clone(),
            _temp: temp,
        };
        let deadline = tokio::time::Instant::now() + options.timeout;
        if let Err(error) = plane.boot(&bins, &ports, &pki, deadline).await {
            // The error names a log file: it outlives this value.
            if let Some(temp) = plane._temp.take() {
                let kept = temp.keep();
                tracing::warn!(dir = %kept.display(), "the control plane did not start; its directory is kept");
            }
            return Err(error);
        }
        Ok(plane)
    }

    async fn boot(
        &mut self,
        bins: &component::Binaries,
        ports: &ports::Ports,
        pki: &Pki,
        deadline: tokio::time::Instant,
    ) -> Result<(), Error> {
        let logs = self.dir.join("logs");
        std::fs::create_dir_all(&logs)
            .map_err(Error::io(format!("cannot create {}", logs.display())))?;
        let data = self.dir.join("etcd");
        let etcd_client = format!("http://127.0.0.1:{}", ports.etcd_client);
        let etcd_peer = format!("http://127.0.0.1:{}", ports.etcd_peer);
        self.components.push(Component::spawn(
            "etcd",
            &bins.etcd,
            &logs,
            &[
                "--name=default".into(),
                format!("--data-dir={}", data.display()),
                format!("--listen-client-urls={etcd_client}"),
                format!("--advertise-client-urls={etcd_client}"),
                format!("--listen-peer-urls={etcd_peer}"),
                format!("--initial-advertise-peer-urls={etcd_peer}"),
                format!("--initial-cluster=default={etcd_peer}"),
                "--unsafe-no-fsync=true".into(),
                "--log-level=warn".into(),
            ],
        )?);
        let etcd_health = ready::health_client(&etcd_client, None)?;
        ready::wait(
            &mut self.components,
            "etcd",
            "its /health",
            deadline,
            || ready::api_ok(&etcd_health, "/health"),
        )
        .await?;

        let p = &pki.paths;
        self.components.push(Component::spawn(
            "kube-apiserver",
            &bins.apiserver,
            &logs,
            &[
                format!("--etcd-servers={etcd_client}"),
                "--bind-address=127.0.0.1".into(),
                "--advertise-address=127.0.0.1".into(),
                // The API server listens on loopback only, and a real one refuses loopback
                // endpoint addresses: the `kubernetes` Service gets no EndpointSlice (clients
                // on this machine use the URL of the kubeconfig or KUBERNETES_SERVICE_HOST).
                "--endpoint-reconciler-type=none".into(),
                format!("--secure-port={}", ports.apiserver),
                format!("--cert-dir={}", self.dir.join("apiserver-certs").display()),
                format!("--tls-cert-file={}", p.apiserver_cert.display()),
                format!("--tls-private-key-file={}", p.apiserver_key.display()),
                format!("--client-ca-file={}", p.ca_cert.display()),
                format!("--service-cluster-ip-range={SERVICE_CIDR}"),
                "--authorization-mode=Node,RBAC".into(),
                // kubeadm's addition to the default plugins (which include the
                // ServiceAccount, Mutating- and ValidatingAdmissionWebhook plugins).
                "--enable-admission-plugins=NodeRestriction".into(),
                "--allow-privileged=true".into(),
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
                format!("--service-account-key-file={}", p.sa_pub.display()),
                format!("--service-account-signing-key-file={}", p.sa_key.display()),
                // No kube-proxy routes ClusterIPs here: webhooks and aggregated APIs are
                // called at an endpoint of their Service.
                "--enable-aggregator-routing=true".into(),
                // The front proxy's CA and client, as kubeadm configures them.
                format!(
                    "--requestheader-client-ca-file={}",
                    p.front_proxy_ca.display()
                ),
                "--requestheader-allowed-names=front-proxy-client".into(),
                "--requestheader-username-headers=X-Remote-User".into(),
                "--requestheader-group-headers=X-Remote-Group".into(),
                "--requestheader-extra-headers-prefix=X-Remote-Extra-".into(),
                format!(
                    "--proxy-client-cert-file={}",
                    p.front_proxy_client_cert.display()
                ),
                format!(
                    "--proxy-client-key-file={}",
                    p.front_proxy_client_key.display()
                ),
                "--v=1".into(),
            ],
        )?);
        let admin = ready::client(&p.admin_kubeconfig).await?;
        ready::wait(
            &mut self.components,
            "kube-apiserver",
            "its /readyz",
            deadline,
            || ready::api_ok(&admin, "/readyz"),
        )
        .await?;

        let kcm_url = format!("https://127.0.0.1:{}", ports.controller_manager);
        let kcm = p.controller_manager_kubeconfig.display().to_string();
        let controllers = CONTROLLERS.join(",");
        self.components.push(Component::spawn(
            "kube-controller-manager",
            &bins.controller_manager,
            &logs,
            &[
                format!("--kubeconfig={kcm}"),
                format!("--authentication-kubeconfig={kcm}"),
                format!("--authorization-kubeconfig={kcm}"),
                "--bind-address=127.0.0.1".into(),
                format!("--secure-port={}", ports.controller_manager),
                format!("--tls-cert-file={}", p.components_cert.display()),
                format!("--tls-private-key-file={}", p.components_key.display()),
                "--leader-elect=false".into(),
                "--use-service-account-credentials=true".into(),
                format!("--service-account-private-key-file={}", p.sa_key.display()),
                format!("--root-ca-file={}", p.ca_cert.display()),
                format!("--service-cluster-ip-range={SERVICE_CIDR}"),
                format!("--controllers={controllers}"),
                "--v=1".into(),
            ],
        )?);
        let scheduler_url = format!("https://127.0.0.1:{}", ports.scheduler);
        let scheduler = p.scheduler_kubeconfig.display().to_string();
        self.components.push(Component::spawn(
            "kube-scheduler",
            &bins.scheduler,
            &logs,
            &[
                format!("--kubeconfig={scheduler}"),
                format!("--authentication-kubeconfig={scheduler}"),
                format!("--authorization-kubeconfig={scheduler}"),
                "--bind-address=127.0.0.1".into(),
                format!("--secure-port={}", ports.scheduler),
                format!("--tls-cert-file={}", p.components_cert.display()),
                format!("--tls-private-key-file={}", p.components_key.display()),
                "--leader-elect=false".into(),
                "--v=1".into(),
            ],
        )?);
        let kwok_url = format!("http://127.0.0.1:{}", ports.kwok);
        self.components.push(Component::spawn(
            "kwok",
            &bins.kwok,
            &logs,
            &[
                format!("--kubeconfig={}", p.admin_kubeconfig.display()),
                format!("--config={}", bins.kwok_stages.display()),
                "--manage-all-nodes=false".into(),
                format!(
                    "--manage-nodes-with-annotation-selector={}={}",
                    nodes::KWOK_ANNOTATION,
                    nodes::KWOK_VALUE
                ),
                format!("--cidr={POD_CIDR}"),
                "--node-ip=10.240.0.1".into(),
                "--node-lease-duration-seconds=40".into(),
                format!("--server-address=127.0.0.1:{}", ports.kwok),
            ],
        )?);
        nodes::create(&admin).await?;

        let kcm_health = ready::health_client(&kcm_url, Some(&pki.ca_der))?;
        let scheduler_health = ready::health_client(&scheduler_url, Some(&pki.ca_der))?;
        let kwok_health = ready::health_client(&kwok_url, None)?;
        ready::wait(
            &mut self.components,
            "kube-controller-manager",
            "its /healthz",
            deadline,
            || ready::api_ok(&kcm_health, "/healthz"),
        )
        .await?;
        ready::wait(
            &mut self.components,
            "kube-scheduler",
            "its /healthz",
            deadline,
            || ready::api_ok(&scheduler_health, "/healthz"),
        )
        .await?;
        ready::wait(
            &mut self.components,
            "kwok",
            "its /healthz",
            deadline,
            || ready::api_ok(&kwok_health, "/healthz"),
        )
        .await?;
        ready::wait(
            &mut self.components,
            "kwok",
            "the Nodes Ready",
            deadline,
            || nodes::all_ready(&admin),
        )
        .await?;
        ready::wait(
            &mut self.components,
            "kube-controller-manager",
            "the default ServiceAccounts",
            deadline,
            || ready::default_service_accounts(&admin),
        )
        .await?;
        Ok(())
    }

    /// The API server's URL (`https://127.0.0.1:PORT`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The cluster CA (PEM) the API server's certificate chains to.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A kubeconfig for `kubernetes-admin` (`system:masters`).
    pub fn kubeconfig(&self) -> PathBuf {
        pki::Paths::under(&self.dir).admin_kubeconfig
    }

    /// The directory of the state, certificates, kubeconfigs and `logs/`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A kube client for `kubernetes-admin`.
    pub async fn client(&self) -> Result<kube::Client, Error> {
        ready::client(&self.kubeconfig()).await
    }

    /// Fails naming the first component that has exited since the start.
    pub fn check(&mut self) -> Result<(), Error> {
        self.components.iter_mut().try_for_each(Component::check)
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        for component in self.components.iter_mut().rev() {
            component.stop();
        }
    }
}
