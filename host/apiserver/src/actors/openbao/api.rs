//! The OpenBao HTTP API the stand-in serves under `/v1/`: routing, the token check
//! (`X-Vault-Token`, or `Authorization: Bearer`), the ACL check of each path, the response
//! envelope and `{"errors": [...]}` error bodies. Auth methods are in [`super::auth`], the
//! KV v2 engine in [`super::kv`].
//!
//! Writes take `PUT` or `POST` alike, as OpenBao does; `LIST` is also `GET ?list=true`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::state::{Token, Vault};
use super::{OpenBao, auth, kv};

/// An error answer: status and the `errors` list.
#[derive(Debug)]
pub(crate) struct BaoError {
    pub status: StatusCode,
    pub errors: Vec<String>,
}

impl BaoError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            errors: vec![message.into()],
        }
    }

    /// 403 as OpenBao words a failed ACL or token check.
    pub(crate) fn permission_denied() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "1 error occurred:\n\t* permission denied\n\n",
        )
    }

    /// 404 with an empty `errors` list (a path that holds nothing).
    pub(crate) fn not_found() -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            errors: Vec::new(),
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
}

impl IntoResponse for BaoError {
    fn into_response(self) -> Response {
        json_response(self.status, &json!({"errors": self.errors}))
    }
}

/// What a handler answers.
pub(crate) enum Answer {
    /// 200 with the envelope around `data`.
    Data(Value),
    /// 200 with the envelope around `auth`.
    Auth(Value),
    /// 204.
    Empty,
    /// 200 with a body of its own (`sys/health`, `sys/capabilities-self`).
    Raw(Value),
}

pub(crate) type Reply = Result<Answer, BaoError>;

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn envelope(data: Value, auth: Value) -> Value {
    json!({
        "request_id": crate::objects::new_uid(),
        "lease_id": "",
        "renewable": false,
        "lease_duration": 0,
        "data": data,
        "wrap_info": null,
        "warnings": null,
        "auth": auth,
    })
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        match self {
            Answer::Data(data) => json_response(StatusCode::OK, &envelope(data, Value::Null)),
            Answer::Auth(auth) => json_response(StatusCode::OK, &envelope(Value::Null, auth)),
            Answer::Empty => StatusCode::NO_CONTENT.into_response(),
            Answer::Raw(body) => json_response(StatusCode::OK, &body),
        }
    }
}

/// One request, parsed.
pub(crate) struct Request {
    pub method: Method,
    /// The path after `/v1/`, without a trailing slash.
    pub path: String,
    pub list: bool,
    pub token: Option<String>,
    pub body: Value,
    pub query: Vec<(String, String)>,
}

/// Serves every request.
pub(crate) async fn handle(
    State(bao): State<Arc<OpenBao>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    bao.requests.fetch_add(1, Ordering::Relaxed);
    if bao.sealed.load(Ordering::Relaxed) {
        return BaoError::new(StatusCode::SERVICE_UNAVAILABLE, "Vault is sealed").into_response();
    }
    let Some(path) = uri.path().strip_prefix("/v1/") else {
        return BaoError::not_found().into_response();
    };
    let query: Vec<(String, String)> = uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let list = method.as_str() == "LIST" || query.iter().any(|(k, v)| k == "list" && v == "true");
    let body = if body.is_empty() {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return BaoError::bad_request(format!("failed to parse JSON input: {e}"))
                    .into_response();
            }
        }
    };
    let token = headers
        .get("x-vault-token")
        .or_else(|| headers.get(header::AUTHORIZATION))
        .and_then(|v| v.to_str().ok())
        .map(|v| v.strip_prefix("Bearer ").unwrap_or(v).to_owned())
        .filter(|v| !v.is_empty());
    let request = Request {
        method,
        path: path.trim_end_matches('/').to_owned(),
        list,
        token,
        body,
        query,
    };
    let result = if request.path == "auth/kubernetes/login" && is_write(&request) {
        auth::kubernetes_login(&bao, &request).await
    } else {
        route(&request, &mut bao.lock())
    };
    match result {
        Ok(answer) => answer.into_response(),
        Err(error) => error.into_response(),
    }
}

/// `PUT` or `POST`.
pub(crate) fn is_write(request: &Request) -> bool {
    request.method == Method::PUT || request.method == Method::POST
}

