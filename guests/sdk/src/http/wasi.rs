//! One request over `wasi:http/outgoing-handler` (wasm32 only), and the host's error codes
//! in [`HttpError`]'s terms.

use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    ErrorCode, Fields, IncomingBody, Method as WasiMethod, OutgoingBody, OutgoingRequest,
    RequestOptions, Scheme,
};
use wasip2::io::streams::StreamError;

use super::{HttpError, Method, Request, Response, Url};

/// The most bytes one `blocking-write-and-flush` takes.
const WRITE_CHUNK: usize = 4096;
/// The Content-Length a request is sent with: its body's length when it has a body or its
/// method carries one (`POST`, `PUT`, `PATCH`: 0 when empty); none for the others.
fn content_length(request: &Request) -> Option<usize> {
    let carries_body = matches!(request.method, Method::Post | Method::Put | Method::Patch);
    (carries_body || !request.body.is_empty()).then_some(request.body.len())
}

/// How many bytes one read asks for.
const READ_CHUNK: u64 = 64 * 1024;

/// Sends `request` to `url` once (no redirects).
pub(super) fn send(request: &Request, url: &Url) -> Result<Response, HttpError> {
    let at = |code: ErrorCode| from_code(&request.url, url, code);
    let other = |message: &str| HttpError::Other {
        url: request.url.clone(),
        message: message.to_owned(),
    };
    let mut entries: Vec<(String, Vec<u8>)> = request
        .headers
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.as_bytes().to_vec()))
        .collect();
    // The body is whole before it is sent, so it goes with its length, not chunked:
    // servers such as Python's WSGI reference server read no chunked request body.
    if let Some(length) = content_length(request)
        && !entries.iter().any(|(n, _)| n == "content-length")
    {
        entries.push(("content-length".into(), length.to_string().into_bytes()));
    }
    let headers = Fields::from_list(&entries).map_err(|e| HttpError::Invalid {
        url: request.url.clone(),
        message: format!("a header cannot be sent: {e:?}"),
    })?;
    let outgoing = OutgoingRequest::new(headers);
    let set = [
        outgoing.set_method(&method(request.method)),
        outgoing.set_scheme(Some(&if url.https {
            Scheme::Https
        } else {
            Scheme::Http
        })),
        outgoing.set_authority(Some(&url.authority())),
        outgoing.set_path_with_query(Some(&url.path_and_query)),
    ];
    if set.iter().any(Result::is_err) {
        return Err(HttpError::Invalid {
            url: request.url.clone(),
            message: "the method, authority or path cannot be sent".into(),
        });
    }
    let options = RequestOptions::new();
    if let Some(timeout) = request.timeout {
        let nanos = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        // The host caps each; a refusal to set one leaves the host's.
        let _ = options.set_connect_timeout(Some(nanos));
        let _ = options.set_first_byte_timeout(Some(nanos));
        let _ = options.set_between_bytes_timeout(Some(nanos));
    }
    let body = outgoing
        .body()
        .map_err(|()| other("the request body is unavailable"))?;
    let future = outgoing_handler::handle(outgoing, Some(options)).map_err(at)?;
    let written = write_body(&body, &request.body);
    let finished = OutgoingBody::finish(body, None);
    future.subscribe().block();
    let incoming = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(at(code)),
        Some(Err(())) | None => return Err(other("the response was already taken")),
    };
    written?;
    finished.map_err(at)?;
    let status = incoming.status();
    let headers = incoming
        .headers()
        .entries()
        .into_iter()
        .map(|(n, v)| {
            (
                n.to_ascii_lowercase(),
                String::from_utf8_lossy(&v).into_owned(),
            )
        })
        .collect();
    let body = incoming
        .consume()
        .map_err(|()| other("the response body is unavailable"))?;
    let bytes = read_body(&body).map_err(|e| match e {
        BodyError::Code(code) => at(code),
        BodyError::Text(text) => from_text(&request.url, &text),
    })?;
    let _trailers = IncomingBody::finish(body);
    drop(incoming);
    Ok(Response {
        status,
        headers,
        body: bytes,
        url: request.url.clone(),
    })
}

