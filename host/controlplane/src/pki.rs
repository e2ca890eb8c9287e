//! The control plane's certificates and kubeconfigs: a CA made at start, kube-apiserver's
//! serving certificate, one serving certificate for the controller manager's and the
//! scheduler's health ports, client certificates for the admin and each component, and the
//! ServiceAccount signing key. Private keys and kubeconfigs are written with mode 0600.

use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

use crate::Error;

/// The files under a control plane's directory.
pub(crate) struct Paths {
    pub(crate) ca_cert: PathBuf,
    pub(crate) apiserver_cert: PathBuf,
    pub(crate) apiserver_key: PathBuf,
    pub(crate) components_cert: PathBuf,
    pub(crate) components_key: PathBuf,
    pub(crate) sa_key: PathBuf,
    pub(crate) sa_pub: PathBuf,
    pub(crate) front_proxy_ca: PathBuf,
    pub(crate) front_proxy_client_cert: PathBuf,
    pub(crate) front_proxy_client_key: PathBuf,
    pub(crate) admin_kubeconfig: PathBuf,
    pub(crate) controller_manager_kubeconfig: PathBuf,
    pub(crate) scheduler_kubeconfig: PathBuf,
}

impl Paths {
    pub(crate) fn under(dir: &Path) -> Self {
        let pki = dir.join("pki");
        Self {
            ca_cert: pki.join("ca.crt"),
            apiserver_cert: pki.join("apiserver.crt"),
            apiserver_key: pki.join("apiserver.key"),
            components_cert: pki.join("components.crt"),
            components_key: pki.join("components.key"),
            sa_key: pki.join("sa.key"),
            sa_pub: pki.join("sa.pub"),
            front_proxy_ca: pki.join("front-proxy-ca.crt"),
            front_proxy_client_cert: pki.join("front-proxy-client.crt"),
            front_proxy_client_key: pki.join("front-proxy-client.key"),
            admin_kubeconfig: dir.join("admin.kubeconfig"),
            controller_manager_kubeconfig: dir.join("controller-manager.kubeconfig"),
            scheduler_kubeconfig: dir.join("scheduler.kubeconfig"),
        }
    }
}

/// The written certificates.
pub(crate) struct Pki {
    pub(crate) paths: Paths,
    pub(crate) ca_pem: String,
    pub(crate) ca_der: Vec<u8>,
}

/// The names kube-apiserver's certificate is valid for: loopback and the `kubernetes`
/// Service's names and ClusterIP (the first address of [`crate::SERVICE_CIDR`]).
const APISERVER_NAMES: [&str; 5] = [
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
];
const KUBERNETES_SERVICE_IP: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 1);

impl Pki {
    /// Makes and writes every certificate, key and kubeconfig for an API server at `url`.
    pub(crate) fn write(dir: &Path, url: &str) -> Result<Self, Error> {
        let paths = Paths::under(dir);
        let pki = dir.join("pki");
        std::fs::create_dir_all(&pki)
            .map_err(Error::io(format!("cannot create {}", pki.display())))?;

        let (ca, ca_params, ca_key) = authority("wasm-operator control plane CA")?;
        let issuer = Issuer::new(ca_params, &ca_key);
        write(&paths.ca_cert, ca.pem().as_bytes(), 0o644)?;

        let serving = |cn: &str, names: &[&str], ips: &[IpAddr]| -> Result<_, Error> {
            let key = KeyPair::generate()?;
            let mut params = CertificateParams::new(Vec::<String>::new())?;
            params.distinguished_name.push(DnType::CommonName, cn);
            params.subject_alt_names = names
                .iter()
                .map(|n| Ok(SanType::DnsName((*n).try_into()?)))
                .chain(ips.iter().map(|ip| Ok(SanType::IpAddress(*ip))))
                .collect::<Result<_, rcgen::Error>>()?;
            params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
            Ok((params.signed_by(&key, &issuer)?.pem(), key.serialize_pem()))
        };
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let (cert, key) = serving(
            "kube-apiserver",
            &APISERVER_NAMES,
            &[loopback, IpAddr::V4(KUBERNETES_SERVICE_IP)],
        )?;
        write(&paths.apiserver_cert, cert.as_bytes(), 0o644)?;
        write(&paths.apiserver_key, key.as_bytes(), 0o600)?;
        let (cert, key) = serving("control plane components", &["localhost"], &[loopback])?;
        write(&paths.components_cert, cert.as_bytes(), 0o644)?;
        write(&paths.components_key, key.as_bytes(), 0o600)?;

        let client = |cn: &str, org: Option<&str>| -> Result<(String, String), Error> {
            let key = KeyPair::generate()?;
            let mut params = CertificateParams::new(Vec::<String>::new())?;
            params.distinguished_name.push(DnType::CommonName, cn);
            if let Some(org) = org {
                params
                    .distinguished_name
                    .push(DnType::OrganizationName, org);
            }
            params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
            Ok((params.signed_by(&key, &issuer)?.pem(), key.serialize_pem()))
        };
        let ca_pem = ca.pem();
        for (path, cn, org) in [
            (
                &paths.admin_kubeconfig,
                "kubernetes-admin",
                Some("system:masters"),
            ),
            (
                &paths.controller_manager_kubeconfig,
                "system:kube-controller-manager",
                None,
            ),
            (&paths.scheduler_kubeconfig, "system:kube-scheduler", None),
        ] {
            let (cert, key) = client(cn, org)?;
            write(
                path,
                kubeconfig(url, &ca_pem, cn, &cert, &key).as_bytes(),
                0o600,
            )?;
        }

        // The front proxy (aggregated APIs) has a CA of its own, as in kubeadm.
        let (proxy_ca, proxy_params, proxy_key) = authority("front-proxy-ca")?;
        write(&paths.front_proxy_ca, proxy_ca.pem().as_bytes(), 0o644)?;
        let proxy_issuer = Issuer::new(proxy_params, &proxy_key);
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params
            .distinguished_name
            .push(DnType::CommonName, "front-proxy-client");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&key, &proxy_issuer)?;
        write(&paths.front_proxy_client_cert, cert.pem().as_bytes(), 0o644)?;
        write(
            &paths.front_proxy_client_key,
            key.serialize_pem().as_bytes(),
            0o600,
        )?;

        let sa = KeyPair::generate()?;
        write(&paths.sa_key, sa.serialize_pem().as_bytes(), 0o600)?;
        write(&paths.sa_pub, sa.public_key_pem().as_bytes(), 0o644)?;

        Ok(Self {
            paths,
            ca_der: ca.der().to_vec(),
            ca_pem,
        })
    }
}

/// A self-signed CA named `cn`: its certificate, parameters and key.
fn authority(cn: &str) -> Result<(rcgen::Certificate, CertificateParams, KeyPair), Error> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name.push(DnType::CommonName, cn);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let cert = params.self_signed(&key)?;
    Ok((cert, params, key))
}

/// A kubeconfig (JSON, which every kubeconfig reader takes) for `user` at `url`.
fn kubeconfig(url: &str, ca: &str, user: &str, cert: &str, key: &str) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "wasm-operator", "cluster": {
            "server": url, "certificate-authority-data": b64(ca)}}],
        "users": [{"name": user, "user": {
            "client-certificate-data": b64(cert), "client-key-data": b64(key)}}],
        "contexts": [{"name": "wasm-operator", "context": {"cluster": "wasm-operator", "user": user}}],
        "current-context": "wasm-operator",
    })
    .to_string()
}

fn write(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    let what = || format!("cannot write {}", path.display());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
        .map_err(Error::io(what()))?;
    file.write_all(bytes).map_err(Error::io(what()))
}
