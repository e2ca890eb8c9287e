//! [`FakeKeystone`]: an in-memory Keystone v3 behind [`Transport`], for tests.
//!
//! It keeps the objects the client manages and answers as Keystone does: the token
//! endpoint checks the password-method body and issues `X-Subject-Token`; every other
//! call needs an issued `X-Auth-Token`; request bodies are checked against Keystone's
//! schemas (a property Keystone refuses is `400`), creates answer `201`, deletes and
//! grants `204`, a missing object `404`, an existing one on create `409`, and deleting an
//! enabled domain `403`. Every request is recorded ([`FakeKeystone::requests`]), and
//! failures are injected per method and path prefix ([`FakeKeystone::fail`]).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};
use wasm_operator_sdk::http::{HttpError, Method, Request, Response};

use super::{Transport, method_name};

mod routes;

/// The `/v3` the fake answers on: Keystone `keystone` in namespace `openstack`.
pub(crate) const ENDPOINT: &str = "http://keystone.openstack.svc.cluster.local:5000/v3";
/// The admin user and password it accepts.
pub(crate) const USER: &str = "admin";
pub(crate) const PASSWORD: &str = "s3cret";

/// One request the fake received.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sent {
    pub(crate) method: Method,
    /// Relative to `/v3`, with the query.
    pub(crate) path: String,
    pub(crate) body: Option<Value>,
    pub(crate) token: Option<String>,
}

impl Sent {
    /// `METHOD /path?query`.
    pub(crate) fn line(&self) -> String {
        format!("{} {}", method_name(self.method), self.path)
    }
}

#[derive(Default)]
struct State {
    requests: Vec<Sent>,
    failures: Vec<(Method, String, u16)>,
    tokens: BTreeSet<String>,
    /// The last id handed out, per prefix.
    ids: BTreeMap<String, u32>,
    /// By id: `{"id", "name", "description", "enabled"}`.
    domains: BTreeMap<String, Value>,
    idps: BTreeMap<String, Value>,
    mappings: BTreeMap<String, Value>,
    protocols: BTreeMap<(String, String), String>,
    /// By id: `{"id", "name", "domain_id", "description"?}`.
    groups: BTreeMap<String, Value>,
    roles: BTreeMap<String, String>,
    /// By id: (name, domain id).
    projects: BTreeMap<String, (String, String)>,
    grants: BTreeSet<String>,
}

/// An in-memory Keystone.
#[derive(Default)]
pub(crate) struct FakeKeystone {
    state: RefCell<State>,
}

impl State {
    /// `<prefix>-0001`, `<prefix>-0002`, …
    fn new_id(&mut self, prefix: &str) -> String {
        let n = self.ids.entry(prefix.to_owned()).or_default();
        *n += 1;
        format!("{prefix}-{n:04}")
    }
}

type Answer = (u16, Option<Value>);

fn answer(status: u16, body: Value) -> Answer {
    (status, Some(body))
}

/// Whether `object` holds only keys of `allowed`.
fn only(object: &Value, allowed: &[&str]) -> bool {
    object
        .as_object()
        .is_some_and(|o| o.keys().all(|k| allowed.contains(&k.as_str())))
}

/// The member `key` of `body` when it is an object and `body` holds nothing else.
fn wrapped<'b>(body: Option<&'b Value>, key: &str) -> Option<&'b Map<String, Value>> {
    let body = body?;
    if !only(body, &[key]) {
        return None;
    }
    body.get(key)?.as_object()
}

fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl FakeKeystone {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Seeds a domain.
    pub(crate) fn with_domain(
        self,
        id: &str,
        name: &str,
        description: &str,
        enabled: bool,
    ) -> Self {
        let domain =
            json!({"id": id, "name": name, "description": description, "enabled": enabled});
        self.state.borrow_mut().domains.insert(id.into(), domain);
        self
    }

    /// Seeds a global role.
    pub(crate) fn with_role(self, id: &str, name: &str) -> Self {
        self.state.borrow_mut().roles.insert(id.into(), name.into());
        self
    }

    /// Seeds a project.
    pub(crate) fn with_project(self, id: &str, name: &str, domain_id: &str) -> Self {
        let project = (name.to_owned(), domain_id.to_owned());
        self.state.borrow_mut().projects.insert(id.into(), project);
        self
    }

    /// Seeds an identity provider as Keystone shows it.
    pub(crate) fn with_idp(self, id: &str, idp: Value) -> Self {
        self.state.borrow_mut().idps.insert(id.into(), idp);
        self
    }

    /// Replaces the stored identity provider `id` (a change made behind the client).
    pub(crate) fn replace_idp(&self, id: &str, idp: Value) {
        self.state.borrow_mut().idps.insert(id.into(), idp);
    }

    /// Answers every `method` request whose path (with query) starts with `prefix` (is
    /// exactly it, for a `prefix` ending in `$`) with `status`, before anything else is
    /// checked.
    pub(crate) fn fail(&self, method: Method, prefix: &str, status: u16) {
        let failure = (method, prefix.to_owned(), status);
        self.state.borrow_mut().failures.push(failure);
    }

    /// The requests received, as `METHOD /path?query` lines.
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

    /// The requests other than the token requests.
    pub(crate) fn calls(&self) -> Vec<String> {
        let token = "POST /auth/tokens";
        self.requests().into_iter().filter(|r| r != token).collect()
    }

    /// Forgets the requests received.
    pub(crate) fn clear(&self) {
        self.state.borrow_mut().requests.clear();
    }

    /// The domain named `name`, as stored.
    pub(crate) fn domain(&self, name: &str) -> Option<Value> {
        let state = self.state.borrow();
        state.domains.values().find(|d| d["name"] == name).cloned()
    }

    /// The identity provider `id`, as stored.
    pub(crate) fn idp(&self, id: &str) -> Option<Value> {
        self.state.borrow().idps.get(id).cloned()
    }

    /// The rules of the mapping `id`.
    pub(crate) fn mapping(&self, id: &str) -> Option<Value> {
        self.state.borrow().mappings.get(id).cloned()
    }

    /// The mapping id the protocol `protocol` of `idp` is bound to.
    pub(crate) fn protocol(&self, idp: &str, protocol: &str) -> Option<String> {
        let key = (idp.to_owned(), protocol.to_owned());
        self.state.borrow().protocols.get(&key).cloned()
    }

    /// The group `name` of the domain `domain_id`, as stored.
    pub(crate) fn group(&self, name: &str, domain_id: &str) -> Option<Value> {
        let state = self.state.borrow();
        let found = state
            .groups
            .values()
            .find(|g| g["name"] == name && g["domain_id"] == domain_id);
        found.cloned()
    }

    /// The grants, as `/{domains,projects}/{id}/groups/{group}/roles/{role}` paths.
    pub(crate) fn grants(&self) -> Vec<String> {
        self.state.borrow().grants.iter().cloned().collect()
    }

    fn token(state: &mut State, body: Option<&Value>) -> Result<Response, HttpError> {
        let expected = json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": USER, "domain": {"name": "Default"}, "password": PASSWORD}}},
            "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}},
        }});
        if body != Some(&expected) {
            return Ok(response(401, None, vec![]));
        }
        let token = state.new_id("token");
        state.tokens.insert(token.clone());
        let headers = vec![("x-subject-token".to_owned(), token)];
        Ok(response(201, Some(json!({"token": {}})), headers))
    }

    fn route(state: &mut State, method: Method, path: &str, body: Option<&Value>) -> Answer {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let query: BTreeMap<String, String> = query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (decode(k), decode(v)))
            .collect();
        let segments: Vec<String> = path.split('/').skip(1).map(decode).collect();
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        match segments.as_slice() {
            ["domains"] => routes::domains(state, method, &query, body),
            ["domains", id] => routes::domain(state, method, id, body),
            ["OS-FEDERATION", "identity_providers", idp] => routes::idp(state, method, idp, body),
            [
                "OS-FEDERATION",
                "identity_providers",
                idp,
                "protocols",
                protocol,
            ] => routes::protocol(state, method, idp, protocol, body),
            ["OS-FEDERATION", "mappings", id] => routes::mapping(state, method, id, body),
            ["groups"] => routes::groups(state, method, &query, body),
            ["roles"] => routes::roles(state, method, &query),
            ["projects"] => routes::projects(state, method, &query),
            [
                scope @ ("domains" | "projects"),
                id,
                "groups",
                group,
                "roles",
                role,
            ] => routes::grant(state, method, (scope, id, group, role), path),
            _ => (404, None),
        }
    }
}

/// Whether `path` is what a failure's `prefix` names.
fn matches(path: &str, prefix: &str) -> bool {
    match prefix.strip_suffix('$') {
        Some(exact) => path == exact,
        None => path.starts_with(prefix),
    }
}

fn response(status: u16, body: Option<Value>, headers: Vec<(String, String)>) -> Response {
    Response {
        status,
        headers,
        body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
        url: String::new(),
    }
}

impl Transport for FakeKeystone {
    fn send(&self, request: Request) -> Result<Response, HttpError> {
        let path = request
            .url
            .strip_prefix(ENDPOINT)
            .unwrap_or_else(|| panic!("a request outside {ENDPOINT}: {}", request.url))
            .to_owned();
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
        let token = header("x-auth-token");
        let mut state = self.state.borrow_mut();
        state.requests.push(Sent {
            method: request.method,
            path: path.clone(),
            body: body.clone(),
            token: token.clone(),
        });
        let failure = state
            .failures
            .iter()
            .find(|(m, prefix, _)| *m == request.method && matches(&path, prefix))
            .map(|(_, _, status)| *status);
        if let Some(status) = failure {
            let body = json!({"error": {"message": "injected"}});
            return Ok(response(status, Some(body), vec![]));
        }
        if request.method == Method::Post && path == "/auth/tokens" {
            return Self::token(&mut state, body.as_ref());
        }
        if !token.is_some_and(|t| state.tokens.contains(&t)) {
            return Ok(response(401, None, vec![]));
        }
        let (status, body) = Self::route(&mut state, request.method, &path, body.as_ref());
        Ok(response(status, body, vec![]))
    }
}
