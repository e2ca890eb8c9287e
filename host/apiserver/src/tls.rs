//! HTTPS for the API server and the OpenBao stand-in: a CA made at start and a server
//! certificate it signs for the names the caller gives (the API server and the shared
//! stand-in: `127.0.0.1` and `localhost`; an OpenBaoCluster's: its Service names and
//! `127.0.0.1`); a listener that hands the HTTP server connections whose TLS handshake
//! completed, each handshake running on its own so a slow client holds up no other.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::private_file;

/// How long a client may take to complete its handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// The CA (PEM, what a client trusts) and the server's TLS configuration.
pub(crate) struct Tls {
    pub ca_pem: String,
    pub acceptor: TlsAcceptor,
}

/// What a server's TLS is made from: PEM texts.
struct Material {
    ca: String,
    cert: String,
    key: String,
}

/// A fresh CA and a server certificate it signs, valid for `names` (an IP address becomes
/// an IP SAN, anything else a DNS SAN).
pub(crate) fn generate(ca_name: &str, names: Vec<String>) -> Result<Tls, String> {
    serve(&make(ca_name, names)?)
}

/// As [`generate`], but kept in `dir` (`ca.crt`, `tls.crt`, `tls.key`, the key 0600) and
/// read from there when it holds them, so clients that trust the CA keep trusting a server
/// started again over the same data.
pub(crate) fn kept(dir: &Path, ca_name: &str, names: Vec<String>) -> Result<Tls, String> {
    let error = |e: std::io::Error| format!("{}: {e}", dir.display());
    let files = ["ca.crt", "tls.crt", "tls.key"].map(|f| dir.join(f));
    let read: Vec<Option<String>> = files
        .iter()
        .map(|f| private_file::read(f))
        .collect::<Result<_, _>>()
        .map_err(error)?;
    if let [Some(ca), Some(cert), Some(key)] = read.as_slice() {
        return serve(&Material {
            ca: ca.clone(),
            cert: cert.clone(),
            key: key.clone(),
        });
    }
    let material = make(ca_name, names)?;
    std::fs::create_dir_all(dir).map_err(error)?;
    for (file, text) in files
        .iter()
        .zip([&material.ca, &material.cert, &material.key])
    {
        private_file::write(file, text.as_bytes()).map_err(error)?;
    }
    serve(&material)
}

fn make(ca_name: &str, names: Vec<String>) -> Result<Material, String> {
    let error = |e: &dyn std::fmt::Display| e.to_string();
    let ca_key = rcgen::KeyPair::generate().map_err(|e| error(&e))?;
    let mut ca_params =
        rcgen::CertificateParams::new(Vec::<String>::new()).map_err(|e| error(&e))?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, ca_name);
    let ca = ca_params.self_signed(&ca_key).map_err(|e| error(&e))?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().map_err(|e| error(&e))?;
    let params = rcgen::CertificateParams::new(names).map_err(|e| error(&e))?;
    let cert = params.signed_by(&key, &issuer).map_err(|e| error(&e))?;
    Ok(Material {
        ca: ca.pem(),
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

fn serve(material: &Material) -> Result<Tls, String> {
    let error = |e: &dyn std::fmt::Display| e.to_string();
    let cert = pem_der(&material.cert)?;
    let key = pem_der(&material.key)?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| error(&e))?
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.into()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.into()),
    )
    .map_err(|e| error(&e))?;
    Ok(Tls {
        ca_pem: material.ca.clone(),
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}

/// The DER of the first PEM block in `pem`.
pub(crate) fn pem_der(pem: &str) -> Result<Vec<u8>, String> {
    let (_, der) = der::pem::decode_vec(pem.as_bytes()).map_err(|e| format!("not PEM: {e}"))?;
    Ok(der)
}

/// Connections whose handshake completed, from a task that accepts and shakes hands.
pub(crate) struct TlsListener {
    addr: SocketAddr,
    ready: tokio::sync::mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    /// Starts accepting on `tcp`; `what` names the server in logs.
    pub(crate) fn new(
        tcp: TcpListener,
        acceptor: TlsAcceptor,
        what: &'static str,
    ) -> std::io::Result<Self> {
        let addr = tcp.local_addr()?;
        let (send, ready) = tokio::sync::mpsc::channel(64);
        let accepting = tokio::spawn(async move {
            loop {
                let (stream, addr) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        tracing::debug!(%error, what, "cannot accept");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let (acceptor, send) = (acceptor.clone(), send.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = send.send((tls, addr)).await;
                        }
                        Ok(Err(error)) => {
                            tracing::debug!(%error, %addr, what, "TLS handshake refused")
                        }
                        Err(_) => tracing::debug!(%addr, what, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(Self {
            addr,
            ready,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(accepted) => accepted,
            // The accepting task ended (aborted): serve nothing more.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}
