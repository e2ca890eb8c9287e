//! What a webhook's refusal or failed call answers (kube-apiserver's `ToStatusErr` and
//! `NewInternalError`).

use serde_json::{Value, json};

use super::Attributes;
use crate::status::ApiError;

/// `apierrors.NewInternalError(err)`.
pub(super) fn internal(error: String) -> ApiError {
    ApiError {
        code: 500,
        reason: "InternalError".into(),
        message: format!("Internal error occurred: {error}"),
        details: Some(json!({"causes": [{"message": error}]})),
    }
}

/// kube-apiserver's `ToStatusErr` of a webhook's denial `status`.
pub(super) fn denied(webhook: &str, attrs: &Attributes, status: Option<Value>) -> ApiError {
    let status = status.unwrap_or_else(|| json!({}));
    let rt = &attrs.target.rt;
    let code = status["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c != 0)
        .unwrap_or(403);
    let name = if attrs.name.is_empty() {
        "Unknown"
    } else {
        attrs.name.as_str()
    };
    let denied_by = format!("admission webhook \"{webhook}\" denied the request");
    let text = |field: &str| status[field].as_str().filter(|s| !s.is_empty());
    let message = match (text("message"), text("reason")) {
        (Some(m), _) => format!("{denied_by}: {m}"),
        (None, Some(r)) => format!("{denied_by}: {r}"),
        (None, None) => format!("{denied_by} without explanation"),
    };
    let details = status
        .get("details")
        .filter(|d| d.is_object())
        .cloned()
        .unwrap_or_else(|| {
            if code == 500 {
                json!({"causes": [{"message": message}]})
            } else {
                let mut d = json!({"name": name, "kind": rt.plural});
                if !rt.group.is_empty() {
                    d["group"] = json!(rt.group);
                }
                d
            }
        });
    let prefix = if code == 500 {
        "Internal error occurred".to_owned()
    } else {
        format!("{} \"{name}\" is forbidden", rt.qualified_plural())
    };
    let reason = match text("reason") {
        Some(r) => std::borrow::Cow::Owned(r.to_owned()),
        None if code == 500 => "InternalError".into(),
        None => "Forbidden".into(),
    };
    ApiError {
        code,
        reason,
        message: format!("{prefix}: {message}"),
        details: Some(details),
    }
}
