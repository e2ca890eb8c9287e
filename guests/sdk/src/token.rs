//! ServiceAccount tokens: [`request_token`] asks the cluster for a token of a
//! ServiceAccount (a TokenRequest on its `token` subresource), e.g. to log in to OpenBao's
//! Kubernetes auth method.
//!
//! The plugin must declare `create` on the `token` subresource of ServiceAccounts
//! ([`token_permission`], in `Description::subresources`); the host refuses it otherwise, and
//! for a ServiceAccount outside the pass's namespace reach. The token is a secret: never log
//! it or write it into an object's status.

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::object::{KindRef, ObjectRef};
use crate::plugin::{SubresourcePermission, Verb};

/// A ServiceAccount token and when it expires.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// The signed JWT.
    pub token: String,
    /// When the server stops accepting it.
    pub expires: Time,
}

impl std::fmt::Debug for Token {
    /// Shows the expiry, never the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("token", &"<redacted>")
            .field("expires", &self.expires)
            .finish()
    }
}

/// What a plugin declares to request tokens: `create` on ServiceAccounts' `token`.
pub fn token_permission() -> SubresourcePermission {
    SubresourcePermission {
        kind: KindRef::of::<ServiceAccount>(),
        subresource: "token".into(),
        verbs: vec![Verb::Create],
    }
}

/// Requests a token of ServiceAccount `service_account` in `namespace` for `audience`, valid
/// for `expiry` (whole seconds; the API server takes 10 minutes to 2^32 seconds and may
/// shorten it: read [`Token::expires`]).
///
/// Fails with the cluster's error ([`ApiError::NotFound`](crate::ApiError::NotFound) for a
/// missing ServiceAccount, [`ApiError::Forbidden`](crate::ApiError::Forbidden) when the
/// plugin did not declare [`token_permission`] or the namespace is out of reach,
/// [`ApiError::Invalid`](crate::ApiError::Invalid) for an expiry the server refuses), and
/// with [`Error::MissingField`] when the answer holds no token.
pub fn request_token<C: Cluster + ?Sized>(
    cluster: &C,
    namespace: &str,
    service_account: &str,
    audience: &str,
    expiry: std::time::Duration,
) -> Result<Token> {
    let what = format!("the token of ServiceAccount {namespace}/{service_account}");
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            audiences: Some(vec![audience.to_owned()]),
            expiration_seconds: Some(i64::try_from(expiry.as_secs()).unwrap_or(i64::MAX)),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let mut body = serde_json::to_value(&request).map_err(|source| Error::Encode {
        what: what.clone(),
        source,
    })?;
    body["apiVersion"] = "authentication.k8s.io/v1".into();
    body["kind"] = "TokenRequest".into();
    let account = ObjectRef::of::<ServiceAccount>(Some(namespace), service_account);
    let answer = cluster.create_subresource(&account, "token", &body)?;
    let answer: TokenRequest = serde_json::from_value(answer).map_err(|source| Error::Decode {
        what: what.clone(),
        source,
    })?;
    let status = answer.status.ok_or_else(|| Error::MissingField {
        what: what.clone(),
        field: "status",
    })?;
    let missing = |field: &'static str| Error::MissingField {
        what: what.clone(),
        field,
    };
    let token = status
        .token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| missing("status.token"))?;
    let expires = status
        .expiration_timestamp
        .ok_or_else(|| missing("status.expirationTimestamp"))?;
    Ok(Token { token, expires })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ApiError;
    use crate::testing::{Call, FakeCluster};

    fn account() -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "openbao-auth", "namespace": "ns"}})
    }

    #[test]
    fn a_token_request_names_the_audience_and_expiry_and_returns_token_and_expiry() {
        let cluster = FakeCluster::new().with(account()).answer_subresource(
            "token",
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"audiences": ["openbao"]},
                "status": {"token": "a.b.c", "expirationTimestamp": "2026-12-01T17:00:00Z"}}),
        );
        let token = request_token(
            &cluster,
            "ns",
            "openbao-auth",
            "openbao",
            std::time::Duration::from_secs(1200),
        )
        .expect("a token");
        assert_eq!(token.token, "a.b.c");
        assert_eq!(token.expires.0.to_string(), "2026-12-01T17:00:00Z");
        assert!(!format!("{token:?}").contains("a.b.c"), "{token:?}");
        let calls = cluster.calls();
        let [Call::CreateSubresource(object, subresource, body)] = &calls[..] else {
            panic!("{calls:?}")
        };
        assert_eq!(
            (
                object.kind.as_str(),
                object.name.as_str(),
                subresource.as_str()
            ),
            ("ServiceAccount", "openbao-auth", "token")
        );
        assert_eq!(
            body,
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "metadata": {}, "spec": {"audiences": ["openbao"], "expirationSeconds": 1200}})
        );
    }

    #[test]
    fn a_missing_service_account_is_not_found_and_an_answer_without_a_token_is_missing_field() {
        let cluster = FakeCluster::new().answer_subresource("token", json!({"status": {}}));
        let one = std::time::Duration::from_secs(600);
        let err = request_token(&cluster, "ns", "openbao-auth", "openbao", one)
            .expect_err("no ServiceAccount");
        assert!(
            matches!(&err, Error::Api(ApiError::NotFound(m)) if m.contains("openbao-auth")),
            "{err:?}"
        );
        cluster.put(account());
        let err =
            request_token(&cluster, "ns", "openbao-auth", "openbao", one).expect_err("no token");
        assert_eq!(
            err.to_string(),
            "the token of ServiceAccount ns/openbao-auth has no status.token"
        );
    }
}
