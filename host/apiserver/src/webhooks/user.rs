//! Who a request is, as the `userInfo` of an AdmissionReview: the ServiceAccount of a
//! bearer token this server signed (kube-apiserver's ServiceAccount authenticator), else
//! the anonymous user (the server authorizes everyone, as with anonymous auth enabled).

use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::token::TokenSigner;

/// The `authentication.k8s.io/v1` UserInfo of the request with `headers`.
pub(crate) fn user_info(signer: &TokenSigner, headers: &HeaderMap) -> Value {
    let claims = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .and_then(|token| signer.review(token.trim()).ok());
    let Some(claims) = claims else {
        return json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]});
    };
    let namespace = claims
        .pointer("/kubernetes.io/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    json!({
        "username": claims["sub"],
        "uid": claims.pointer("/kubernetes.io/serviceaccount/uid").cloned().unwrap_or(Value::Null),
        "groups": [
            "system:serviceaccounts",
            format!("system:serviceaccounts:{namespace}"),
            "system:authenticated",
        ],
    })
}