fn write_body(body: &OutgoingBody, bytes: &[u8]) -> Result<(), HttpError> {
    if bytes.is_empty() {
        return Ok(());
    }
    let failed = || HttpError::Other {
        url: String::new(),
        message: "the request body cannot be written".into(),
    };
    let stream = body.write().map_err(|()| failed())?;
    for chunk in bytes.chunks(WRITE_CHUNK) {
        stream
            .blocking_write_and_flush(chunk)
            .map_err(|_| failed())?;
    }
    drop(stream);
    Ok(())
}

/// How reading a response body failed.
enum BodyError {
    /// With the host's error code.
    Code(ErrorCode),
    /// With only the error's debug text.
    Text(String),
}

/// The whole body.
fn read_body(body: &IncomingBody) -> Result<Vec<u8>, BodyError> {
    let stream = body
        .stream()
        .map_err(|()| BodyError::Text("the response body is unavailable".into()))?;
    let mut out = Vec::new();
    loop {
        match stream.blocking_read(READ_CHUNK) {
            Ok(chunk) => out.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(error)) => {
                return Err(match wasip2::http::types::http_error_code(&error) {
                    Some(code) => BodyError::Code(code),
                    None => BodyError::Text(error.to_debug_string()),
                });
            }
        }
    }
    drop(stream);
    Ok(out)
}

/// A body error that came without an error code.
///
/// DECISION: wasmtime-wasi-http 48 hands a body stream's failure to the guest as an
/// `io-error` whose `http-error-code` is none (it wraps its own error type instead of the
/// error code), so the cause is read from the error's debug text: the host's body cap and
/// between-bytes timeout say so in it. Anything else is `Other` with that text (host text,
/// never response content).
fn from_text(url: &str, text: &str) -> HttpError {
    let lower = text.to_ascii_lowercase();
    if lower.contains("body size") || lower.contains("bodysize") {
        HttpError::TooLarge {
            url: url.to_owned(),
        }
    } else if lower.contains("timeout") {
        HttpError::Timeout {
            url: url.to_owned(),
        }
    } else {
        HttpError::Other {
            url: url.to_owned(),
            message: format!("the response body failed: {text}"),
        }
    }
}

fn method(method: Method) -> WasiMethod {
    match method {
        Method::Get => WasiMethod::Get,
        Method::Head => WasiMethod::Head,
        Method::Post => WasiMethod::Post,
        Method::Put => WasiMethod::Put,
        Method::Patch => WasiMethod::Patch,
        Method::Delete => WasiMethod::Delete,
    }
}

/// The host's error code in the SDK's terms.
fn from_code(request_url: &str, url: &Url, code: ErrorCode) -> HttpError {
    let url_s = request_url.to_owned();
    let connection = |message: String| HttpError::Connection {
        url: url_s.clone(),
        message,
    };
    match code {
        ErrorCode::HttpRequestDenied => HttpError::Refused {
            url: url_s.clone(),
            destination: url.authority(),
        },
        ErrorCode::ConnectionTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionWriteTimeout
        | ErrorCode::HttpResponseTimeout
        | ErrorCode::DnsTimeout => HttpError::Timeout { url: url_s.clone() },
        ErrorCode::HttpResponseBodySize(_) => HttpError::TooLarge { url: url_s.clone() },
        ErrorCode::ConnectionRefused => connection("connection refused".into()),
        ErrorCode::DnsError(_) | ErrorCode::DestinationNotFound => {
            connection(format!("no such host {}", url.host))
        }
        ErrorCode::DestinationUnavailable
        | ErrorCode::DestinationIpUnroutable
        | ErrorCode::DestinationIpProhibited
        | ErrorCode::ConnectionTerminated
        | ErrorCode::ConnectionLimitReached => connection(format!("{code:?}")),
        ErrorCode::TlsCertificateError => {
            connection("the server's TLS certificate is not trusted".into())
        }
        ErrorCode::TlsProtocolError | ErrorCode::TlsAlertReceived(_) => {
            connection(format!("TLS failed: {code:?}"))
        }
        other => HttpError::Other {
            url: url_s.clone(),
            message: format!("{other:?}"),
        },
    }
}