/// The valid token the request carries (403 otherwise).
pub(crate) fn caller(request: &Request, vault: &Vault) -> Result<Token, BaoError> {
    let now = super::epoch_seconds();
    request
        .token
        .as_ref()
        .and_then(|t| vault.tokens.get(t))
        .filter(|t| t.expires_at.is_none_or(|e| e > now))
        .cloned()
        .ok_or_else(BaoError::permission_denied)
}

/// 403 unless `token`'s policies grant one of `capabilities` on `path`.
pub(crate) fn require(
    vault: &Vault,
    token: &Token,
    path: &str,
    capabilities: &[&str],
) -> Result<(), BaoError> {
    if capabilities
        .iter()
        .any(|c| vault.allows(&token.policies, path, c))
    {
        Ok(())
    } else {
        Err(BaoError::permission_denied())
    }
}

fn route(request: &Request, vault: &mut Vault) -> Reply {
    let path = request.path.as_str();
    let segments: Vec<&str> = path.split('/').collect();
    let write = is_write(request);
    match segments.as_slice() {
        ["sys", "health"] if request.method == Method::GET => Ok(Answer::Raw(json!({
            "initialized": true, "sealed": false, "standby": false,
            "performance_standby": false, "server_time_utc": super::epoch_seconds(),
            "version": "2.2.0", "cluster_name": "wasm-operator-stand-in",
        }))),
        ["auth", "approle", "login"] if write => auth::approle_login(request, vault),
        _ => {
            let token = caller(request, vault)?;
            match segments.as_slice() {
                ["sys", "capabilities-self"] if write => capabilities_self(request, vault, &token),
                ["auth", "token", "revoke-self"] if write => {
                    if let Some(t) = &request.token {
                        vault.tokens.remove(t);
                    }
                    Ok(Answer::Empty)
                }
                ["auth", "token", "lookup-self"] if request.method == Method::GET => {
                    Ok(Answer::Data(json!({
                        "accessor": token.accessor, "policies": token.policies,
                        "meta": token.metadata, "ttl": token.ttl,
                    })))
                }
                ["sys", "mounts", mount] if request.method == Method::GET => {
                    require(vault, &token, path, &["read"])?;
                    if vault.kv.contains_key(*mount) {
                        Ok(Answer::Data(json!({
                            "type": "kv", "options": {"version": "2"}, "description": "",
                            "local": false, "seal_wrap": false, "external_entropy_access": false,
                            "config": {"default_lease_ttl": 0, "max_lease_ttl": 0, "force_no_cache": false},
                        })))
                    } else {
                        Err(BaoError::not_found())
                    }
                }
                ["auth", "approle", "role", role, "role-id"] if request.method == Method::GET => {
                    require(vault, &token, path, &["read"])?;
                    auth::read_role_id(vault, role)
                }
                ["auth", "approle", "role", role, "secret-id"] if write => {
                    require(vault, &token, path, &["update", "create"])?;
                    auth::mint_secret_id(vault, role)
                }
                [mount, "data" | "metadata", ..] if vault.kv.contains_key(*mount) => {
                    kv::serve(request, vault, &token)
                }
                _ => Err(BaoError::new(
                    StatusCode::NOT_FOUND,
                    format!("no handler for route \"{path}\". route entry not found."),
                )),
            }
        }
    }
}

/// `POST /v1/sys/capabilities-self` with `paths` (or `path`): each path's capabilities
/// at the top level and under `data`, and `capabilities` for the single (or first) path.
fn capabilities_self(request: &Request, vault: &Vault, token: &Token) -> Reply {
    let paths: Vec<String> = match (&request.body["paths"], &request.body["path"]) {
        (Value::Array(list), _) => list
            .iter()
            .filter_map(|p| p.as_str().map(str::to_owned))
            .collect(),
        (Value::String(one), _) | (_, Value::String(one)) => vec![one.clone()],
        _ => return Err(BaoError::bad_request("missing paths")),
    };
    let mut data = serde_json::Map::new();
    for path in &paths {
        data.insert(
            path.clone(),
            json!(vault.capabilities(&token.policies, path.trim_start_matches('/'))),
        );
    }
    if let Some(first) = paths.first() {
        data.insert("capabilities".into(), data[first].clone());
    }
    let mut body = envelope(Value::Object(data.clone()), Value::Null);
    if let Some(top) = body.as_object_mut() {
        top.extend(data);
    }
    Ok(Answer::Raw(body))
}
