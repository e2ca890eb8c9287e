//! `POST /v3/auth/tokens` (password method, project scope or none), `GET /v3/auth/tokens`
//! (`X-Subject-Token` validation) and the `X-Auth-Token` check every other call passes.
//!
//! A token is an opaque random string valid for an hour (Keystone's default `[token]
//! expiration`), answered in `X-Subject-Token`. A wrong user, password or scope is 401 with
//! Keystone's message, whichever it was (Keystone does not say which).

use axum::http::{HeaderValue, StatusCode};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use super::api::Request;
use super::identity::{DEFAULT_DOMAIN, Identity, Kind, Token, User};
use super::reply::{KeystoneError, Reply, json_response};

/// How long a token is valid (seconds).
const LIFETIME: i64 = 3600;

pub(crate) fn epoch_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Keystone's timestamp format (`2026-01-01T00:00:00.000000Z`).
fn timestamp(seconds: i64) -> String {
    k8s_openapi::jiff::Timestamp::from_second(seconds)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S.000000Z").to_string())
        .unwrap_or_default()
}

/// The token named by header `name`, when it is one this Keystone issued and it is valid.
fn token<'a>(request: &Request, identity: &'a Identity, name: &str) -> Option<&'a Token> {
    let value = request.headers.get(name)?.to_str().ok()?;
    identity
        .tokens
        .get(value)
        .filter(|t| t.expires_at > epoch_seconds())
}

/// 401 unless `X-Auth-Token` is a valid token.
pub(crate) fn authenticate(request: &Request, identity: &Identity) -> Result<(), KeystoneError> {
    token(request, identity, "x-auth-token")
        .map(|_| ())
        .ok_or_else(KeystoneError::unauthorized)
}

/// `GET /v3/auth/tokens`: the token `X-Subject-Token` names, or 404 as Keystone answers.
pub(crate) fn validate(request: &Request, identity: &Identity) -> Reply {
    let subject = token(request, identity, "x-subject-token").ok_or_else(|| {
        KeystoneError::not_found("token", "The request you have made requires authentication")
    })?;
    Ok(json_response(
        StatusCode::OK,
        &body_of(&request.base, identity, subject),
    ))
}

/// A domain reference `{"id"}` or `{"name"}` resolved to the domain's id.
fn domain_id(identity: &Identity, reference: &Value) -> Option<String> {
    if let Some(id) = reference["id"].as_str() {
        return identity.get(Kind::Domain, id).map(|_| id.to_owned());
    }
    let name = reference["name"].as_str()?;
    identity.domain_named(name)?["id"]
        .as_str()
        .map(str::to_owned)
}

fn find_user<'a>(identity: &'a Identity, user: &Value) -> Option<&'a User> {
    if let Some(id) = user["id"].as_str() {
        return identity.users.iter().find(|u| u.id == id);
    }
    let name = user["name"].as_str()?;
    let domain = domain_id(identity, &user["domain"])?;
    identity
        .users
        .iter()
        .find(|u| u.name == name && u.domain_id == domain)
}

fn find_project(identity: &Identity, project: &Value) -> Option<String> {
    if let Some(id) = project["id"].as_str() {
        return identity.get(Kind::Project, id).map(|_| id.to_owned());
    }
    let name = project["name"].as_str()?;
    let domain = domain_id(identity, &project["domain"])?;
    identity
        .all(Kind::Project)
        .find(|p| p["name"] == name && p["domain_id"] == domain.as_str())
        .and_then(|p| p["id"].as_str())
        .map(str::to_owned)
}

