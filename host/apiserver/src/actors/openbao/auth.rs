//! Auth methods: AppRole (`auth/approle/login`, reading a role's role-id, minting
//! secret-ids with the role's TTL) and Kubernetes (`auth/kubernetes/login` with a
//! ServiceAccount JWT).
//!
//! The Kubernetes method verifies the JWT as OpenBao does with the cluster's keys: the
//! signature against the key set the API server serves at `/openid/v1/jwks` (fetched through
//! the actor's client on each login), then `exp`, the role's audience, and the bound
//! ServiceAccount names and namespaces (`*` allows any).

use std::collections::BTreeMap;

use axum::http::StatusCode;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use super::api::{Answer, BaoError, Reply, Request};
use super::state::{SecretId, Token, Vault};
use super::{OpenBao, epoch_seconds, random_id};

/// A new token with `policies` (plus `default`) and `ttl`, as the `auth` block answers it.
fn issue(
    vault: &mut Vault,
    mut policies: Vec<String>,
    ttl: i64,
    metadata: BTreeMap<String, String>,
) -> Answer {
    if !policies.iter().any(|p| p == "default") {
        policies.insert(0, "default".into());
    }
    let client_token = format!("s.{}", random_id());
    let token = Token {
        accessor: random_id(),
        policies: policies.clone(),
        metadata: metadata.clone(),
        expires_at: Some(epoch_seconds() + ttl),
        ttl,
    };
    let accessor = token.accessor.clone();
    let now = epoch_seconds();
    vault
        .tokens
        .retain(|_, t| t.expires_at.is_none_or(|e| e > now));
    vault.tokens.insert(client_token.clone(), token);
    Answer::Auth(json!({
        "client_token": client_token,
        "accessor": accessor,
        "policies": policies,
        "token_policies": policies,
        "metadata": metadata,
        "lease_duration": ttl,
        "renewable": true,
        "entity_id": "",
        "token_type": "service",
        "orphan": true,
        "mfa_requirement": null,
        "num_uses": 0,
    }))
}

/// `auth/approle/login` with `role_id` and `secret_id`.
pub(crate) fn approle_login(request: &Request, vault: &mut Vault) -> Reply {
    let invalid = || BaoError::bad_request("invalid role or secret ID");
    let role_id = request.body["role_id"].as_str().unwrap_or_default();
    if role_id.is_empty() {
        return Err(BaoError::bad_request("missing role_id"));
    }
    let (name, role) = vault
        .approles
        .iter()
        .find(|(_, r)| r.role_id == role_id)
        .map(|(n, r)| (n.clone(), r.clone()))
        .ok_or_else(invalid)?;
    let secret_id = request.body["secret_id"].as_str().unwrap_or_default();
    let now = epoch_seconds();
    let valid = vault
        .secret_ids
        .get(secret_id)
        .is_some_and(|s| s.role == name && s.expires_at.is_none_or(|e| e > now));
    if !valid {
        return Err(invalid());
    }
    Ok(issue(
        vault,
        role.policies,
        role.token_ttl,
        BTreeMap::from([("role_name".to_owned(), name)]),
    ))
}

/// `GET auth/approle/role/{role}/role-id` (404 for an unknown role).
pub(crate) fn read_role_id(vault: &Vault, role: &str) -> Reply {
    let role = vault.approles.get(role).ok_or_else(BaoError::not_found)?;
    Ok(Answer::Data(json!({"role_id": role.role_id})))
}

/// `PUT auth/approle/role/{role}/secret-id`: a fresh secret-id valid for the role's
/// `secret_id_ttl` (0: forever).
pub(crate) fn mint_secret_id(vault: &mut Vault, role: &str) -> Reply {
    let ttl = vault
        .approles
        .get(role)
        .ok_or_else(|| BaoError::bad_request(format!("role \"{role}\" does not exist")))?
        .secret_id_ttl;
    let secret_id = crate::objects::new_uid();
    let accessor = crate::objects::new_uid();
    vault.secret_ids.insert(
        secret_id.clone(),
        SecretId {
            role: role.to_owned(),
            expires_at: (ttl > 0).then(|| epoch_seconds() + ttl),
        },
    );
    Ok(Answer::Data(json!({
        "secret_id": secret_id,
        "secret_id_accessor": accessor,
        "secret_id_ttl": ttl,
        "secret_id_num_uses": 0,
    })))
}

