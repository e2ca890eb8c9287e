//! TLS for egress: rustls (ring), verifying servers against the platform's roots plus the
//! certificates a pass trusted with `egress.trust-ca`.
//!
//! DECISION: the platform's roots (`rustls-native-certs`, the system's certificate store),
//! not a bundle compiled in (`webpki-roots`): an administrator updates them with the image
//! or node, private CAs installed there are honoured, and kube-rs already links the crate.

use std::sync::{Arc, OnceLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};

/// The platform's roots, read once per process.
fn platform_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        if !found.errors.is_empty() {
            tracing::warn!(
                errors = found.errors.len(),
                "some platform root certificates cannot be read; HTTPS egress trusts the rest"
            );
        }
        found.certs
    })
}

/// A client configuration trusting the platform's roots and `extra`.
pub(super) fn client_config(extra: &[CertificateDer<'static>]) -> Result<ClientConfig, String> {
    let mut roots = RootCertStore::empty();
    // A platform root rustls cannot use is skipped, as every TLS client does.
    let _ = roots.add_parsable_certificates(platform_roots().iter().cloned());
    for cert in extra {
        roots
            .add(cert.clone())
            .map_err(|e| format!("a trusted CA certificate is unusable: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// The certificates of a PEM text; an error when it holds none or a malformed one.
pub(crate) fn parse_pem(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("is not PEM certificates: {e}"))?;
    if certs.is_empty() {
        return Err("holds no PEM certificate".into());
    }
    Ok(certs)
}
