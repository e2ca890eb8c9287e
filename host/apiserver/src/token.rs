//! ServiceAccount tokens: POST `/api/v1/namespaces/{ns}/serviceaccounts/{name}/token` (a
//! TokenRequest) and the key set that verifies them, `/openid/v1/jwks`.
//!
//! As kube-apiserver does: the token is a JWT signed with the server's own key (ES256 here,
//! a P-256 key made at start), with claims `iss`, `sub` (`system:serviceaccount:{ns}:{name}`),
//! `aud` (`spec.audiences`, else the issuer), `exp`, `iat`, `nbf`, `jti` and the
//! `kubernetes.io` claim naming the namespace and the ServiceAccount (name and uid).
//! `spec.expirationSeconds` defaults to 3600 and must be at least 600 and at most 2^32;
//! a bound object (`spec.boundObjectRef`) is not supported (400). The answer is the
//! TokenRequest with `status.token` and `status.expirationTimestamp`, 201 Created. Nothing is
//! stored: a token is valid until it expires.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use p256::elliptic_curve::Generate as _;
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::objects::{key_for, meta_str, new_uid};
use crate::route::Target;
use crate::server::Shared;
use crate::status::{ApiError, Result};

/// The issuer of the tokens (`iss`), kube-apiserver's usual `--service-account-issuer`.
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// `spec.expirationSeconds` when the request names none.
const DEFAULT_EXPIRATION: i64 = 3600;
/// The shortest validity kube-apiserver grants (10 minutes).
const MIN_EXPIRATION: i64 = 600;
/// The longest (2^32 seconds).
const MAX_EXPIRATION: i64 = 1 << 32;

/// The key tokens are signed with, made when the server starts.
pub(crate) struct TokenSigner {
    key: SigningKey,
    /// The key id (`kid`): the base64url SHA-256 of the public key's SEC1 encoding.
    kid: String,
}

impl TokenSigner {
    /// A fresh P-256 key.
    pub(crate) fn generate() -> Self {
        let key = SigningKey::generate_from_rng(&mut rand::rng());
        let public = key.verifying_key().to_sec1_point(false);
        let kid = URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(public.as_bytes()));
        Self { key, kid }
    }

    /// The JSON Web Key Set of the public key (RFC 7517), as `/openid/v1/jwks` serves it.
    pub(crate) fn jwks(&self) -> Value {
        let point = self.key.verifying_key().to_sec1_point(false);
        // An uncompressed SEC1 point is 0x04 || x (32 bytes) || y (32 bytes).
        let bytes = point.as_bytes();
        let (x, y) = bytes.get(1..).unwrap_or_default().split_at(32);
        json!({"keys": [{
            "use": "sig",
            "kty": "EC",
            "kid": self.kid,
            "crv": "P-256",
            "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(x),
            "y": URL_SAFE_NO_PAD.encode(y),
        }]})
    }

    /// `claims` as a compact JWS (ES256).
    fn sign(&self, claims: &Value) -> String {
        let header = json!({"alg": "ES256", "kid": self.kid});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature: Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }
}

/// Why [`TokenSigner::review`] rejected a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not three base64url parts with a JSON header and claims.
    #[error("not a JWT: {0}")]
    Malformed(&'static str),
    /// The signature is not this server's.
    #[error("the signature does not verify with this server's key")]
    Signature,
    /// Past its `exp`.
    #[error("the token expired at {0}")]
    Expired(i64),
}

impl TokenSigner {
    /// The claims of `token` when this server signed it and it has not expired (what a
    /// TokenReview tells a relying party such as OpenBao).
    pub(crate) fn review(&self, token: &str) -> std::result::Result<Value, TokenError> {
        use p256::ecdsa::signature::Verifier as _;
        let (input, signature) = token
            .rsplit_once('.')
            .ok_or(TokenError::Malformed("no signature"))?;
        let (_, claims) = input
            .split_once('.')
            .ok_or(TokenError::Malformed("no claims"))?;
        let signature = URL_SAFE_NO_PAD
            .decode(signature)
            .ok()
            .and_then(|bytes| Signature::from_slice(&bytes).ok())
            .ok_or(TokenError::Malformed(
                "the signature is not base64url ES256",
            ))?;
        self.key
            .verifying_key()
            .verify(input.as_bytes(), &signature)
            .map_err(|_| TokenError::Signature)?;
        let claims: Value = URL_SAFE_NO_PAD
            .decode(claims)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or(TokenError::Malformed("the claims are not base64url JSON"))?;
        let exp = claims["exp"]
            .as_i64()
            .ok_or(TokenError::Malformed("no exp"))?;
        if exp <= epoch_seconds() {
            return Err(TokenError::Expired(exp));
        }
        Ok(claims)
    }
}

