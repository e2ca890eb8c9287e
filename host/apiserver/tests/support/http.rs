//! A minimal HTTP/1.1 client for the stand-ins' APIs (one request per connection).

use std::collections::BTreeMap;

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// One answer: status, headers (lower-case names), body as JSON (`Null` when empty, a
/// string when not JSON).
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

/// Sends `method url` with `headers` and an optional JSON body (`http://` only).
pub async fn send(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Answer {
    try_send(None, method, url, headers, body)
        .await
        .expect("the server answers")
}

/// As [`send`], over `https://` trusting only the CA `ca_pem`.
pub async fn send_trusting(
    ca_pem: &str,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Answer {
    try_send(Some(ca_pem), method, url, headers, body)
        .await
        .expect("the server answers")
}

/// The DER of the first certificate in `pem`.
fn der(pem: &str) -> Vec<u8> {
    use base64::Engine as _;
    let body: String = pem
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .expect("a PEM certificate")
}

/// A TLS connection to `server`, trusting its CA, and the `ip:port` it is on.
pub async fn connect_to(
    server: &wasm_operator_apiserver::ApiServer,
) -> (
    tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
    String,
) {
    let address = server.url().trim_start_matches("https://").to_owned();
    let tcp = tokio::net::TcpStream::connect(&address)
        .await
        .expect("connects");
    let stream = connect_tls(tcp, Some(server.ca_pem()), &address)
        .await
        .expect("a TLS connection");
    (stream, address)
}

/// A TLS connection over `stream` to `host` (`name:port`), trusting only `ca_pem` (none: no
/// CA at all).
pub async fn connect_tls(
    stream: tokio::net::TcpStream,
    ca_pem: Option<&str>,
    host: &str,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, String> {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(pem) = ca_pem {
        roots.add(der(pem).into()).map_err(|e| e.to_string())?;
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = host.rsplit_once(':').map_or(host, |(h, _)| h).to_owned();
    let name = rustls::pki_types::ServerName::try_from(name).map_err(|e| e.to_string())?;
    tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(name, stream)
        .await
        .map_err(|e| e.to_string())
}

/// Sends one request; an `https://` URL trusts `ca_pem` only (none: no CA at all).
pub async fn try_send(
    ca_pem: Option<&str>,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Result<Answer, String> {
    try_send_via(None, ca_pem, method, url, headers, body).await
}

/// As [`try_send`], but connects to `connect` (`ip:port`, what a resolver answered) while
/// the URL's host stays the `Host` header and the TLS server name (SNI and verification).
pub async fn try_send_via(
    connect: Option<&str>,
    ca_pem: Option<&str>,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Result<Answer, String> {
    let (tls, rest) = match url.strip_prefix("https://") {
        Some(rest) => (true, rest),
        None => (
            false,
            url.strip_prefix("http://").expect("an http(s):// URL"),
        ),
    };
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
    let stream = tokio::net::TcpStream::connect(connect.unwrap_or(host))
        .await
        .map_err(|e| e.to_string())?;
    let payload = body.map(Value::to_string).unwrap_or_default();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if body.is_some() {
        request.push_str("Content-Type: application/json\r\n");
    }
    request.push_str(&format!(
        "Content-Length: {}\r\n\r\n{payload}",
        payload.len()
    ));
    let mut raw = Vec::new();
    if tls {
        let mut stream = connect_tls(stream, ca_pem, host).await?;
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        if let Err(e) = stream.read_to_end(&mut raw).await
            && (raw.is_empty() || e.kind() != std::io::ErrorKind::UnexpectedEof)
        {
            return Err(e.to_string());
        }
    } else {
        let mut stream = stream;
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        stream
            .read_to_end(&mut raw)
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(parse(&raw))
}

fn parse(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers: BTreeMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let body = if headers
        .get("transfer-encoding")
        .is_some_and(|t| t == "chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&body).unwrap_or(Value::String(body))
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Polls `check` every 100 ms until it answers `Some`, for up to 30 s.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..300 {
        if let Some(found) = check().await {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}
