//! The in-cluster client configuration, as client-go builds it: the API server at
//! `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`, trusted through the
//! ServiceAccount directory's `ca.crt`, authenticated with its `token` (re-read as the
//! kubelet rotates it), in its `namespace`. The directory is the kubelet's mount by default
//! and may be named (`run --service-account-dir`), so the same path runs outside a Pod.

use std::path::{Path, PathBuf};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;

/// Where the kubelet mounts a Pod's ServiceAccount token, CA and namespace.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Why there is no in-cluster configuration; names the variable or file.
#[derive(Debug, thiserror::Error)]
pub enum InClusterError {
    #[error("{0} is not set: not running in a Pod (or pass --kubeconfig)")]
    Env(&'static str),
    #[error("KUBERNETES_SERVICE_HOST and _PORT do not make a URL: {0}")]
    Url(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} holds no PEM certificate")]
    NoCertificate { path: PathBuf },
}

/// The configuration of a client of the cluster the process runs in.
pub fn config(service_account_dir: &Path) -> Result<kube::Config, InClusterError> {
    let var = |name: &'static str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .ok_or(InClusterError::Env(name))
    };
    let host = var("KUBERNETES_SERVICE_HOST")?;
    let port = var("KUBERNETES_SERVICE_PORT")?;
    // An IPv6 address is bracketed in a URL.
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    let url = format!("https://{host}:{port}")
        .parse()
        .map_err(|e: http::uri::InvalidUri| InClusterError::Url(e.to_string()))?;
    let read = |name: &str| {
        let path = service_account_dir.join(name);
        std::fs::read(&path).map_err(|source| InClusterError::Read { path, source })
    };
    let ca_path = service_account_dir.join("ca.crt");
    let roots: Vec<Vec<u8>> = CertificateDer::pem_slice_iter(&read("ca.crt")?)
        .filter_map(Result::ok)
        .map(|der| der.to_vec())
        .collect();
    if roots.is_empty() {
        return Err(InClusterError::NoCertificate { path: ca_path });
    }
    let token_file = service_account_dir.join("token");
    // Read once now, so a missing token fails the start rather than the first request.
    read("token")?;
    let mut config = kube::Config::new(url);
    config.root_cert = Some(roots);
    // Re-read when the cluster's CA rotates, as kube's own in-cluster config does.
    config.root_cert_file = Some(ca_path);
    config.auth_info.token_file = Some(token_file.display().to_string());
    config.default_namespace = read("namespace")
        .ok()
        .and_then(|ns| String::from_utf8(ns).ok())
        .map(|ns| ns.trim().to_owned())
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| "default".to_owned());
    Ok(config)
}
