//! A minimal HTTP/1.1 client over a TCP stream, enough for Keystone's WSGI reference
//! server on loopback: one request per connection, the answer read to its end.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;

use serde_json::Value;

/// One answer: the status, the headers (names lowercased) and the body as JSON (`Null`
/// when empty, a string when not JSON).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

/// Sends `method path` to `127.0.0.1:port` with `headers` and an optional JSON body.
///
/// # Panics
///
/// When the server does not answer, or not with HTTP.
pub fn send(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Answer {
    try_send(port, method, path, headers, body)
        .unwrap_or_else(|e| panic!("{method} {path}: the real Keystone did not answer: {e}"))
}

/// [`send`], with the failure to connect, send, read or parse as an error.
pub fn try_send(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> std::io::Result<Answer> {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.write_all(request.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse(&raw).ok_or_else(|| {
        std::io::Error::other(format!(
            "not an HTTP answer: {:?}",
            String::from_utf8_lossy(&raw)
        ))
    })
}

fn parse(raw: &[u8]) -> Option<Answer> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..split]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let body = &raw[split + 4..];
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
    };
    Some(Answer {
        status,
        headers,
        body,
    })
}
