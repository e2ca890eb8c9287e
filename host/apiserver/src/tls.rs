//! HTTPS for the API server and the OpenBao stand-in: a CA made at start and a server
//! certificate it signs for the names the caller gives (the API server and the shared
//! stand-in: `127.0.0.1` and `localhost`; an OpenBaoCluster's: its Service names and
//! `127.0.0.1`); client certificates the CA signs, accepted by the listener and read into
//! the user they name ([`ClientCertificate`]); a listener that hands the HTTP server
//! connections whose TLS handshake completed, each handshake running on its own so a slow
//! client holds up no other.

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

/// The CA (PEM, what a client trusts), the server's TLS configuration, and what signs
/// client certificates with the CA.
pub(crate) struct Tls {
    pub ca_pem: String,
    pub acceptor: TlsAcceptor,
    pub issuer: ClientIssuer,
}

/// What a server's TLS is made from: PEM texts.
struct Material {
    ca: String,
    ca_key: String,
    cert: String,
    key: String,
}

/// Signs client certificates with the server's CA, as kube-apiserver's client CA: the
/// common name is the user, each organization a group.
pub(crate) struct ClientIssuer {
    ca_pem: String,
    ca_key: String,
}

impl ClientIssuer {
    /// A certificate (PEM) and its key (PEM, PKCS#8) for `user` in `groups` (one
    /// organization each), for client authentication, valid a year.
    pub(crate) fn issue(&self, user: &str, groups: &[&str]) -> Result<(String, String), String> {
        use crate::actors::cert_manager::{keys::Key, x509};
        let error = |e: &dyn std::fmt::Display| e.to_string();
        let ca = x509::parse_certificate(&self.ca_pem).map_err(|e| error(&e))?;
        let ca_key = Key::from_pem(&self.ca_key).map_err(|e| error(&e))?;
        let key = Key::generate(Some("ECDSA"), Some(256)).map_err(|e| error(&e))?;
        let request = x509::Request {
            common_name: Some(user),
            dns_names: Vec::new(),
            ip_addresses: Vec::new(),
            uris: Vec::new(),
            emails: Vec::new(),
            organizations: groups.to_vec(),
            duration: Duration::from_secs(365 * 24 * 3600),
            usages: vec!["digital signature", "client auth"],
            is_ca: false,
        };
        let signer = x509::Signer::Ca {
            certificate: &ca,
            key: &ca_key,
        };
        let certificate = x509::issue(&request, &key, &signer).map_err(|e| error(&e))?;
        Ok((
            x509::certificate_pem(&certificate).map_err(|e| error(&e))?,
            key.to_pem(true).map_err(|e| error(&e))?,
        ))
    }
}

/// A fresh CA and a server certificate it signs, valid for `names` (an IP address becomes
/// an IP SAN, anything else a DNS SAN).
pub(crate) fn generate(ca_name: &str, names: Vec<String>) -> Result<Tls, String> {
    serve(&make(ca_name, names)?)
}

/// As [`generate`], but kept in `dir` (`ca.crt`, `ca.key`, `tls.crt`, `tls.key`, every
/// file 0600) and read from there when it holds them all, so clients that trust the CA,
/// and client certificates it signed, stay valid when the server starts again over the
/// same data.
pub(crate) fn kept(dir: &Path, ca_name: &str, names: Vec<String>) -> Result<Tls, String> {
    let error = |e: std::io::Error| format!("{}: {e}", dir.display());
    let files = ["ca.crt", "ca.key", "tls.crt", "tls.key"].map(|f| dir.join(f));
    let read: Vec<Option<String>> = files
        .iter()
        .map(|f| private_file::read(f))
        .collect::<Result<_, _>>()
        .map_err(error)?;
    if let [Some(ca), Some(ca_key), Some(cert), Some(key)] = read.as_slice() {
        return serve(&Material {
            ca: ca.clone(),
            ca_key: ca_key.clone(),
            cert: cert.clone(),
            key: key.clone(),
        });
    }
    let material = make(ca_name, names)?;
    std::fs::create_dir_all(dir).map_err(error)?;
    for (file, text) in files.iter().zip([
        &material.ca,
        &material.ca_key,
        &material.cert,
        &material.key,
    ]) {
        private_file::write(file, text.as_bytes()).map_err(error)?;
    }
    serve(&material)
}

