//! A minimal OpenBao (Vault API) client: the calls the store's controller makes (facts
//! §3.6), against `<server>/v1`.
//!
//! | Method | Call | Answer read |
//! |---|---|---|
//! | [`Client::login_approle`] | `POST /v1/auth/approle/login` `{role_id, secret_id}` | `auth.client_token` |
//! | [`Client::login_kubernetes`] | `POST /v1/auth/kubernetes/login` `{role, jwt}` | `auth.client_token` |
//! | [`Client::capabilities_self`] | `POST /v1/sys/capabilities-self` `{paths: [p]}` | `capabilities` (or `data.capabilities`) |
//! | [`Client::mount_exists`] | `GET /v1/sys/mounts/{mount}` | 2xx: true; 404: false |
//! | [`Client::read_role_id`] | `GET /v1/auth/approle/role/{role}/role-id` | `data.role_id` |
//! | [`Client::generate_secret_id`] | `POST /v1/auth/approle/role/{role}/secret-id` | `data.secret_id`, `data.secret_id_ttl` (absent: 0) |
//! | [`Client::revoke_self`] | `POST /v1/auth/token/revoke-self` | — (only with a session) |
//!
//! A login keeps the session token on the client, sent as `X-Vault-Token` on every later
//! call; a configured namespace is sent as `X-Vault-Namespace` on every call.
//!
//! Requests go through a [`Transport`]: [`Egress`] (the plugin's HTTP egress) in a pass, a
//! fake OpenBao in tests. A failed call is an [`Error`] naming what was done (CobaltCore's
//! words) and the call, with the HTTP status or the transport failure: never a response
//! body, a token, a role or secret ID, so its text is safe in conditions, events and logs.

#[cfg(test)]
pub(crate) mod fake;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator_sdk::http::{HttpError, Method, Request, Response};
use wasm_operator_sdk::{ApiError, ObjectRef};

/// Each phase's timeout of a request (CobaltCore's openBaoRequestTimeout; the host caps it
/// at the plugin's own).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);

/// How a request reaches OpenBao: [`Egress`] in a pass, a fake OpenBao in tests.
pub(crate) trait Transport {
    /// Sends `request`; any status is a response.
    fn send(&self, request: Request) -> Result<Response, HttpError>;
    /// Trusts, for the rest of the pass, the PEM certificates in data key `key` of Secret
    /// `secret` for HTTPS.
    fn trust_ca(&self, secret: &ObjectRef, key: &str) -> Result<(), ApiError>;
}

/// [`Transport`] through `wasm_operator_sdk::http` (the plugin's declared egress).
pub(crate) struct Egress;

impl Transport for Egress {
    fn send(&self, request: Request) -> Result<Response, HttpError> {
        // DECISION: no redirect is followed. OpenBao's standbys forward requests to the
        // active node themselves; a redirect would re-send the session token to another
        // destination, so it is answered as the error it is.
        request.timeout(TIMEOUT).max_redirects(0).send()
    }

    fn trust_ca(&self, secret: &ObjectRef, key: &str) -> Result<(), ApiError> {
        wasm_operator_sdk::http::trust_ca(secret, key)
    }
}

/// A failed OpenBao call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Error {
    /// The request did not get a response (the transport error names the URL).
    #[error("{what}: {source}")]
    Transport {
        what: String,
        #[source]
        source: HttpError,
    },
    /// OpenBao answered with a status other than 2xx.
    #[error("{what}: {call}: HTTP {status}")]
    Status {
        what: String,
        call: String,
        status: u16,
    },
    /// The answer lacks what the call reads (where, never what it holds).
    #[error("{what}: {call}: the response carried no {field}")]
    Missing {
        what: String,
        call: String,
        field: &'static str,
    },
}

impl Error {
    /// The HTTP status OpenBao answered with, if it answered.
    fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether OpenBao answered 403 (a policy gap).
    pub(crate) fn is_permission_denied(&self) -> bool {
        self.status() == Some(403)
    }

    /// Whether OpenBao rejected the presented credentials: 400 (an AppRole login with a
    /// role or secret ID it does not accept) or 403.
    pub(crate) fn is_invalid_credentials(&self) -> bool {
        matches!(self.status(), Some(400 | 403))
    }

    /// Whether OpenBao answered 404.
    pub(crate) fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }
}

/// The result of an OpenBao call.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

/// The client of one server: its base URL, the namespace, the session and the transport.
pub(crate) struct Client<'t> {
    transport: &'t dyn Transport,
    /// `https://host:port`, without a trailing `/`.
    base: String,
    namespace: String,
    token: RefCell<Option<String>>,
}

/// `value` percent-encoded for a path segment: every byte but RFC 3986's unreserved ones.
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

