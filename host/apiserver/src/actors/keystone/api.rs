//! The Identity v3 HTTP API of one stand-in Keystone: routing, `X-Auth-Token` checks, and
//! `GET /v3`. Tokens are in [`super::tokens`], the collections in [`super::resources`],
//! role assignments in [`super::assignments`].

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::identity::{Identity, Kind};
use super::instance::Instance;
use super::reply::{KeystoneError, Reply, json_response};
use super::{assignments, resources, tokens};

/// One request, parsed.
pub(crate) struct Request {
    pub method: Method,
    /// The path's segments after `/v3`.
    pub segments: Vec<String>,
    pub query: Vec<(String, String)>,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// `http://{Host}`: what links start with.
    pub base: String,
    /// The path and query as sent (for a collection's `links.self`).
    pub path_and_query: String,
}

impl Request {
    /// The value of query parameter `name`.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (400 as Keystone answers a body that is not).
    pub(crate) fn json(&self) -> Result<Value, KeystoneError> {
        serde_json::from_slice(&self.body).map_err(|_| {
            KeystoneError::bad_request("Expecting to find valid JSON in request body.")
        })
    }
}

/// Serves every request of one stand-in.
pub(crate) async fn handle(
    State(instance): State<Arc<Instance>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    instance.requests.fetch_add(1, Ordering::Relaxed);
    if instance.unavailable.load(Ordering::Relaxed) {
        return KeystoneError {
            code: 503,
            message: "The Keystone stand-in is made unavailable by its fault toggle.".into(),
        }
        .into_response();
    }
    let path = uri.path().trim_end_matches('/');
    let Some(rest) = path.strip_prefix("/v3") else {
        return not_found().into_response();
    };
    if !rest.is_empty() && !rest.starts_with('/') {
        return not_found().into_response();
    }
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost")
        .to_owned();
    let request = Request {
        method,
        segments: rest
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        query: uri
            .query()
            .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
            .unwrap_or_default(),
        headers,
        body,
        base: format!("http://{host}"),
        path_and_query: uri
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_default(),
    };
    let mut identity = instance.lock();
    match route(&request, &mut identity) {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

/// Keystone's answer to a path it does not serve.
pub(crate) fn not_found() -> KeystoneError {
    KeystoneError {
        code: 404,
        message: "The resource could not be found.".into(),
    }
}

fn method_not_allowed() -> KeystoneError {
    KeystoneError {
        code: 405,
        message: "The method is not allowed for the requested URL.".into(),
    }
}

fn route(request: &Request, identity: &mut Identity) -> Reply {
    let segments: Vec<&str> = request.segments.iter().map(String::as_str).collect();
    let method = &request.method;
    match segments.as_slice() {
        [] if method == Method::GET => Ok(version(&request.base)),
        [] => Err(method_not_allowed()),
        ["auth", "tokens"] => match *method {
            Method::POST => tokens::issue(request, identity),
            Method::GET => {
                tokens::authenticate(request, identity)?;
                tokens::validate(request, identity)
            }
            _ => Err(method_not_allowed()),
        },
        _ => {
            tokens::authenticate(request, identity)?;
            authorized(request, identity, &segments)
        }
    }
}

fn authorized(request: &Request, identity: &mut Identity, segments: &[&str]) -> Reply {
    let method = &request.method;
    match segments {
        ["role_assignments"] if method == Method::GET => assignments::list(request, identity),
        [
            scope @ ("projects" | "domains"),
            target,
            who @ ("groups" | "users"),
            actor,
            "roles",
            role,
        ] => assignments::one(request, identity, scope, target, who, actor, role),
        ["OS-FEDERATION", "identity_providers", idp, "protocols"] if method == Method::GET => {
            resources::list_protocols(request, identity, idp)
        }
        ["OS-FEDERATION", "identity_providers", idp, "protocols", id] => {
            resources::protocol(request, identity, idp, id)
        }
        ["OS-FEDERATION", plural] => match kind(plural, true) {
            Some(kind) if method == Method::GET => resources::list(request, identity, kind),
            Some(_) => Err(method_not_allowed()),
            None => Err(not_found()),
        },
        ["OS-FEDERATION", plural, id] => match kind(plural, true) {
            Some(kind) => resources::one(request, identity, kind, id),
            None => Err(not_found()),
        },
        [plural] => match kind(plural, false) {
            Some(kind) if method == Method::GET => resources::list(request, identity, kind),
            Some(kind) if method == Method::POST => resources::create(request, identity, kind),
            Some(_) => Err(method_not_allowed()),
            None => Err(not_found()),
        },
        [plural, id] => match kind(plural, false) {
            Some(kind) => resources::one(request, identity, kind, id),
            None => Err(not_found()),
        },
        _ => Err(not_found()),
    }
}

/// The collection a path segment names (federation ones under `OS-FEDERATION`).
fn kind(plural: &str, federation: bool) -> Option<Kind> {
    let kind = match plural {
        "domains" => Kind::Domain,
        "projects" => Kind::Project,
        "groups" => Kind::Group,
        "roles" => Kind::Role,
        "identity_providers" => Kind::IdentityProvider,
        "mappings" => Kind::Mapping,
        _ => return None,
    };
    let is_federation = matches!(kind, Kind::IdentityProvider | Kind::Mapping);
    (is_federation == federation).then_some(kind)
}

/// `GET /v3`: the version document Keystone 22 answers.
fn version(base: &str) -> Response {
    json_response(
        StatusCode::OK,
        &json!({"version": {
            "id": "v3.14",
            "status": "stable",
            "updated": "2020-04-07T00:00:00Z",
            "links": [{"rel": "self", "href": format!("{base}/v3/")}],
            "media-types": [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}],
        }}),
    )
}
