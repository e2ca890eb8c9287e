//! The webhook server's TLS: a listener that completes each handshake before the HTTP server
//! sees the connection, and a certificate that can be replaced while it serves.

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take to complete its handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// Why a certificate and key cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{what}: {message}")]
    Pem { what: String, message: String },
    #[error("{what}: no {item} in it")]
    Empty { what: String, item: &'static str },
    #[error("the key does not fit the certificate or is not supported: {0}")]
    Key(String),
}

/// The certificate the server presents now; swapped when it is renewed or its files change.
#[derive(Debug)]
pub(crate) struct ServingCert {
    current: RwLock<Arc<CertifiedKey>>,
}

impl ServingCert {
    pub(crate) fn new(key: CertifiedKey) -> Arc<Self> {
        Arc::new(Self {
            current: RwLock::new(Arc::new(key)),
        })
    }

    pub(crate) fn replace(&self, key: CertifiedKey) {
        *self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(key);
    }

    /// A server configuration presenting whatever certificate is current at each handshake.
    pub(crate) fn acceptor(self: &Arc<Self>) -> Result<TlsAcceptor, TlsError> {
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Key(e.to_string()))?
        .with_no_client_auth()
        .with_cert_resolver(self.clone());
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

impl ResolvesServerCert for ServingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        )
    }
}

/// A certificate chain and private key, both PEM, as a key rustls serves; `what` names
/// their source in errors.
pub(crate) fn certified_key(
    what: &str,
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<CertifiedKey, TlsError> {
    use rustls::pki_types::pem::PemObject as _;
    let pem = |message: String| TlsError::Pem {
        what: what.to_owned(),
        message,
    };
    let chain = rustls::pki_types::CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem(e.to_string()))?;
    if chain.is_empty() {
        return Err(TlsError::Empty {
            what: what.to_owned(),
            item: "certificate",
        });
    }
    let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| pem(e.to_string()))?;
    let provider = rustls::crypto::ring::default_provider();
    CertifiedKey::from_der(chain, key, &provider).map_err(|e| TlsError::Key(e.to_string()))
}

/// Connections whose TLS handshake completed, handed to the HTTP server. Each handshake runs
/// in its own task (bounded by [`HANDSHAKE`]), so a client that connects and never
/// completes one holds up nobody else.
pub(crate) struct TlsListener {
    addr: SocketAddr,
    ready: tokio::sync::mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    accepting: tokio::task::JoinHandle<()>,
}

/// Handshakes in progress at most; further connections wait in the kernel's backlog.
const HANDSHAKES_IN_FLIGHT: usize = 64;

impl TlsListener {
    pub(crate) fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> std::io::Result<Self> {
        let addr = tcp.local_addr()?;
        let (tx, ready) = tokio::sync::mpsc::channel(HANDSHAKES_IN_FLIGHT);
        let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(HANDSHAKES_IN_FLIGHT));
        let accepting = tokio::spawn(async move {
            loop {
                let Ok(permit) = permits.clone().acquire_owned().await else {
                    return;
                };
                let (stream, peer) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        tracing::debug!(%error, "the webhook server cannot accept");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    let _permit = permit;
                    match tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(error)) => {
                            tracing::debug!(%error, %peer, "webhook TLS handshake refused");
                        }
                        Err(_) => tracing::debug!(%peer, "webhook TLS handshake timed out"),
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
            Some(connection) => connection,
            // The accepting task ended (it is aborted only on drop): serve nothing more.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}
