//! A minimal OpenStack Identity v3 client: the domain, federation and assignment calls
//! the backend's controller makes (facts §3.2 step 4), against the Keystone Service's
//! `/v3` (`http://{keystone}.{ns}.svc.cluster.local:5000/v3`).
//!
//! Every call authenticates first (CobaltCore's contract: no token is kept): `POST
//! /auth/tokens` with the password method — the bootstrap admin user in domain
//! `Default` — scoped to project `admin` in domain `Default`; the token is the response's
//! `X-Subject-Token`, sent as `X-Auth-Token`.
//!
//! | Module | Calls |
//! |---|---|
//! | [`domains`] | `GET /domains?name=`, `POST /domains`, `PATCH /domains/{id}`, `DELETE /domains/{id}` |
//! | [`federation`] | `GET`/`PUT`/`PATCH`/`DELETE` of `/OS-FEDERATION/identity_providers/{idp}`, `/OS-FEDERATION/mappings/{id}` and `/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}` |
//! | [`assignments`] | `GET /groups?name=&domain_id=`, `POST /groups`, `GET /roles?name=`, `GET /projects?name=&domain_id=`, `GET`/`PUT` of `/{domains,projects}/{id}/groups/{group}/roles/{role}` |
//! | [`rules`] | `spec.mappings` as Keystone's mapping rules |
//!
//! Requests go through a [`Transport`]: [`Egress`] (the plugin's HTTP egress) in a pass,
//! a fake Keystone in tests. A failed call is an [`Error`] naming the call (method and
//! path) and the HTTP status or transport failure; it never carries a response body nor
//! the password, so its text is safe in conditions, events and logs.

pub(crate) mod assignments;
pub(crate) mod domains;
pub(crate) mod federation;
pub(crate) mod rules;

#[cfg(test)]
pub(crate) mod fake;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use wasm_operator_sdk::http::{HttpError, Method, Request, Response};

/// Each phase's timeout of a request (the host caps it at the plugin's own).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);
/// The project the admin token is scoped to.
pub(crate) const ADMIN_PROJECT: &str = "admin";
/// The domain of the admin user and of its project.
pub(crate) const ADMIN_DOMAIN: &str = "Default";

/// How a request reaches Keystone: [`Egress`] in a pass, a fake Keystone in tests.
pub(crate) trait Transport {
    /// Sends `request`; any status is a response.
    fn send(&self, request: Request) -> Result<Response, HttpError>;
}

/// [`Transport`] through `wasm_operator_sdk::http` (the plugin's declared egress).
pub(crate) struct Egress;

impl Transport for Egress {
    fn send(&self, request: Request) -> Result<Response, HttpError> {
        // Keystone does not redirect: a redirect is answered as the error it is.
        request.timeout(TIMEOUT).max_redirects(0).send()
    }
}

/// A failed identity call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Error {
    /// The request did not get a response.
    #[error("{call}: {source}")]
    Transport {
        call: String,
        #[source]
        source: HttpError,
    },
    /// Keystone answered with a status other than 2xx.
    #[error("{call}: HTTP {status}")]
    Status { call: String, status: u16 },
    /// The token response carries no `X-Subject-Token`.
    #[error("{call}: the response carries no X-Subject-Token")]
    NoToken { call: String },
    /// The response body is not the JSON the call expects (where, never what).
    #[error("{call}: the response does not decode (line {line}, column {column})")]
    Decode {
        call: String,
        line: usize,
        column: usize,
    },
}

impl Error {
    /// Whether Keystone answered 404 Not Found.
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, Self::Status { status: 404, .. })
    }
}

/// The result of an identity call.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

/// The admin credentials a token is requested with.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Credentials {
    /// The bootstrap admin user (in domain [`ADMIN_DOMAIN`]).
    pub(crate) user: String,
    /// Its password.
    pub(crate) password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// The client: one Keystone's `/v3`, the admin credentials, and the transport.
pub(crate) struct Client<'t> {
    transport: &'t dyn Transport,
    /// `http://…:5000/v3`, without a trailing `/`.
    endpoint: String,
    credentials: Credentials,
}

/// The method as sent.
fn method_name(method: Method) -> &'static str {
    match method {
        Method::Get => "GET",
        Method::Head => "HEAD",
        Method::Post => "POST",
        Method::Put => "PUT",
        Method::Patch => "PATCH",
        Method::Delete => "DELETE",
    }
}

/// `value` percent-encoded for a path segment or a query value: every byte but the
/// unreserved characters of RFC 3986.
pub(crate) fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

impl<'t> Client<'t> {
    /// A client of the Keystone whose `/v3` is `endpoint`.
    pub(crate) fn new(
        transport: &'t dyn Transport,
        endpoint: impl Into<String>,
        credentials: Credentials,
    ) -> Self {
        Self {
            transport,
            endpoint: endpoint.into().trim_end_matches('/').to_owned(),
            credentials,
        }
    }

    /// The body of the token request: password method, project-scoped.
    fn token_request(&self) -> Value {
        json!({"auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {
                    "name": self.credentials.user,
                    "domain": {"name": ADMIN_DOMAIN},
                    "password": self.credentials.password,
                }},
            },
            "scope": {"project": {"name": ADMIN_PROJECT, "domain": {"name": ADMIN_DOMAIN}}},
        }})
    }

    /// A fresh project-scoped admin token.
    fn token(&self) -> Result<String> {
        let call = "POST /auth/tokens".to_owned();
        let url = format!("{}/auth/tokens", self.endpoint);
        let response = self.exchange(&call, Method::Post, url, None, Some(self.token_request()))?;
        response
            .header("x-subject-token")
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or(Error::NoToken { call })
    }

    /// Sends one request and keeps 2xx answers.
    fn exchange(
        &self,
        call: &str,
        method: Method,
        url: String,
        token: Option<String>,
        body: Option<Value>,
    ) -> Result<Response> {
        let mut request = Request::new(method, url).header("accept", "application/json");
        if let Some(token) = token {
            request = request.header("x-auth-token", token);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = self
            .transport
            .send(request)
            .map_err(|source| Error::Transport {
                call: call.to_owned(),
                source,
            })?;
        if !(200..300).contains(&response.status) {
            return Err(Error::Status {
                call: call.to_owned(),
                status: response.status,
            });
        }
        Ok(response)
    }

    /// Authenticates, then sends `method path` (relative to `/v3`) with `body`.
    fn send(&self, method: Method, path: &str, body: Option<Value>) -> Result<Response> {
        let token = self.token()?;
        let call = format!("{} {path}", method_name(method));
        let url = format!("{}{path}", self.endpoint);
        self.exchange(&call, method, url, Some(token), body)
    }

    /// Sends and decodes the answer.
    fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<T> {
        let response = self.send(method, path, body)?;
        response.json().map_err(|e| Error::Decode {
            call: format!("{} {path}", method_name(method)),
            line: e.line(),
            column: e.column(),
        })
    }

    /// GETs `path`; `None` on 404.
    fn get_optional<T: DeserializeOwned>(&self, path: &str) -> Result<Option<T>> {
        match self.call(Method::Get, path, None) {
            Err(e) if e.is_not_found() => Ok(None),
            other => other.map(Some),
        }
    }

    /// Sends a request whose answer is not read.
    fn send_only(&self, method: Method, path: &str, body: Option<Value>) -> Result<()> {
        self.send(method, path, body).map(|_| ())
    }
}
