//! HTTP(S) requests from a plugin (contract 1.1), over the standard
//! `wasi:http/outgoing-handler`.
//!
//! A plugin may send requests only to the `host:port` destinations it declares in
//! [`Description::egress`](crate::Description::egress) (e.g. `*.svc.cluster.local:5000`);
//! the host refuses any other before a socket is opened ([`HttpError::Refused`]). In a
//! cluster `http://{service}.{namespace}.svc.cluster.local:{port}` resolves through the
//! cluster's DNS; off-cluster (`dev-cluster`, tests) the host resolves it from the Service's
//! EndpointSlices, so the same code reaches the same Service.
//!
//! ```no_run
//! use wasm_operator_sdk::http::{self, Request};
//! # fn f(secret: &wasm_operator_sdk::ObjectRef) -> Result<(), Box<dyn std::error::Error>> {
//! // HTTPS to a server whose CA is in a Secret the plugin may `get`:
//! http::trust_ca(secret, "ca.crt")?;
//! let version = http::get("https://keystone.openstack.svc.cluster.local:5000/v3")?;
//! let token = Request::post("https://keystone.openstack.svc.cluster.local:5000/v3/auth/tokens")
//!     .json(&serde_json::json!({"auth": {}}))?
//!     .timeout(std::time::Duration::from_secs(5))
//!     .send()?;
//! # let _ = (version, token); Ok(()) }
//! ```
//!
//! Redirects (301, 302, 303, 307, 308 with a `Location`) are followed here, at most
//! [`Request::max_redirects`] (default 5) hops; each hop is a new request the host checks
//! against the declared destinations, so a redirect elsewhere fails [`HttpError::Refused`].
//! The host caps every timeout (`plugins.toml`: `http_timeout_ms`, default 10 s, also the
//! timeout when none is set) and the response body (`http_max_response_kib`, default
//! 3 MiB: [`HttpError::TooLarge`]); the pass's deadline covers the time spent waiting.
//!
//! Natively (unit tests against `FakeCluster`) there is no host: every request fails
//! [`HttpError::Unavailable`].

mod url;
#[cfg(target_arch = "wasm32")]
mod wasi;

use std::time::Duration;

use crate::ObjectRef;
use crate::error::ApiError;
use crate::plugin::ReconcileError;

pub use url::Url;

/// An HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
}

/// One request, built then [`send`](Request::send)t.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: Method,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Each of the connect, response-head and between-bytes timeouts; `None`: the host's
    /// (the plugin's `http_timeout_ms`). The host caps it at that value.
    pub timeout: Option<Duration>,
    /// Redirects followed before [`HttpError::TooManyRedirects`].
    pub max_redirects: u8,
}

/// A response: the last one when redirects were followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Header names lower-cased, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The URL that answered (after redirects).
    pub url: String,
}

/// Why a request failed. Each names the URL; none holds the response body in its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The host refused the destination: the plugin did not declare it.
    #[error("{url}: refused: {destination} is not a destination the plugin declared")]
    Refused { url: String, destination: String },
    /// No connection, response head or body frame within the timeout.
    #[error("{url}: timed out")]
    Timeout { url: String },
    /// The connection failed: refused, no such name, no endpoint, TLS not trusted.
    #[error("{url}: cannot connect: {message}")]
    Connection { url: String, message: String },
    /// The response body is over the host's cap.
    #[error("{url}: the response body is over the host's limit")]
    TooLarge { url: String },
    /// A status other than 2xx (from [`get`] and [`post_json`]; [`Request::send`] returns
    /// any status). The body is kept for the caller, never shown.
    #[error("{url}: status {status}")]
    Status {
        url: String,
        status: u16,
        body: Vec<u8>,
    },
    /// More redirects than [`Request::max_redirects`].
    #[error("{url}: more than {max} redirects")]
    TooManyRedirects { url: String, max: u8 },
    /// The URL or a header cannot be sent (not `http`/`https`, user info, bad characters).
    #[error("{url}: {message}")]
    Invalid { url: String, message: String },
    /// Any other failure of the exchange (a protocol error).
    #[error("{url}: {message}")]
    Other { url: String, message: String },
    /// Not running under the wasm host (native unit tests).
    #[error("{url}: HTTP needs the wasm-operator host")]
    Unavailable { url: String },
}

impl From<HttpError> for ReconcileError {
    /// A refused destination or an invalid request fails the same way on every retry:
    /// permanent; anything else is transient.
    fn from(error: HttpError) -> Self {
        match error {
            HttpError::Refused { .. } | HttpError::Invalid { .. } => {
                Self::Permanent(error.to_string())
            }
            _ => Self::Transient(error.to_string()),
        }
    }
}

impl Request {
    /// A request of `method` to `url`.
    pub fn new(method: Method, url: impl Into<String>) -> Self {
        Self {
            method,
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
            timeout: None,
            max_redirects: 5,
        }
    }

    /// A GET.
    pub fn get(url: impl Into<String>) -> Self {
        Self::new(Method::Get, url)
    }

