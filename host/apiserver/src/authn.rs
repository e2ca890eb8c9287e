//! Authentication: who sent a request, decided from its bearer token as kube-apiserver's
//! token authenticators do.
//!
//! Two kinds of token are accepted:
//! - the server's admin token, made when it starts and written into every kubeconfig and
//!   client the server hands out: user `wasm-operator-admin` in group `system:masters`
//!   (kube-apiserver's unrestricted group);
//! - a ServiceAccount token this server signed (the TokenRequest of
//!   `serviceaccounts/token`), unexpired, with the API server among its audiences, whose
//!   ServiceAccount still exists with the uid the token names: user
//!   `system:serviceaccount:{ns}:{name}` in groups `system:serviceaccounts`,
//!   `system:serviceaccounts:{ns}`.
//!
//! Every authenticated user is also in `system:authenticated`. A request with no token, or
//! one that is neither of these, is 401 Unauthorized — except the public information
//! kube-apiserver's bootstrap policy grants `system:unauthenticated` (health, version, the
//! service-account issuer's discovery documents).

use std::path::Path;

use axum::http::HeaderMap;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::objects::meta_str;
use crate::private_file;
use crate::route::Route;
use crate::server::Shared;
use crate::status::ApiError;
use crate::store::StoreKey;
use crate::token::ISSUER;

/// The admin token's user.
pub(crate) const ADMIN_USER: &str = "wasm-operator-admin";
/// kube-apiserver's group that every authorizer lets do anything.
pub(crate) const MASTERS: &str = "system:masters";
const AUTHENTICATED: &str = "system:authenticated";

/// An authenticated user, as RBAC and admission webhooks see it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct User {
    pub name: String,
    pub uid: Option<String>,
    pub groups: Vec<String>,
}

impl User {
    /// The holder of the admin token.
    pub(crate) fn admin() -> Self {
        Self {
            name: ADMIN_USER.into(),
            uid: None,
            groups: vec![MASTERS.into(), AUTHENTICATED.into()],
        }
    }

    /// Whether the user is in `group`.
    pub(crate) fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// The ServiceAccount `(namespace, name)` the user is, if it is one.
    pub(crate) fn service_account(&self) -> Option<(&str, &str)> {
        self.name
            .strip_prefix("system:serviceaccount:")?
            .split_once(':')
    }

    /// The `authentication.k8s.io/v1` UserInfo (what admission reviews carry).
    pub(crate) fn info(&self) -> Value {
        let mut info = json!({"username": self.name, "groups": self.groups});
        if let Some(uid) = &self.uid {
            info["uid"] = json!(uid);
        }
        info
    }
}

/// The server's admin token: 32 random bytes, base64url.
pub(crate) fn new_admin_token() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
}

/// The admin token kept in `data_dir` (file `admin-token`, mode 0600), made on first use, so
/// a kubeconfig stays valid across restarts of a server over the same data.
pub(crate) fn kept_admin_token(data_dir: &Path) -> std::io::Result<String> {
    let path = data_dir.join("admin-token");
    if let Some(token) = private_file::read(&path)? {
        let token = token.trim();
        if token.len() >= 32 {
            return Ok(token.to_owned());
        }
    }
    let token = new_admin_token();
    private_file::write(&path, token.as_bytes())?;
    Ok(token)
}

/// Whether anyone may read `route`, as kube-apiserver's `system:public-info-viewer` and
/// `system:service-account-issuer-discovery` roles grant `system:unauthenticated`.
pub(crate) fn is_public(route: &Route) -> bool {
    matches!(route, Route::Version | Route::Health | Route::Jwks)
}

/// The user a request authenticates as, or 401 as kube-apiserver answers it: the
/// connection's client certificate first (kube-apiserver's x509 authenticator comes before
/// its token authenticators), else the bearer token.
pub(crate) fn authenticate(
    shared: &Shared,
    certificate: &crate::tls::ClientCertificate,
    headers: &HeaderMap,
) -> Result<User, ApiError> {
    if let Some((name, groups)) = &certificate.0 {
        let mut groups = groups.clone();
        groups.push(AUTHENTICATED.into());
        return Ok(User {
            name: name.clone(),
            uid: None,
            groups,
        });
    }
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(ApiError::unauthorized)?;
    if constant_time_eq(token.as_bytes(), shared.admin_token().as_bytes()) {
        return Ok(User::admin());
    }
    service_account_user(shared, token).ok_or_else(ApiError::unauthorized)
}

/// The ServiceAccount a token this server signed names, while it still exists as the
/// same object.
fn service_account_user(shared: &Shared, token: &str) -> Option<User> {
    let now = crate::token::epoch_seconds();
    let claims = match shared.verified_tokens().get(token, now) {
        Some(claims) => claims,
        None => {
            let claims = verified_claims(shared, token)?;
            shared.verified_tokens().insert(token, claims.clone());
            claims
        }
    };
    live_account(shared, &claims.namespace, &claims.name, &claims.uid)
}

