//! [`FakeOpenBao`]: an in-memory OpenBao behind [`Transport`], for tests.
//!
//! It answers the calls of [`super::Client`] as OpenBao does (and as the host's stand-in,
//! `host/apiserver/src/actors/openbao/`, does): an AppRole login with a role and secret
//! ID it does not know is `400`, a Kubernetes login under an unknown role `400` and with a
//! token the role does not accept `403`, every other call needs a session token (`403`
//! without), an absent mount or AppRole is `404`, `sys/capabilities-self` answers the
//! capabilities the session's AppRole was granted on the path (`deny` otherwise; the
//! provisioner's session is granted nothing there). Every request is recorded
//! ([`FakeOpenBao::requests`]); failures are injected per method and path prefix
//! ([`FakeOpenBao::fail`]), or all requests fail to connect ([`FakeOpenBao::unreachable`]).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use wasm_operator_sdk::http::{HttpError, Method, Request, Response};
use wasm_operator_sdk::{ApiError, ObjectRef};

use super::Transport;

/// One request the fake received.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sent {
    pub(crate) method: Method,
    /// The full URL.
    pub(crate) url: String,
    /// `/v1/...`.
    pub(crate) path: String,
    pub(crate) body: Option<Value>,
    pub(crate) token: Option<String>,
    pub(crate) namespace: Option<String>,
}

impl Sent {
    /// `METHOD /v1/path`.
    pub(crate) fn line(&self) -> String {
        let verb = if self.method == Method::Get {
            "GET"
        } else {
            "POST"
        };
        format!("{verb} {}", self.path)
    }
}

#[derive(Debug, Clone, Default)]
struct Role {
    role_id: String,
    secret_ids: BTreeSet<String>,
    ttl: u64,
    /// What its sessions may do, by path.
    capabilities: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone)]
enum Session {
    Provisioner,
    AppRole(String),
}

#[derive(Default)]
struct State {
    requests: Vec<Sent>,
    failures: Vec<(Method, String, u16)>,
    unreachable: bool,
    trusted: Vec<String>,
    mounts: BTreeSet<String>,
    roles: BTreeMap<String, Role>,
    /// Kubernetes auth roles and the token each accepts.
    kubernetes: BTreeMap<String, String>,
    sessions: BTreeMap<String, Session>,
    issued: u32,
    minted: u32,
}

/// An in-memory OpenBao.
#[derive(Default)]
pub(crate) struct FakeOpenBao {
    state: RefCell<State>,
}

fn reply(status: u16, body: Option<Value>) -> Response {
    Response {
        status,
        headers: vec![],
        body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
        url: String::new(),
    }
}

impl FakeOpenBao {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Mounts a KV engine at `mount`.
    pub(crate) fn with_mount(self, mount: &str) -> Self {
        self.state.borrow_mut().mounts.insert(mount.into());
        self
    }

    /// An AppRole `name` with `role_id`, minting secret IDs of `ttl` seconds.
    pub(crate) fn with_approle(self, name: &str, role_id: &str, ttl: u64) -> Self {
        let role = Role {
            role_id: role_id.into(),
            ttl,
            ..Role::default()
        };
        self.state.borrow_mut().roles.insert(name.into(), role);
        self
    }

    /// Accepts `secret_id` for AppRole `role`.
    pub(crate) fn with_secret_id(self, role: &str, secret_id: &str) -> Self {
        if let Some(r) = self.state.borrow_mut().roles.get_mut(role) {
            r.secret_ids.insert(secret_id.into());
        }
        self
    }

    /// Grants AppRole `role`'s sessions `capabilities` on `path`.
    pub(crate) fn granting(self, role: &str, path: &str, capabilities: &[&str]) -> Self {
        if let Some(r) = self.state.borrow_mut().roles.get_mut(role) {
            let caps = capabilities.iter().map(|c| (*c).to_owned()).collect();
            r.capabilities.insert(path.into(), caps);
        }
        self
    }

