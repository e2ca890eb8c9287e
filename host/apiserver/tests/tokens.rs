//! ServiceAccount tokens: a TokenRequest answers a JWT signed with the server's key, which
//! `/openid/v1/jwks` serves, with kube-apiserver's claims, defaults and limits.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::{Value, json};

use crate::support::{get, post, server};

const TOKEN: &str = "/api/v1/namespaces/default/serviceaccounts/openbao-auth/token";

async fn service_account(client: &kube::Client) -> Value {
    let created = post(
        client,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "openbao-auth"}}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    created.body
}

fn token_request(spec: Value) -> Value {
    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
}

fn part(token: &str, i: usize) -> Vec<u8> {
    let piece = token.split('.').nth(i).expect("three parts");
    URL_SAFE_NO_PAD.decode(piece).expect("base64url")
}

fn json_part(token: &str, i: usize) -> Value {
    serde_json::from_slice(&part(token, i)).expect("JSON")
}

/// The token's signature checked against the key of the server's JWKS with the token's kid.
async fn verify(client: &kube::Client, token: &str) -> Result<(), String> {
    let jwks = get(client, "/openid/v1/jwks").await;
    assert_eq!(jwks.status, 200);
    let kid = json_part(token, 0)["kid"].clone();
    let key = jwks.body["keys"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|k| k["kid"] == kid)
        .ok_or("no key with the token's kid")?;
    assert_eq!(
        (key["kty"].as_str(), key["crv"].as_str()),
        (Some("EC"), Some("P-256"))
    );
    let coordinate = |c: &str| URL_SAFE_NO_PAD.decode(key[c].as_str().unwrap_or_default());
    let mut point = vec![0x04];
    point.extend(coordinate("x").map_err(|e| e.to_string())?);
    point.extend(coordinate("y").map_err(|e| e.to_string())?);
    let verifying = VerifyingKey::from_sec1_bytes(&point).map_err(|e| e.to_string())?;
    let signature = Signature::from_slice(&part(token, 2)).map_err(|e| e.to_string())?;
    let (input, _) = token.rsplit_once('.').ok_or("no signature")?;
    verifying
        .verify(input.as_bytes(), &signature)
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn a_token_request_answers_a_jwt_signed_with_the_key_the_jwks_serves() {
    let (_server, client) = server().await;
    let account = service_account(&client).await;
    let answer = post(
        &client,
        TOKEN,
        token_request(json!({"audiences": ["openbao"], "expirationSeconds": 1200})),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    assert_eq!(answer.body["kind"], "TokenRequest");
    assert_eq!(answer.body["apiVersion"], "authentication.k8s.io/v1");
    let token = answer.body["status"]["token"].as_str().expect("a token");
    assert_eq!(json_part(token, 0)["alg"], "ES256");
    verify(&client, token)
        .await
        .expect("the signature verifies");
    let claims = json_part(token, 1);
    assert_eq!(
        claims["iss"],
        "https://kubernetes.default.svc.cluster.local"
    );
    assert_eq!(claims["sub"], "system:serviceaccount:default:openbao-auth");
    assert_eq!(claims["aud"], json!(["openbao"]));
    let iat = claims["iat"].as_i64().expect("iat");
    assert_eq!(claims["exp"].as_i64(), Some(iat + 1200));
    assert_eq!(claims["nbf"].as_i64(), Some(iat));
    assert_eq!(
        claims["kubernetes.io"],
        json!({"namespace": "default",
            "serviceaccount": {"name": "openbao-auth", "uid": account["metadata"]["uid"]}})
    );
    let expires: k8s_openapi::jiff::Timestamp = answer.body["status"]["expirationTimestamp"]
        .as_str()
        .expect("an expirationTimestamp")
        .parse()
        .expect("RFC 3339");
    assert_eq!(expires.as_second(), iat + 1200);
}

#[tokio::test]
async fn a_token_with_a_tampered_claim_does_not_verify() {
    let (_server, client) = server().await;
    service_account(&client).await;
    let answer = post(
        &client,
        TOKEN,
        token_request(json!({"audiences": ["openbao"]})),
    )
    .await;
    let token = answer.body["status"]["token"].as_str().expect("a token");
    let mut claims = json_part(token, 1);
    claims["sub"] = json!("system:serviceaccount:kube-system:admin");
    let parts: Vec<&str> = token.split('.').collect();
    let forged = format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(claims.to_string()),
        parts[2]
    );
    let err = verify(&client, &forged).await.expect_err("forged");
    assert!(err.contains("signature"), "{err}");
}

#[tokio::test]
async fn an_unset_expiry_is_an_hour_and_unset_audiences_are_the_issuer() {
    let (_server, client) = server().await;
    service_account(&client).await;
    let answer = post(&client, TOKEN, token_request(json!({}))).await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    assert_eq!(answer.body["spec"]["expirationSeconds"], 3600);
    let claims = json_part(answer.body["status"]["token"].as_str().expect("token"), 1);
    assert_eq!(
        claims["exp"]
            .as_i64()
            .zip(claims["iat"].as_i64())
            .map(|(e, i)| e - i),
        Some(3600)
    );
    assert_eq!(
        claims["aud"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
}

#[tokio::test]
async fn an_expiry_outside_ten_minutes_to_two_to_the_32_seconds_is_invalid() {
    let (_server, client) = server().await;
    service_account(&client).await;
    let cases: [(i64, Option<&str>); 3] = [
        (600, None),
        (
            599,
            Some(
                "TokenRequest.authentication.k8s.io \"openbao-auth\" is invalid: \
                 spec.expirationSeconds: Invalid value: 599: may not specify a duration less \
                 than 10 minutes",
            ),
        ),
        (
            (1 << 32) + 1,
            Some("may not specify a duration larger than 2^32 seconds"),
        ),
    ];
    for (seconds, expected) in cases {
        let answer = post(
            &client,
            TOKEN,
            token_request(json!({"expirationSeconds": seconds})),
        )
        .await;
        match expected {
            None => assert_eq!(answer.status, 201, "{seconds}: {}", answer.body),
            Some(fragment) => {
                assert_eq!(answer.status, 422, "{seconds}: {}", answer.body);
                assert_eq!(answer.body["reason"], "Invalid");
                let message = answer.body["message"].as_str().unwrap_or_default();
                assert!(message.contains(fragment), "{seconds}: {message}");
            }
        }
    }
}

#[tokio::test]
async fn a_token_for_a_missing_service_account_is_404() {
    let (_server, client) = server().await;
    let answer = post(&client, TOKEN, token_request(json!({}))).await;
    assert_eq!(answer.status, 404, "{}", answer.body);
    assert_eq!(answer.body["reason"], "NotFound");
    assert_eq!(
        answer.body["message"],
        "serviceaccounts \"openbao-auth\" not found"
    );
}

#[tokio::test]
async fn the_token_subresource_exists_only_on_service_accounts() {
    let (_server, client) = server().await;
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        crate::support::config_map("openbao-auth", json!({})),
    )
    .await;
    let answer = post(
        &client,
        "/api/v1/namespaces/default/configmaps/openbao-auth/token",
        token_request(json!({})),
    )
    .await;
    assert_eq!(answer.status, 404, "{}", answer.body);
}

#[tokio::test]
async fn review_token_accepts_the_servers_tokens_and_refuses_a_forged_one() {
    let (server, client) = server().await;
    service_account(&client).await;
    let answer = post(
        &client,
        TOKEN,
        token_request(json!({"audiences": ["openbao"]})),
    )
    .await;
    let token = answer.body["status"]["token"].as_str().expect("a token");
    let claims = server.review_token(token).expect("its own token");
    assert_eq!(claims["sub"], "system:serviceaccount:default:openbao-auth");
    let (other, other_client) = crate::support::server().await;
    service_account(&other_client).await;
    let foreign = post(&other_client, TOKEN, token_request(json!({}))).await;
    let foreign = foreign.body["status"]["token"].as_str().expect("a token");
    assert_eq!(
        server.review_token(foreign),
        Err(wasm_operator_apiserver::token::TokenError::Signature),
        "another server's key"
    );
    drop(other);
}