/// The user of ServiceAccount `namespace/name` while it exists with `uid`.
fn live_account(shared: &Shared, namespace: &str, name: &str, uid: &str) -> Option<User> {
    let key = StoreKey {
        group: String::new(),
        plural: "serviceaccounts".into(),
        namespace: namespace.into(),
        name: name.into(),
    };
    let stored_uid = shared
        .lock()
        .store
        .get(&key)
        .and_then(|sa| meta_str(sa, "uid").map(str::to_owned));
    if stored_uid.as_deref() != Some(uid) {
        tracing::debug!(
            namespace,
            name,
            "a token of a ServiceAccount that no longer exists"
        );
        return None;
    }
    Some(User {
        name: format!("system:serviceaccount:{namespace}:{name}"),
        uid: Some(uid.to_owned()),
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{namespace}"),
            AUTHENTICATED.into(),
        ],
    })
}

/// A TokenReview (`authentication.k8s.io/v1`): whether `spec.token` authenticates for
/// `spec.audiences` (the API server's when none are given), and as whom — what a relying
/// party (OpenBao's Kubernetes auth, a webhook) asks. The admin token is valid for the API
/// server only. Asking needs `create` on `tokenreviews` (`system:auth-delegator`).
pub(crate) fn token_review(
    shared: &Shared,
    rt: &crate::registry::ResourceType,
    _asking: &User,
    body: &[u8],
) -> Result<Value, ApiError> {
    let mut review = crate::access_review::decoded(rt, body)?;
    let Some(token) = review
        .pointer("/spec/token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
    else {
        return Err(ApiError::invalid_field(
            rt,
            "",
            "spec.token",
            "FieldValueRequired",
            "Required value",
        ));
    };
    let wanted: Vec<String> = match review.pointer("/spec/audiences").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => list
            .iter()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect(),
        _ => vec![ISSUER.to_owned()],
    };
    review["status"] = match reviewed(shared, &token, &wanted) {
        Ok((user, audiences)) => {
            json!({"authenticated": true, "user": user.info(), "audiences": audiences})
        }
        Err(error) => json!({"authenticated": false, "user": {}, "error": error}),
    };
    Ok(crate::access_review::answered(review, rt))
}

/// Who `token` is and the audiences of `wanted` it is valid for; why not otherwise.
fn reviewed(
    shared: &Shared,
    token: &str,
    wanted: &[String],
) -> Result<(User, Vec<String>), String> {
    if constant_time_eq(token.as_bytes(), shared.admin_token().as_bytes()) {
        return if wanted.iter().any(|a| a == ISSUER) {
            Ok((User::admin(), vec![ISSUER.to_owned()]))
        } else {
            Err("token audiences [\"https://kubernetes.default.svc.cluster.local\"] is invalid for the target audiences".into())
        };
    }
    let claims = shared
        .signer()
        .review(token)
        .map_err(|e| format!("invalid bearer token: {e}"))?;
    let audiences = audiences(&claims);
    let granted: Vec<String> = wanted
        .iter()
        .filter(|a| audiences.contains(a))
        .cloned()
        .collect();
    if granted.is_empty() {
        return Err(format!(
            "token audiences {audiences:?} is invalid for the target audiences {wanted:?}"
        ));
    }
    let text = |pointer: &str| {
        claims
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let user = live_account(
        shared,
        text("/kubernetes.io/namespace"),
        text("/kubernetes.io/serviceaccount/name"),
        text("/kubernetes.io/serviceaccount/uid"),
    )
    .ok_or("the token's ServiceAccount no longer exists")?;
    Ok((user, granted))
}

/// What a token this server signed names, when its signature, expiry and audience hold.
fn verified_claims(shared: &Shared, token: &str) -> Option<crate::verified_tokens::Claims> {
    let claims = shared.signer().review(token).ok()?;
    if !audiences(&claims).iter().any(|a| a == ISSUER) {
        tracing::debug!("a ServiceAccount token without the API server's audience");
        return None;
    }
    let text = |pointer: &str| claims.pointer(pointer)?.as_str().map(str::to_owned);
    Some(crate::verified_tokens::Claims {
        namespace: text("/kubernetes.io/namespace")?,
        name: text("/kubernetes.io/serviceaccount/name")?,
        uid: text("/kubernetes.io/serviceaccount/uid")?,
        expires: claims["exp"].as_i64()?,
    })
}

/// A token's `aud` claim: one audience or a list.
fn audiences(claims: &Value) -> Vec<String> {
    match &claims["aud"] {
        Value::String(a) => vec![a.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Compares secrets in time independent of where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A SelfSubjectReview (`authentication.k8s.io/v1`, `kubectl auth whoami`): who the
/// requester is.
pub(crate) fn self_subject_review(
    _shared: &Shared,
    rt: &crate::registry::ResourceType,
    user: &User,
    _body: &[u8],
) -> Result<Value, ApiError> {
    Ok(crate::access_review::answered(
        json!({"status": {"userInfo": user.info()}}),
        rt,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_account_user_names_its_namespace_and_name() {
        let user = User {
            name: "system:serviceaccount:ops:wasm-operator".into(),
            uid: None,
            groups: vec![],
        };
        assert_eq!(user.service_account(), Some(("ops", "wasm-operator")));
        assert_eq!(User::admin().service_account(), None);
    }

    #[test]
    fn secrets_compare_equal_only_when_equal() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