    /// A Kubernetes auth role `role` accepting the ServiceAccount token `jwt`.
    pub(crate) fn with_kubernetes_role(self, role: &str, jwt: &str) -> Self {
        let mut state = self.state.borrow_mut();
        state.kubernetes.insert(role.into(), jwt.into());
        drop(state);
        self
    }

    /// Stops accepting `secret_id` of `role` (expired or revoked behind the operator).
    pub(crate) fn revoke_secret_id(&self, role: &str, secret_id: &str) {
        if let Some(r) = self.state.borrow_mut().roles.get_mut(role) {
            r.secret_ids.remove(secret_id);
        }
    }

    /// Answers every `method` request whose `/v1/...` path starts with `prefix` with
    /// `status`, before anything else is checked.
    pub(crate) fn fail(&self, method: Method, prefix: &str, status: u16) {
        let failure = (method, prefix.to_owned(), status);
        self.state.borrow_mut().failures.push(failure);
    }

    /// Every request fails to connect.
    pub(crate) fn unreachable(self) -> Self {
        self.state.borrow_mut().unreachable = true;
        self
    }

    /// The requests received, as `METHOD /v1/path` lines.
    pub(crate) fn requests(&self) -> Vec<String> {
        self.state
            .borrow()
            .requests
            .iter()
            .map(Sent::line)
            .collect()
    }

    /// The requests received, in full.
    pub(crate) fn sent(&self) -> Vec<Sent> {
        self.state.borrow().requests.clone()
    }

    /// The CA bundles trusted, as `namespace/name key`.
    pub(crate) fn trusted(&self) -> Vec<String> {
        self.state.borrow().trusted.clone()
    }

    /// How many sessions are live (not revoked).
    pub(crate) fn live_sessions(&self) -> usize {
        self.state.borrow().sessions.len()
    }

    /// How many secret IDs were minted.
    pub(crate) fn minted(&self) -> u32 {
        self.state.borrow().minted
    }

    fn approle_login(state: &mut State, body: &Value) -> Response {
        let role_id = body["role_id"].as_str().unwrap_or_default();
        let secret_id = body["secret_id"].as_str().unwrap_or_default();
        let found = state
            .roles
            .iter()
            .find(|(_, r)| r.role_id == role_id && r.secret_ids.contains(secret_id))
            .map(|(name, _)| name.clone());
        let Some(name) = found else {
            let errors = json!({"errors": ["invalid role or secret ID"]});
            return reply(400, Some(errors));
        };
        Self::session(state, Session::AppRole(name))
    }

    fn kubernetes_login(state: &mut State, body: &Value) -> Response {
        let role = body["role"].as_str().unwrap_or_default();
        match state.kubernetes.get(role) {
            None => reply(400, Some(json!({"errors": ["invalid role name"]}))),
            Some(jwt) if body["jwt"].as_str() != Some(jwt.as_str()) => {
                reply(403, Some(json!({"errors": ["permission denied"]})))
            }
            Some(_) => Self::session(state, Session::Provisioner),
        }
    }

    fn session(state: &mut State, session: Session) -> Response {
        state.issued += 1;
        let token = format!("s.session-{:04}", state.issued);
        state.sessions.insert(token.clone(), session);
        reply(200, Some(json!({"auth": {"client_token": token}})))
    }

