//! API errors as kube-apiserver reports them: a `Status` body with the same code, reason,
//! message and details.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::registry::ResourceType;

/// A failed request, rendered as a `metav1.Status`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApiError {
    pub code: u16,
    pub reason: std::borrow::Cow<'static, str>,
    pub message: String,
    pub details: Option<Value>,
}

/// The result of a request handler.
pub(crate) type Result<T, E = ApiError> = std::result::Result<T, E>;

fn details(rt: &ResourceType, name: &str) -> Value {
    let mut d = json!({"name": name, "kind": rt.plural});
    if !rt.group.is_empty() {
        d["group"] = json!(rt.group);
    }
    d
}

impl ApiError {
    fn new(
        code: u16,
        reason: &'static str,
        message: impl Into<String>,
        details: Option<Value>,
    ) -> Self {
        Self {
            code,
            reason: reason.into(),
            message: message.into(),
            details,
        }
    }

    /// 404 `configmaps "x" not found`.
    pub(crate) fn not_found(rt: &ResourceType, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", rt.qualified_plural()),
            Some(details(rt, name)),
        )
    }

    /// 404 for a namespace that does not exist.
    pub(crate) fn namespace_not_found(namespace: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("namespaces \"{namespace}\" not found"),
            Some(json!({"name": namespace, "kind": "namespaces"})),
        )
    }

    /// 401: the request carries no credentials the server accepts.
    pub(crate) fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized", None)
    }

    /// 403 with kube-apiserver's `... is forbidden: ...` message.
    pub(crate) fn forbidden_message(message: String, details: Option<Value>) -> Self {
        Self::new(403, "Forbidden", message, details)
    }

    /// 404 for a path the server does not serve.
    pub(crate) fn no_route(path: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("the server could not find the requested resource ({path})"),
            Some(json!({})),
        )
    }

    /// 409 `configmaps "x" already exists`.
    pub(crate) fn already_exists(rt: &ResourceType, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", rt.qualified_plural()),
            Some(details(rt, name)),
        )
    }

    /// 409 on a stale resourceVersion or a failed precondition.
    pub(crate) fn conflict(rt: &ResourceType, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                rt.qualified_plural()
            ),
            Some(details(rt, name)),
        )
    }

    /// 409 `the object has been modified`.
    pub(crate) fn modified(rt: &ResourceType, name: &str) -> Self {
        Self::conflict(
            rt,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 for a server-side apply conflict, with its causes.
    pub(crate) fn apply_conflict(
        rt: &ResourceType,
        name: &str,
        message: String,
        causes: Vec<Value>,
    ) -> Self {
        let mut d = details(rt, name);
        d["causes"] = Value::Array(causes);
        Self::new(409, "Conflict", message, Some(d))
    }

    /// 422 `Kind "x" is invalid: <field errors>`.
    pub(crate) fn invalid(
        rt: &ResourceType,
        name: &str,
        message: String,
        causes: Vec<Value>,
    ) -> Self {
        let mut d = json!({"name": name, "kind": rt.kind, "causes": causes});
        if !rt.group.is_empty() {
            d["group"] = json!(rt.group);
        }
        Self::new(422, "Invalid", message, Some(d))
    }

    /// 422 with one field error.
    pub(crate) fn invalid_field(
        rt: &ResourceType,
        name: &str,
        field: &str,
        reason: &'static str,
        error: &str,
    ) -> Self {
        let message = format!(
            "{} \"{name}\" is invalid: {field}: {error}",
            rt.qualified_kind()
        );
        Self::invalid(
            rt,
            name,
            message,
            vec![json!({"reason": reason, "message": error, "field": field})],
        )
    }

    /// 400 with a message.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message, None)
    }

    /// 403 with a message.
    pub(crate) fn forbidden(rt: &ResourceType, name: &str, why: &str) -> Self {
        Self::new(
            403,
            "Forbidden",
            format!("{} \"{name}\" is forbidden: {why}", rt.qualified_plural()),
            Some(details(rt, name)),
        )
    }

    /// 405.
    pub(crate) fn method_not_supported(rt: &ResourceType, method: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!(
                "{method} is not supported on resources of kind \"{}\"",
                rt.qualified_plural()
            ),
            Some(json!({"kind": rt.plural})),
        )
    }

    /// 429 `TooManyRequests`, to be retried after `seconds` (`details.retryAfterSeconds` and
    /// the `Retry-After` header, as kube-apiserver sends them).
    pub(crate) fn too_many_requests(message: impl Into<String>, seconds: u32) -> Self {
        Self::new(
            429,
            "TooManyRequests",
            message,
            Some(json!({"retryAfterSeconds": seconds})),
        )
    }

    /// 410 for a resourceVersion older than the watch history.
    pub(crate) fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message, None)
    }

    /// 413 for a request body over the limit.
    pub(crate) fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
            None,
        )
    }

    /// 415 for a patch type the resource does not take.
    pub(crate) fn unsupported_media_type(content_type: &str, accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
            Some(json!({"causes": [{"reason": "UnexpectedHeader", "message": content_type}]})),
        )
    }

    /// 415 for a body whose media type is served, but not for this kind.
    pub(crate) fn unsupported_media_type_for(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message, None)
    }

    /// 406 for an Accept header the server cannot answer.
    pub(crate) fn not_acceptable(message: impl Into<String>) -> Self {
        Self::new(406, "NotAcceptable", message, None)
    }

    /// 500.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message, None)
    }

    /// The `Status` body.
    pub(crate) fn body(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            status["details"] = d.clone();
        }
        status
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.code, self.reason, self.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry_after = self
            .details
            .as_ref()
            .and_then(|d| d["retryAfterSeconds"].as_u64())
            .map(|s| s.to_string());
        let mut response = (
            code,
            [("content-type", "application/json")],
            self.body().to_string(),
        )
            .into_response();
        if let Some(seconds) = retry_after.and_then(|s| s.parse().ok()) {
            response.headers_mut().insert("retry-after", seconds);
        }
        response
    }
}

impl From<crate::wal::WalError> for ApiError {
    /// A write the log could not take is the server's failure: 500.
    fn from(error: crate::wal::WalError) -> Self {
        ApiError::internal(error.to_string())
    }
}

/// A warning as a Warning header value (`299 - "text"`), quotes and backslashes escaped.
pub(crate) fn warning_header(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
    format!("299 - \"{escaped}\"")
}