/// The seconds since the Unix epoch.
pub(crate) fn epoch_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// 422 as kube-apiserver words an invalid TokenRequest.
fn invalid(name: &str, field: &str, error: String) -> ApiError {
    ApiError {
        code: 422,
        reason: "Invalid".into(),
        message: format!(
            "TokenRequest.authentication.k8s.io \"{name}\" is invalid: {field}: {error}"
        ),
        details: Some(json!({
            "name": name, "group": "authentication.k8s.io", "kind": "TokenRequest",
            "causes": [{"reason": "FieldValueInvalid", "message": error, "field": field}],
        })),
    }
}

/// POST of a TokenRequest on ServiceAccount `name` of `target`'s namespace: the
/// TokenRequest answered (with 201). 404 when there is no such ServiceAccount.
pub(crate) fn create(shared: &Shared, target: &Target, name: &str, body: &[u8]) -> Result<Value> {
    let request: Value = if body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding the TokenRequest: {e}")))?
    };
    if request
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k != "TokenRequest")
    {
        return Err(ApiError::bad_request(
            "the body of a token request must be a TokenRequest",
        ));
    }
    let spec = request.get("spec").cloned().unwrap_or_else(|| json!({}));
    if spec.get("boundObjectRef").is_some_and(|b| !b.is_null()) {
        return Err(ApiError::bad_request(
            "this API server does not bind tokens to objects (spec.boundObjectRef)",
        ));
    }
    let expiration = match spec.get("expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_EXPIRATION,
        Some(v) => v.as_i64().ok_or_else(|| {
            invalid(
                name,
                "spec.expirationSeconds",
                format!("Invalid value: {v}: must be an integer"),
            )
        })?,
    };
    if expiration < MIN_EXPIRATION {
        return Err(invalid(
            name,
            "spec.expirationSeconds",
            format!("Invalid value: {expiration}: may not specify a duration less than 10 minutes"),
        ));
    }
    if expiration > MAX_EXPIRATION {
        return Err(invalid(
            name,
            "spec.expirationSeconds",
            format!(
                "Invalid value: {expiration}: may not specify a duration larger than 2^32 seconds"
            ),
        ));
    }
    let audiences: Vec<String> = match spec.get("audiences").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => list
            .iter()
            .map(|a| a.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                invalid(
                    name,
                    "spec.audiences",
                    "Invalid value: an audience is a string".into(),
                )
            })?,
        _ => vec![ISSUER.to_owned()],
    };
    let namespace = target.namespace.clone().unwrap_or_default();
    let account = shared
        .lock()
        .store
        .get(&key_for(&target.rt, target.namespace.as_deref(), name))
        .cloned()
        .ok_or_else(|| ApiError::not_found(&target.rt, name))?;
    let uid = meta_str(&account, "uid").unwrap_or_default().to_owned();
    let now = epoch_seconds();
    let expires = now.saturating_add(expiration);
    let claims = json!({
        "iss": ISSUER,
        "sub": format!("system:serviceaccount:{namespace}:{name}"),
        "aud": audiences,
        "exp": expires,
        "iat": now,
        "nbf": now,
        "jti": new_uid(),
        "kubernetes.io": {
            "namespace": namespace,
            "serviceaccount": {"name": name, "uid": uid},
        },
    });
    let token = shared.signer().sign(&claims);
    let expiration_timestamp = k8s_openapi::jiff::Timestamp::from_second(expires)
        .map(|t| t.to_string())
        .map_err(|e| ApiError::internal(format!("cannot format the expiry: {e}")))?;
    let answer = json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": null},
        "spec": {"audiences": audiences, "expirationSeconds": expiration, "boundObjectRef": null},
        "status": {"token": token, "expirationTimestamp": expiration_timestamp},
    });
    Ok(answer)
}