/// The string at `pointer` of `body`, when it is a non-empty string.
fn string_at(body: &Value, pointer: &str) -> Option<String> {
    body.pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

impl<'t> Client<'t> {
    /// A client of the server at `url` (`https://host:port`), scoped to `namespace` (empty:
    /// the root namespace).
    pub(crate) fn new(transport: &'t dyn Transport, url: &str, namespace: &str) -> Self {
        Self {
            transport,
            base: url.trim_end_matches('/').to_owned(),
            namespace: namespace.to_owned(),
            token: RefCell::new(None),
        }
    }

    /// Sends `method /v1/{path}` with `body`; 2xx answers are kept. `what` names the
    /// operation in the error.
    fn exchange(
        &self,
        what: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value> {
        let verb = if method == Method::Get { "GET" } else { "POST" };
        let call = format!("{verb} /v1/{path}");
        let mut request = Request::new(method, format!("{}/v1/{path}", self.base))
            .header("accept", "application/json");
        if let Some(token) = self.token.borrow().as_deref() {
            request = request.header("x-vault-token", token);
        }
        if !self.namespace.is_empty() {
            request = request.header("x-vault-namespace", self.namespace.as_str());
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
                what: what.to_owned(),
                source,
            })?;
        if !(200..300).contains(&response.status) {
            return Err(Error::Status {
                what: what.to_owned(),
                call,
                status: response.status,
            });
        }
        // A 204 or a body that is not JSON reads as empty: each caller names the field it
        // misses.
        Ok(response.json().unwrap_or(Value::Null))
    }

    fn missing(what: &str, path: &str, field: &'static str) -> Error {
        Error::Missing {
            what: what.to_owned(),
            call: format!("POST /v1/{path}"),
            field,
        }
    }

    /// Logs in at `path` with `body`, keeping the session token.
    fn login(&self, what: &str, path: &str, body: Value) -> Result<()> {
        let answer = self.exchange(what, Method::Post, path, Some(body))?;
        let token = string_at(&answer, "/auth/client_token")
            .ok_or_else(|| Self::missing(what, path, "client token"))?;
        *self.token.borrow_mut() = Some(token);
        Ok(())
    }

    /// AppRole login.
    pub(crate) fn login_approle(&self, role_id: &str, secret_id: &str) -> Result<()> {
        self.login(
            "logging in to OpenBao with the approle auth method",
            "auth/approle/login",
            json!({"role_id": role_id, "secret_id": secret_id}),
        )
    }

    /// Kubernetes login under `role` with the ServiceAccount token `jwt`.
    pub(crate) fn login_kubernetes(&self, jwt: &str, role: &str) -> Result<()> {
        self.login(
            "logging in to OpenBao with the kubernetes auth method",
            "auth/kubernetes/login",
            json!({"role": role, "jwt": jwt}),
        )
    }

    /// The capabilities the session holds on `path`.
    pub(crate) fn capabilities_self(&self, path: &str) -> Result<Vec<String>> {
        let what = format!("reading the token capabilities on {path:?}");
        let call = "sys/capabilities-self";
        let answer = self.exchange(&what, Method::Post, call, Some(json!({"paths": [path]})))?;
        let list = ["/capabilities", "/data/capabilities"]
            .iter()
            .find_map(|p| answer.pointer(p).and_then(Value::as_array))
            .ok_or_else(|| Self::missing(&what, call, "capabilities"))?;
        Ok(list
            .iter()
            .filter_map(|c| c.as_str().map(str::to_owned))
            .collect())
    }

    /// Whether the secrets engine `mount` is mounted (404: not).
    pub(crate) fn mount_exists(&self, mount: &str) -> Result<bool> {
        let what = format!("reading the OpenBao mount {mount:?}");
        let path = format!("sys/mounts/{}", encode(mount));
        match self.exchange(&what, Method::Get, &path, None) {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The role ID of AppRole `role`.
    pub(crate) fn read_role_id(&self, role: &str) -> Result<String> {
        let what = format!("reading the role ID of AppRole {role:?}");
        let path = format!("auth/approle/role/{}/role-id", encode(role));
        let answer = self.exchange(&what, Method::Get, &path, None)?;
        string_at(&answer, "/data/role_id").ok_or_else(|| Error::Missing {
            what,
            call: format!("GET /v1/{path}"),
            field: "role_id",
        })
    }

    /// A fresh secret ID of AppRole `role` and its TTL in seconds (0: does not expire).
    pub(crate) fn generate_secret_id(&self, role: &str) -> Result<(String, u64)> {
        let what = format!("generating a secret ID for AppRole {role:?}");
        let path = format!("auth/approle/role/{}/secret-id", encode(role));
        let answer = self.exchange(&what, Method::Post, &path, Some(json!({})))?;
        let secret_id = string_at(&answer, "/data/secret_id")
            .ok_or_else(|| Self::missing(&what, &path, "secret_id"))?;
        let ttl = answer
            .pointer("/data/secret_id_ttl")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        Ok((secret_id, ttl))
    }

    /// Hands the session back (nothing without one). Best effort: the token expires on
    /// its own, so a failure is only returned for the caller to log.
    pub(crate) fn revoke_self(&self) -> Result<()> {
        if self.token.borrow().is_none() {
            return Ok(());
        }
        let what = "revoking the OpenBao session token";
        let result = self.exchange(what, Method::Post, "auth/token/revoke-self", None);
        *self.token.borrow_mut() = None;
        result.map(|_| ())
    }
}
