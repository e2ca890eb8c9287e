//! The stand-in's HTTPS, as an OpenBao server's listener with `tls_cert_file`: a CA made at
//! start and a server certificate it signs for the names the caller gives (the shared
//! stand-in: `127.0.0.1` and `localhost`; an OpenBaoCluster's: its Service names and
//! `127.0.0.1`); a listener that completes each connection's TLS handshake before the HTTP
//! server sees it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take to complete its handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// The CA (PEM, what a client trusts) and the server's TLS configuration.
pub(crate) struct Tls {
    pub ca_pem: String,
    pub acceptor: TlsAcceptor,
}

/// A fresh CA and a server certificate it signs, valid for `names` (an IP address becomes
/// an IP SAN, anything else a DNS SAN).
pub(crate) fn generate(names: Vec<String>) -> Result<Tls, String> {
    let error = |e: &dyn std::fmt::Display| e.to_string();
    let ca_key = rcgen::KeyPair::generate().map_err(|e| error(&e))?;
    let mut ca_params =
        rcgen::CertificateParams::new(Vec::<String>::new()).map_err(|e| error(&e))?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(
        rcgen::DnType::CommonName,
        "wasm-operator OpenBao stand-in CA",
    );
    let ca = ca_params.self_signed(&ca_key).map_err(|e| error(&e))?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().map_err(|e| error(&e))?;
    let params = rcgen::CertificateParams::new(names).map_err(|e| error(&e))?;
    let cert = params.signed_by(&key, &issuer).map_err(|e| error(&e))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| error(&e))?
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .map_err(|e| error(&e))?;
    Ok(Tls {
        ca_pem: ca.pem(),
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}

/// Accepts TCP connections and answers those whose handshake completed.
pub(crate) struct TlsListener {
    pub tcp: TcpListener,
    pub acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (stream, addr) = match self.tcp.accept().await {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::debug!(%error, "the OpenBao stand-in cannot accept");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            match tokio::time::timeout(HANDSHAKE, self.acceptor.accept(stream)).await {
                Ok(Ok(tls)) => return (tls, addr),
                Ok(Err(error)) => tracing::debug!(%error, %addr, "TLS handshake refused"),
                Err(_) => tracing::debug!(%addr, "TLS handshake timed out"),
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}
