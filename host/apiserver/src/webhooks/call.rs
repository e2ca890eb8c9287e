//! One webhook call over HTTPS: the AdmissionReview POSTed to the endpoint, the server's
//! certificate verified against the webhook's `caBundle` (else the platform's roots) for
//! the endpoint's server name, the whole exchange bounded by `timeoutSeconds`.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::resolve::Endpoint;

/// The most of a webhook's answer the server reads.
const MAX_RESPONSE: usize = 8 << 20;

/// Why a call failed; `Display` is the Go client's text (`Post "URL": cause`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    #[error("Post \"{url}\": {cause}")]
    Transport { url: String, cause: String },
    #[error("Post \"{url}\": context deadline exceeded")]
    Timeout { url: String },
    #[error("the server responded with the status code {code} (Post \"{url}\")")]
    Status { url: String, code: u16 },
    #[error("cannot use the webhook's caBundle: {0}")]
    CaBundle(String),
}

/// POSTs `body` to `endpoint` and answers the response body of a 2xx answer.
pub(crate) async fn post(
    endpoint: &Endpoint,
    ca_bundle: Option<&str>,
    body: &[u8],
    timeout: Duration,
) -> Result<Vec<u8>, CallError> {
    let seconds = timeout.as_secs();
    let url = format!("{}?timeout={seconds}s", endpoint.url);
    let connector = connector(ca_bundle)?;
    let exchange = exchange(endpoint, &url, seconds, connector, body);
    match tokio::time::timeout(timeout, exchange).await {
        Ok(result) => result,
        Err(_) => Err(CallError::Timeout { url }),
    }
}

fn connector(ca_bundle: Option<&str>) -> Result<tokio_rustls::TlsConnector, CallError> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_bundle.filter(|b| !b.is_empty()) {
        Some(bundle) => {
            let pem = base64::engine::general_purpose::STANDARD
                .decode(bundle)
                .map_err(|e| CallError::CaBundle(format!("not base64: {e}")))?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| CallError::CaBundle(e.to_string()))?;
                roots
                    .add(cert)
                    .map_err(|e| CallError::CaBundle(e.to_string()))?;
            }
        }
        None => {
            for cert in rustls_native_certs::load_native_certs().certs {
                // A platform certificate rustls cannot use is skipped, as Go skips it.
                let _ = roots.add(cert);
            }
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| CallError::CaBundle(e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

async fn exchange(
    endpoint: &Endpoint,
    url: &str,
    seconds: u64,
    connector: tokio_rustls::TlsConnector,
    body: &[u8],
) -> Result<Vec<u8>, CallError> {
    let transport = |cause: String| CallError::Transport {
        url: url.to_owned(),
        cause,
    };
    let tcp = tokio::net::TcpStream::connect(&endpoint.connect)
        .await
        .map_err(|e| transport(format!("dial tcp {}: {}", endpoint.connect, dial_error(&e))))?;
    let name =
        ServerName::try_from(endpoint.server_name.clone()).map_err(|e| transport(e.to_string()))?;
    let mut tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| transport(format!("tls: {e}")))?;
    let host = endpoint
        .url
        .trim_start_matches("https://")
        .split('/')
        .next()
        .unwrap_or_default();
    let head = format!(
        "POST {}?timeout={seconds}s HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json\r\nUser-Agent: wasm-operator-apiserver\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        endpoint.path,
        body.len()
    );
    tls.write_all(head.as_bytes())
        .await
        .map_err(|e| transport(e.to_string()))?;
    tls.write_all(body)
        .await
        .map_err(|e| transport(e.to_string()))?;
    tls.flush().await.map_err(|e| transport(e.to_string()))?;
    let mut raw = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let answer = |parsed: Parsed| {
        let (code, body) = parsed.map_err(transport)?;
        if !(200..300).contains(&code) {
            return Err(CallError::Status {
                url: url.to_owned(),
                code,
            });
        }
        Ok(body)
    };
    loop {
        if let Some(done) = complete(&raw) {
            return answer(done);
        }
        if raw.len() > MAX_RESPONSE {
            return Err(transport("the response is too large".into()));
        }
        match tls.read(&mut chunk).await {
            Ok(0) => return answer(finish_at_eof(&raw)),
            Ok(n) => raw.extend_from_slice(&chunk[..n]),
            // A peer closing without close_notify ends the body as EOF does.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return answer(finish_at_eof(&raw));
            }
            Err(e) => return Err(transport(e.to_string())),
        }
    }
}

/// A connect error as Go's net package words the common ones.
fn dial_error(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".into(),
        std::io::ErrorKind::HostUnreachable => "connect: no route to host".into(),
        _ => error.to_string(),
    }
}

type Parsed = Result<(u16, Vec<u8>), String>;

/// The status and body of `raw` once it holds a whole response (by Content-Length or a
/// chunked body's last chunk); `None` while more is needed.
fn complete(raw: &[u8]) -> Option<Parsed> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..end]).to_string();
    let body = &raw[end + 4..];
    let code = match status(&head) {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let header = |name: &str| {
        head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    };
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        return dechunk(body).map(|b| Ok((code, b)));
    }
    let length: usize = header("content-length")?.parse().ok()?;
    (body.len() >= length).then(|| Ok((code, body[..length].to_vec())))
}

fn finish_at_eof(raw: &[u8]) -> Parsed {
    if let Some(done) = complete(raw) {
        return done;
    }
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| "EOF".to_owned())?;
    let head = String::from_utf8_lossy(&raw[..end]).to_string();
    Ok((status(&head)?, raw[end + 4..].to_vec()))
}

fn status(head: &str) -> Result<u16, String> {
    head.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| "malformed HTTP response".to_owned())
}

/// A chunked body decoded, once its last chunk arrived.
fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        if body.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_complete_by_length_or_last_chunk() {
        assert_eq!(
            complete(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}").map(Result::unwrap),
            Some((200, b"{}".to_vec()))
        );
        assert!(complete(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n{}").is_none());
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
        assert_eq!(
            complete(chunked).map(Result::unwrap),
            Some((200, b"{}".to_vec()))
        );
        assert!(
            complete(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n").is_none()
        );
    }
}