fn make(ca_name: &str, names: Vec<String>) -> Result<Material, String> {
    let error = |e: &dyn std::fmt::Display| e.to_string();
    let ca_key = rcgen::KeyPair::generate().map_err(|e| error(&e))?;
    let ca_key_pem = ca_key.serialize_pem();
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
        ca_key: ca_key_pem,
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// The TLS configuration: the server certificate, and client certificates the CA signed
/// accepted but not required (a client may authenticate with a token instead).
fn serve(material: &Material) -> Result<Tls, String> {
    let error = |e: &dyn std::fmt::Display| e.to_string();
    let cert = pem_der(&material.cert)?;
    let key = pem_der(&material.key)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(pem_der(&material.ca)?.into())
        .map_err(|e| error(&e))?;
    let clients = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .allow_unauthenticated()
    .build()
    .map_err(|e| error(&e))?;
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| error(&e))?
        .with_client_cert_verifier(clients)
        .with_single_cert(
            vec![cert.into()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.into()),
        )
        .map_err(|e| error(&e))?;
    Ok(Tls {
        ca_pem: material.ca.clone(),
        acceptor: TlsAcceptor::from(Arc::new(config)),
        issuer: ClientIssuer {
            ca_pem: material.ca.clone(),
            ca_key: material.ca_key.clone(),
        },
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

/// The user a connection's client certificate names (verified against the CA during the
/// handshake): the subject's common name, and its organizations as groups. `None` when the
/// client sent no certificate. Handed to every request of the connection.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientCertificate(pub Option<(String, Vec<String>)>);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, TlsListener>>
    for ClientCertificate
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, TlsListener>) -> Self {
        let (_, connection) = stream.io().get_ref();
        let subject = connection
            .peer_certificates()
            .and_then(|chain| chain.first())
            .and_then(|der| subject_of(der.as_ref()));
        Self(subject)
    }
}

/// Whether a certificate names client authentication among its extended key usages, as
/// every certificate [`ClientIssuer`] signs does — and the serving certificate, which the
/// same CA signed, does not, so it is never read as a user.
fn for_client_auth(cert: &x509_cert::Certificate) -> bool {
    use der::Decode as _;
    use der::oid::AssociatedOid as _;
    use x509_cert::ext::pkix::ExtendedKeyUsage;
    let client_auth = der::oid::ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.2");
    cert.tbs_certificate()
        .extensions()
        .into_iter()
        .flatten()
        .filter(|e| e.extn_id == ExtendedKeyUsage::OID)
        .filter_map(|e| ExtendedKeyUsage::from_der(e.extn_value.as_bytes()).ok())
        .any(|usages| usages.0.contains(&client_auth))
}

/// `id-at-commonName` (2.5.4.3).
const COMMON_NAME: der::oid::ObjectIdentifier = der::oid::ObjectIdentifier::new_unwrap("2.5.4.3");
/// `id-at-organizationName` (2.5.4.10).
const ORGANIZATION: der::oid::ObjectIdentifier = der::oid::ObjectIdentifier::new_unwrap("2.5.4.10");

/// The common name and organizations of a certificate's subject.
fn subject_of(der: &[u8]) -> Option<(String, Vec<String>)> {
    use der::Decode as _;
    let cert = x509_cert::Certificate::from_der(der).ok()?;
    if !for_client_auth(&cert) {
        return None;
    }
    let mut name = None;
    let mut groups = Vec::new();
    for attribute in cert.tbs_certificate().subject().iter() {
        let text = attribute
            .value
            .decode_as::<der::asn1::Utf8StringRef<'_>>()
            .map(|s| s.as_str().to_owned())
            .or_else(|_| {
                attribute
                    .value
                    .decode_as::<der::asn1::PrintableStringRef<'_>>()
                    .map(|s| s.as_str().to_owned())
            });
        let Ok(text) = text else { continue };
        if attribute.oid == COMMON_NAME {
            name = Some(text);
        } else if attribute.oid == ORGANIZATION {
            groups.push(text);
        }
    }
    Some((name.filter(|n| !n.is_empty())?, groups))
}