    fn route(
        state: &mut State,
        session: &Session,
        method: Method,
        path: &str,
        body: &Value,
    ) -> Response {
        let segments: Vec<&str> = path.split('/').collect();
        let provisioner = matches!(session, Session::Provisioner);
        match (method, segments.as_slice()) {
            (Method::Post, ["sys", "capabilities-self"]) => {
                let asked = body["paths"][0].as_str().unwrap_or_default().to_owned();
                let caps: Vec<String> = match session {
                    Session::AppRole(role) => state.roles[role]
                        .capabilities
                        .get(&asked)
                        .cloned()
                        .unwrap_or_else(|| vec!["deny".into()]),
                    Session::Provisioner => vec!["deny".into()],
                };
                reply(
                    200,
                    Some(json!({"capabilities": caps, asked.clone(): caps,
                                       "data": {"capabilities": caps, asked: caps}})),
                )
            }
            (Method::Post, ["auth", "token", "revoke-self"]) => reply(204, None),
            _ if !provisioner => reply(403, Some(json!({"errors": ["permission denied"]}))),
            (Method::Get, ["sys", "mounts", mount]) if state.mounts.contains(*mount) => reply(
                200,
                Some(json!({"data": {"type": "kv", "options": {"version": "2"}}})),
            ),
            (Method::Get, ["auth", "approle", "role", role, "role-id"]) => {
                match state.roles.get(*role) {
                    Some(r) => reply(200, Some(json!({"data": {"role_id": r.role_id}}))),
                    None => reply(404, Some(json!({"errors": []}))),
                }
            }
            (Method::Post, ["auth", "approle", "role", role, "secret-id"]) => {
                state.minted += 1;
                let secret_id = format!("secret-{:04}", state.minted);
                match state.roles.get_mut(*role) {
                    Some(r) => {
                        r.secret_ids.insert(secret_id.clone());
                        let data = json!({"data": {"secret_id": secret_id,
                                                   "secret_id_accessor": "accessor",
                                                   "secret_id_ttl": r.ttl}});
                        reply(200, Some(data))
                    }
                    None => reply(404, Some(json!({"errors": []}))),
                }
            }
            _ => reply(404, Some(json!({"errors": []}))),
        }
    }
}

impl Transport for FakeOpenBao {
    fn send(&self, request: Request) -> Result<Response, HttpError> {
        let path = request
            .url
            .split_once("/v1/")
            .map(|(_, p)| format!("/v1/{p}"))
            .unwrap_or_else(|| panic!("a request outside /v1: {}", request.url));
        let header = |name: &str| {
            request
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let body: Option<Value> = (!request.body.is_empty()).then(|| {
            assert_eq!(header("content-type").as_deref(), Some("application/json"));
            serde_json::from_slice(&request.body).expect("a JSON body")
        });
        let token = header("x-vault-token");
        let mut state = self.state.borrow_mut();
        state.requests.push(Sent {
            method: request.method,
            url: request.url.clone(),
            path: path.clone(),
            body: body.clone(),
            token: token.clone(),
            namespace: header("x-vault-namespace"),
        });
        if state.unreachable {
            return Err(HttpError::Connection {
                url: request.url,
                message: "connection refused".into(),
            });
        }
        let failure = state
            .failures
            .iter()
            .find(|(m, prefix, _)| *m == request.method && path.starts_with(prefix.as_str()))
            .map(|(_, _, status)| *status);
        if let Some(status) = failure {
            return Ok(reply(status, Some(json!({"errors": ["injected"]}))));
        }
        let body = body.unwrap_or(Value::Null);
        let inner = path.trim_start_matches("/v1/");
        match (request.method, inner) {
            (Method::Post, "auth/approle/login") => {
                return Ok(Self::approle_login(&mut state, &body));
            }
            (Method::Post, "auth/kubernetes/login") => {
                return Ok(Self::kubernetes_login(&mut state, &body));
            }
            _ => {}
        }
        let Some(session) = token.as_ref().and_then(|t| state.sessions.get(t)).cloned() else {
            return Ok(reply(403, Some(json!({"errors": ["permission denied"]}))));
        };
        let response = Self::route(&mut state, &session, request.method, inner, &body);
        if inner == "auth/token/revoke-self"
            && let Some(token) = token
        {
            state.sessions.remove(&token);
        }
        Ok(response)
    }

    fn trust_ca(&self, secret: &ObjectRef, key: &str) -> Result<(), ApiError> {
        let entry = format!("{} {key}", secret.key());
        self.state.borrow_mut().trusted.push(entry);
        Ok(())
    }
}