/// `POST /v3/auth/tokens`.
pub(crate) fn issue(request: &Request, identity: &mut Identity) -> Reply {
    let body = request.json()?;
    let auth = &body["auth"];
    let methods = auth["identity"]["methods"].as_array();
    if !methods.is_some_and(|m| m.iter().any(|m| m == "password")) {
        return Err(KeystoneError::unauthorized());
    }
    let password = &auth["identity"]["password"]["user"];
    let user = find_user(identity, password)
        .filter(|u| u.password.is_some() && u.password.as_deref() == password["password"].as_str())
        .ok_or_else(KeystoneError::unauthorized)?
        .clone();
    let project_id = match auth.get("scope").filter(|s| !s.is_null()) {
        None => String::new(),
        Some(scope) => {
            let Some(project) = scope.get("project") else {
                return Err(KeystoneError::bad_request(
                    "The Keystone stand-in scopes tokens to projects only.",
                ));
            };
            let id = find_project(identity, project).ok_or_else(KeystoneError::unauthorized)?;
            if identity.effective_roles(&user.id, &id).is_empty() {
                return Err(KeystoneError::unauthorized());
            }
            id
        }
    };
    let now = epoch_seconds();
    let audit: [u8; 16] = rand::random();
    let token = Token {
        user_id: user.id,
        project_id,
        issued_at: now,
        expires_at: now + LIFETIME,
        audit_id: URL_SAFE_NO_PAD.encode(audit),
    };
    let secret: [u8; 96] = rand::random();
    let value = format!("gAAAAA{}", URL_SAFE_NO_PAD.encode(secret));
    let answer = body_of(&request.base, identity, &token);
    identity.tokens.retain(|_, t| t.expires_at > now);
    identity.tokens.insert(value.clone(), token);
    let mut response = json_response(StatusCode::CREATED, &answer);
    if let Ok(header) = HeaderValue::from_str(&value) {
        response.headers_mut().insert("x-subject-token", header);
    }
    Ok(response)
}

fn domain_ref(identity: &Identity, id: &str) -> Value {
    let name = identity
        .get(Kind::Domain, id)
        .map(|d| d["name"].clone())
        .unwrap_or(Value::Null);
    json!({"id": id, "name": name})
}

fn body_of(base: &str, identity: &Identity, token: &Token) -> Value {
    let user = identity.users.iter().find(|u| u.id == token.user_id);
    let mut answer = json!({
        "methods": ["password"],
        "user": {
            "domain": domain_ref(identity, user.map_or(DEFAULT_DOMAIN, |u| u.domain_id.as_str())),
            "id": token.user_id,
            "name": user.map(|u| u.name.clone()),
            "password_expires_at": null,
        },
        "audit_ids": [token.audit_id],
        "expires_at": timestamp(token.expires_at),
        "issued_at": timestamp(token.issued_at),
    });
    if let Some(project) = identity.get(Kind::Project, &token.project_id) {
        let domain = project["domain_id"].as_str().unwrap_or(DEFAULT_DOMAIN);
        answer["project"] = json!({
            "domain": domain_ref(identity, domain),
            "id": token.project_id,
            "name": project["name"],
        });
        answer["is_domain"] = json!(false);
        answer["roles"] = identity
            .effective_roles(&token.user_id, &token.project_id)
            .into_iter()
            .map(|(id, name)| json!({"id": id, "name": name}))
            .collect();
        answer["catalog"] = catalog(base, identity);
    }
    json!({ "token": answer })
}

/// The identity service with the endpoints the bootstrap registered (public, internal and
/// admin at one URL), or this stand-in's own address before the bootstrap ran.
fn catalog(base: &str, identity: &Identity) -> Value {
    let (url, region) = identity
        .endpoint
        .clone()
        .unwrap_or_else(|| (format!("{base}/v3"), "RegionOne".into()));
    let endpoints: Vec<Value> = ["public", "internal", "admin"]
        .into_iter()
        .map(|interface| {
            json!({"id": super::identity::new_id(), "interface": interface, "region_id": region,
                   "url": url, "region": region})
        })
        .collect();
    json!([{"endpoints": endpoints, "id": super::identity::new_id(), "type": "identity", "name": "keystone"}])
}