    /// A POST.
    pub fn post(url: impl Into<String>) -> Self {
        Self::new(Method::Post, url)
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// Sets a JSON body and `content-type: application/json`.
    pub fn json<T: serde::Serialize>(self, value: &T) -> Result<Self, HttpError> {
        let body = serde_json::to_vec(value).map_err(|e| HttpError::Invalid {
            url: self.url.clone(),
            message: format!("the JSON body cannot be encoded: {e}"),
        })?;
        Ok(self.header("content-type", "application/json").body(body))
    }

    /// Sets the timeout of each phase (capped by the host).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets how many redirects are followed (0: none; a redirect is then the response).
    pub fn max_redirects(mut self, max: u8) -> Self {
        self.max_redirects = max;
        self
    }

    /// Sends the request, following redirects; any status is a response.
    pub fn send(self) -> Result<Response, HttpError> {
        let mut request = self;
        let mut hops = 0u8;
        loop {
            let url = Url::parse(&request.url)?;
            let response = send_once(&request, &url)?;
            let Some(next) = redirect(&request, &url, &response)? else {
                return Ok(response);
            };
            if hops == request.max_redirects {
                return Err(HttpError::TooManyRedirects {
                    url: request.url,
                    max: request.max_redirects,
                });
            }
            hops += 1;
            request = next;
        }
    }
}

/// The request a redirect asks for, if `response` is one.
fn redirect(
    request: &Request,
    url: &Url,
    response: &Response,
) -> Result<Option<Request>, HttpError> {
    if !matches!(response.status, 301 | 302 | 303 | 307 | 308) {
        return Ok(None);
    }
    let Some((_, location)) = response.headers.iter().find(|(n, _)| n == "location") else {
        return Ok(None);
    };
    let target = url.join(location)?;
    let mut next = request.clone();
    next.url = target.to_string();
    // 303, and 301/302 after a POST, become a GET without a body (as browsers do).
    let to_get = response.status == 303
        || (matches!(response.status, 301 | 302) && request.method == Method::Post);
    if to_get {
        next.method = Method::Get;
        next.body.clear();
        next.headers
            .retain(|(n, _)| !n.eq_ignore_ascii_case("content-type"));
    }
    Ok(Some(next))
}

#[cfg(target_arch = "wasm32")]
fn send_once(request: &Request, url: &Url) -> Result<Response, HttpError> {
    wasi::send(request, url)
}

#[cfg(not(target_arch = "wasm32"))]
fn send_once(request: &Request, _url: &Url) -> Result<Response, HttpError> {
    Err(HttpError::Unavailable {
        url: request.url.clone(),
    })
}

/// GETs `url`; a status other than 2xx is [`HttpError::Status`].
pub fn get(url: &str) -> Result<Response, HttpError> {
    success(Request::get(url).send()?)
}

/// POSTs `value` as JSON to `url`; a status other than 2xx is [`HttpError::Status`].
pub fn post_json<T: serde::Serialize>(url: &str, value: &T) -> Result<Response, HttpError> {
    success(Request::post(url).json(value)?.send()?)
}

fn success(response: Response) -> Result<Response, HttpError> {
    if (200..300).contains(&response.status) {
        Ok(response)
    } else {
        Err(HttpError::Status {
            url: response.url,
            status: response.status,
            body: response.body,
        })
    }
}

impl Response {
    /// The body as UTF-8 text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// For the rest of this pass, HTTPS requests also trust the PEM certificates in data key
/// `key` of Secret `secret` (which the plugin must have declared `get` on).
pub fn trust_ca(secret: &ObjectRef, key: &str) -> Result<(), ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::wit::trust_ca(secret, key)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = (secret, key);
        Err(ApiError::Other(
            "trust-ca needs the wasm-operator host".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, location: &str) -> Response {
        Response {
            status,
            headers: vec![("location".into(), location.into())],
            body: vec![],
            url: String::new(),
        }
    }

    #[test]
    fn a_redirect_after_a_post_becomes_a_get_without_a_body_unless_it_is_307_or_308() {
        let post = Request::post("http://a.ns.svc.cluster.local:5000/x")
            .json(&serde_json::json!({"k": 1}))
            .expect("json");
        let url = Url::parse(&post.url).expect("url");
        let next = redirect(&post, &url, &response(302, "/y"))
            .expect("a redirect")
            .expect("followed");
        assert_eq!(next.method, Method::Get);
        assert_eq!(next.url, "http://a.ns.svc.cluster.local:5000/y");
        assert!(next.body.is_empty() && next.headers.is_empty());
        let kept = redirect(&post, &url, &response(307, "https://b.example.com/z"))
            .expect("a redirect")
            .expect("followed");
        assert_eq!(
            (kept.method, kept.url.as_str()),
            (Method::Post, "https://b.example.com/z")
        );
        assert!(!kept.body.is_empty());
        assert_eq!(redirect(&post, &url, &response(200, "/y")), Ok(None));
    }
}
