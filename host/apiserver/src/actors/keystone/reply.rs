//! Keystone's answers: JSON bodies, its `{"error": {code, message, title}}` errors, and the
//! `links` it adds from the address the client used.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A Keystone error answer.
#[derive(Debug)]
pub(crate) struct KeystoneError {
    pub code: u16,
    pub message: String,
}

/// The result of a handler.
pub(crate) type Reply = Result<Response, KeystoneError>;

impl KeystoneError {
    pub(crate) fn unauthorized() -> Self {
        Self {
            code: 401,
            message: "The request you have made requires authentication.".into(),
        }
    }

    pub(crate) fn not_found(what: &str, id: &str) -> Self {
        Self {
            code: 404,
            message: format!("Could not find {what}: {id}."),
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self {
            code: 400,
            message: message.into(),
        }
    }

    pub(crate) fn conflict(message: impl Into<String>) -> Self {
        Self {
            code: 409,
            message: message.into(),
        }
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> Self {
        Self {
            code: 403,
            message: message.into(),
        }
    }

    fn title(&self) -> &'static str {
        match self.code {
            400 => "Bad Request",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            405 => "Method Not Allowed",
            409 => "Conflict",
            503 => "Service Unavailable",
            _ => "Internal Server Error",
        }
    }
}

impl IntoResponse for KeystoneError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body =
            json!({"error": {"code": self.code, "message": self.message, "title": self.title()}});
        json_response(status, &body)
    }
}

/// `body` as `application/json` with `status`.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::VARY, HeaderValue::from_static("X-Auth-Token"));
    (status, headers, body.to_string()).into_response()
}

/// 204 No Content.
pub(crate) fn no_content() -> Response {
    (StatusCode::NO_CONTENT, [(header::VARY, "X-Auth-Token")]).into_response()
}

/// `{"<member>": object}` with `status`.
pub(crate) fn member(status: StatusCode, name: &str, object: Value) -> Reply {
    Ok(json_response(status, &json!({ name: object })))
}

/// `{"<plural>": [...], "links": {self, previous, next}}`.
pub(crate) fn collection(base: &str, path_and_query: &str, name: &str, items: Vec<Value>) -> Reply {
    Ok(json_response(
        StatusCode::OK,
        &json!({ name: items, "links": {"next": null, "self": format!("{base}{path_and_query}"), "previous": null}}),
    ))
}

/// `object` with `links.self` = `{base}/v3/{path}/{id}` (and, for an identity provider,
/// `links.protocols`).
pub(crate) fn linked(base: &str, path: &str, mut object: Value) -> Value {
    let id = object["id"].as_str().unwrap_or_default().to_owned();
    let this = format!("{base}/v3/{path}/{id}");
    let mut links = json!({"self": this});
    if path.ends_with("identity_providers") {
        links["protocols"] = json!(format!("{this}/protocols"));
    }
    if let Some(map) = object.as_object_mut() {
        map.insert("links".into(), links);
    }
    object
}

/// A protocol with the links Keystone 22 renders for one (`{base}/v3/protocols/{id}` and
/// `{base}/v3/{idp}`, as the real service answers).
pub(crate) fn linked_protocol(base: &str, idp: &str, mut protocol: Value) -> Value {
    let id = protocol["id"].as_str().unwrap_or_default().to_owned();
    if let Some(map) = protocol.as_object_mut() {
        map.insert(
            "links".into(),
            json!({"self": format!("{base}/v3/protocols/{id}"), "identity_provider": format!("{base}/v3/{idp}")}),
        );
    }
    protocol
}