/// `auth/kubernetes/login` with `role` and `jwt`.
pub(crate) async fn kubernetes_login(bao: &OpenBao, request: &Request) -> Reply {
    let name = request.body["role"].as_str().unwrap_or_default().to_owned();
    let Some(role) = bao.lock().kubernetes_roles.get(&name).cloned() else {
        return Err(BaoError::bad_request(format!(
            "invalid role name \"{name}\""
        )));
    };
    let jwt = request.body["jwt"].as_str().unwrap_or_default();
    if jwt.is_empty() {
        return Err(BaoError::bad_request("missing jwt"));
    }
    let jwks: Value = bao
        .client
        .request(
            axum::http::Request::get("/openid/v1/jwks")
                .body(Vec::new())
                .map_err(|e| BaoError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?,
        )
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, "the OpenBao stand-in cannot read the cluster's key set");
            BaoError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot read the cluster's key set",
            )
        })?;
    let claims = verify(&jwks, jwt).ok_or_else(BaoError::permission_denied)?;
    let denied = |m: &str| BaoError::new(StatusCode::FORBIDDEN, m);
    if claims["exp"]
        .as_i64()
        .is_none_or(|exp| exp <= epoch_seconds())
    {
        return Err(denied("token is expired"));
    }
    if let Some(audience) = &role.audience {
        let carried = match &claims["aud"] {
            Value::Array(list) => list.iter().any(|a| a == audience.as_str()),
            Value::String(one) => one == audience,
            _ => false,
        };
        if !carried {
            return Err(denied(
                "invalid audience (aud) claim: audience claim does not match any expected audience",
            ));
        }
    }
    let account = &claims["kubernetes.io"]["serviceaccount"];
    let account_name = account["name"].as_str().unwrap_or_default().to_owned();
    let namespace = claims["kubernetes.io"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let bound = |list: &[String], value: &str| list.iter().any(|v| v == "*" || v == value);
    if !bound(&role.service_account_names, &account_name) {
        return Err(denied("service account name not authorized"));
    }
    if !bound(&role.service_account_namespaces, &namespace) {
        return Err(denied("namespace not authorized"));
    }
    let metadata = BTreeMap::from([
        ("role".to_owned(), name),
        ("service_account_name".to_owned(), account_name),
        ("service_account_namespace".to_owned(), namespace),
        ("service_account_secret_name".to_owned(), String::new()),
        (
            "service_account_uid".to_owned(),
            account["uid"].as_str().unwrap_or_default().to_owned(),
        ),
    ]);
    Ok(issue(
        &mut bao.lock(),
        role.policies,
        role.token_ttl,
        metadata,
    ))
}

/// The claims of `jwt` when an ES256 key of `jwks` with its `kid` verifies it.
fn verify(jwks: &Value, jwt: &str) -> Option<Value> {
    use p256::ecdsa::signature::Verifier as _;
    let (input, signature) = jwt.rsplit_once('.')?;
    let (header, claims) = input.split_once('.')?;
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
    if header["alg"] != "ES256" {
        return None;
    }
    let key = jwks["keys"]
        .as_array()?
        .iter()
        .find(|k| k["kid"] == header["kid"])?;
    let coordinate = |c: &str| {
        URL_SAFE_NO_PAD
            .decode(key[c].as_str().unwrap_or_default())
            .ok()
    };
    let mut point = vec![0x04];
    point.extend(coordinate("x")?);
    point.extend(coordinate("y")?);
    let verifying = p256::ecdsa::VerifyingKey::from_sec1_bytes(&point).ok()?;
    let signature =
        p256::ecdsa::Signature::from_slice(&URL_SAFE_NO_PAD.decode(signature).ok()?).ok()?;
    verifying.verify(input.as_bytes(), &signature).ok()?;
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).ok()?).ok()
}
