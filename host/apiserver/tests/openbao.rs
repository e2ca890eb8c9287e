//! The OpenBao actor: AppRole and Kubernetes auth, `sys/capabilities-self`, the mount
//! check, KV v2, the ACL and the sealed toggle, as BarbicanSecretStore's controller and
//! Barbican's vault plugin call them (the shared, brownfield stand-in); [`managed`]: the
//! managed mode's OpenBaoClusters.

mod managed;

use serde_json::{Value, json};
use wasm_operator_apiserver::{Actor, ApiServer, OpenBaoStandIn, ServerConfig};

use crate::support::http::{Answer, send_trusting, try_send};
use crate::support::post;

const POLICY: &str = r#"
path "barbican/data/*" { capabilities = ["create", "read", "update", "delete", "list"] }
path "barbican/metadata/*" { capabilities = ["read", "list", "delete"] }
"#;

async fn server() -> (ApiServer, kube::Client, OpenBaoStandIn) {
    let server = ApiServer::start(ServerConfig {
        actors: vec![Actor::OpenBao],
        ..ServerConfig::default()
    })
    .await
    .expect("the server starts with the OpenBao actor");
    let client = server.client().expect("a client");
    let bao = server.openbao().expect("the stand-in runs");
    (server, client, bao)
}

async fn bao(
    stand_in: &OpenBaoStandIn,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Answer {
    let headers: Vec<(&str, &str)> = token.map(|t| ("X-Vault-Token", t)).into_iter().collect();
    send_trusting(
        &stand_in.ca_pem(),
        method,
        &format!("{}/v1/{path}", stand_in.url()),
        &headers,
        body.as_ref(),
    )
    .await
}

/// A store's credentials as the managed flow mints them: role-id and a fresh secret-id.
async fn approle_credentials(stand_in: &OpenBaoStandIn, ttl: i64) -> (String, String) {
    stand_in
        .set_policy("barbican", POLICY)
        .expect("the policy parses");
    let seeded = stand_in.set_approle("barbican", &["barbican"], ttl);
    let root = stand_in.root_token();
    let role = bao(
        stand_in,
        "GET",
        "auth/approle/role/barbican/role-id",
        Some(&root),
        None,
    )
    .await;
    assert_eq!(role.status, 200, "{:?}", role.body);
    assert_eq!(role.body["data"]["role_id"], seeded.as_str());
    let minted = bao(
        stand_in,
        "PUT",
        "auth/approle/role/barbican/secret-id",
        Some(&root),
        None,
    )
    .await;
    assert_eq!(minted.status, 200, "{:?}", minted.body);
    assert_eq!(minted.body["data"]["secret_id_ttl"], ttl);
    let secret = minted.body["data"]["secret_id"]
        .as_str()
        .expect("a secret_id")
        .to_owned();
    (seeded, secret)
}

async fn login(stand_in: &OpenBaoStandIn, role_id: &str, secret_id: &str) -> Answer {
    bao(
        stand_in,
        "PUT",
        "auth/approle/login",
        None,
        Some(json!({"role_id": role_id, "secret_id": secret_id})),
    )
    .await
}

#[tokio::test]
async fn an_approle_login_with_a_minted_secret_id_answers_a_token_with_the_roles_policies() {
    let (_server, _client, stand_in) = server().await;
    let (role_id, secret_id) = approle_credentials(&stand_in, 600).await;
    let logged_in = login(&stand_in, &role_id, &secret_id).await;
    assert_eq!(logged_in.status, 200, "{:?}", logged_in.body);
    let auth = &logged_in.body["auth"];
    assert_eq!(auth["policies"], json!(["default", "barbican"]));
    assert_eq!(auth["metadata"]["role_name"], "barbican");
    let token = auth["client_token"].as_str().expect("a client_token");
    let capabilities = bao(
        &stand_in,
        "POST",
        "sys/capabilities-self",
        Some(token),
        Some(json!({"paths": ["barbican/data/probe"]})),
    )
    .await;
    assert_eq!(capabilities.status, 200, "{:?}", capabilities.body);
    let all = json!(["create", "delete", "list", "read", "update"]);
    assert_eq!(capabilities.body["data"]["capabilities"], all);
    assert_eq!(capabilities.body["barbican/data/probe"], all);
    let elsewhere = bao(
        &stand_in,
        "POST",
        "sys/capabilities-self",
        Some(token),
        Some(json!({"paths": ["secret/data/probe"]})),
    )
    .await;
    assert_eq!(elsewhere.body["data"]["capabilities"], json!(["deny"]));

    let wrong = login(&stand_in, &role_id, "not-minted").await;
    assert_eq!(wrong.status, 400);
    assert_eq!(wrong.body, json!({"errors": ["invalid role or secret ID"]}));
}

#[tokio::test]
async fn a_secret_id_past_its_ttl_is_refused() {
    let (_server, _client, stand_in) = server().await;
    let (role_id, secret_id) = approle_credentials(&stand_in, 1).await;
    assert_eq!(stand_in.live_secret_ids("barbican"), 1);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(stand_in.live_secret_ids("barbican"), 0);
    let refused = login(&stand_in, &role_id, &secret_id).await;
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.body,
        json!({"errors": ["invalid role or secret ID"]})
    );
}

async fn jwt(client: &kube::Client, account: &str, audience: &str) -> String {
    let created = post(
        client,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}}),
    )
    .await;
    assert!(
        created.status == 201 || created.status == 409,
        "{}",
        created.body
    );
    let answer = post(
        client,
        &format!("/api/v1/namespaces/default/serviceaccounts/{account}/token"),
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"audiences": [audience], "expirationSeconds": 600}}),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    answer.body["status"]["token"]
        .as_str()
        .expect("a token")
        .to_owned()
}

#[tokio::test]
async fn kubernetes_login_takes_a_token_request_jwt_of_a_bound_service_account_only() {
    let (_server, client, stand_in) = server().await;
    stand_in
        .set_policy(
            "provisioner",
            r#"path "auth/approle/role/+/role-id" { capabilities = ["read"] }"#,
        )
        .expect("the policy parses");
    stand_in.set_approle("barbican", &["barbican"], 600);
    stand_in.set_kubernetes_role(
        "provisioner",
        &["openbao-provisioner"],
        &["default"],
        Some("openbao"),
        &["provisioner"],
    );
    let good = jwt(&client, "openbao-provisioner", "openbao").await;
    let other_account = jwt(&client, "someone-else", "openbao").await;
    let other_audience = jwt(&client, "openbao-provisioner", "vault").await;
    let mut tampered = good.clone();
    let last = tampered.pop().expect("a character");
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let login = |role: &'static str, jwt: String| {
        let stand_in = &stand_in;
        async move {
            bao(
                stand_in,
                "PUT",
                "auth/kubernetes/login",
                None,
                Some(json!({"role": role, "jwt": jwt})),
            )
            .await
        }
    };

    let accepted = login("provisioner", good.clone()).await;
    assert_eq!(accepted.status, 200, "{:?}", accepted.body);
    assert_eq!(
        accepted.body["auth"]["metadata"]["service_account_name"],
        "openbao-provisioner"
    );
    let token = accepted.body["auth"]["client_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let role_id = bao(
        &stand_in,
        "GET",
        "auth/approle/role/barbican/role-id",
        Some(&token),
        None,
    )
    .await;
    assert_eq!(
        role_id.status, 200,
        "the provisioner reads the role-id: {:?}",
        role_id.body
    );

    for (role, jwt, status, error) in [
        (
            "provisioner",
            other_account,
            403,
            "service account name not authorized",
        ),
        (
            "provisioner",
            other_audience,
            403,
            "invalid audience (aud) claim",
        ),
        ("provisioner", tampered, 403, "permission denied"),
        ("nobody", good, 400, "invalid role name \"nobody\""),
    ] {
        let refused = login(role, jwt).await;
        assert_eq!(refused.status, status, "{role}: {:?}", refused.body);
        let message = refused.body["errors"][0].as_str().expect("an error");
        assert!(message.contains(error), "{message:?} should name {error:?}");
    }
}

#[tokio::test]
async fn kv_v2_reads_and_writes_as_barbicans_backend_does() {
    let (_server, _client, stand_in) = server().await;
    stand_in.enable_kv("barbican");
    let (role_id, secret_id) = approle_credentials(&stand_in, 0).await;
    let logged_in = login(&stand_in, &role_id, &secret_id).await;
    let token = logged_in.body["auth"]["client_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let t = Some(token.as_str());
    let written = bao(
        &stand_in,
        "PUT",
        "barbican/data/secrets/abc",
        t,
        Some(json!({"data": {"payload": "c2VjcmV0"}})),
    )
    .await;
    assert_eq!(written.status, 200, "{:?}", written.body);
    assert_eq!(written.body["data"]["version"], 1);
    assert_eq!(
        stand_in.kv_get("barbican", "secrets/abc"),
        Some((1, json!({"payload": "c2VjcmV0"})))
    );
    let read = bao(&stand_in, "GET", "barbican/data/secrets/abc", t, None).await;
    assert_eq!(read.body["data"]["data"]["payload"], "c2VjcmV0");
    assert_eq!(read.body["data"]["metadata"]["version"], 1);
    let stale = bao(
        &stand_in,
        "PUT",
        "barbican/data/secrets/abc",
        t,
        Some(json!({"data": {"x": "y"}, "options": {"cas": 0}})),
    )
    .await;
    assert_eq!(stale.status, 400);
    assert_eq!(
        stale.body,
        json!({"errors": ["check-and-set parameter did not match the current version"]})
    );
    stand_in
        .kv_put("barbican", "secrets/seeded", json!({"payload": "seeded"}))
        .expect("the mount exists");
    let listed = bao(&stand_in, "LIST", "barbican/metadata/secrets", t, None).await;
    assert_eq!(listed.body["data"]["keys"], json!(["abc", "seeded"]));
    let deleted = bao(&stand_in, "DELETE", "barbican/data/secrets/abc", t, None).await;
    assert_eq!(deleted.status, 204);
    let gone = bao(&stand_in, "GET", "barbican/data/secrets/abc", t, None).await;
    assert_eq!((gone.status, gone.body), (404, json!({"errors": []})));
    let metadata = bao(&stand_in, "GET", "barbican/metadata/secrets/abc", t, None).await;
    assert_eq!(metadata.body["data"]["current_version"], 1);
    assert_ne!(metadata.body["data"]["versions"]["1"]["deletion_time"], "");
}

#[tokio::test]
async fn paths_the_tokens_policies_do_not_grant_are_403_permission_denied() {
    let (_server, _client, stand_in) = server().await;
    stand_in.enable_kv("barbican");
    stand_in.enable_kv("secret");
    let (role_id, secret_id) = approle_credentials(&stand_in, 0).await;
    let logged_in = login(&stand_in, &role_id, &secret_id).await;
    let token = logged_in.body["auth"]["client_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let allowed = bao(
        &stand_in,
        "PUT",
        "barbican/data/probe",
        Some(&token),
        Some(json!({"data": {"a": "b"}})),
    )
    .await;
    assert_eq!(allowed.status, 200, "{:?}", allowed.body);
    let denied = json!({"errors": ["1 error occurred:\n\t* permission denied\n\n"]});
    for (path, token) in [
        ("secret/data/probe", Some(token.as_str())),
        ("auth/approle/role/barbican/role-id", Some(token.as_str())),
        ("barbican/data/probe", None),
        ("barbican/data/probe", Some("s.not-issued")),
    ] {
        let answer = bao(&stand_in, "GET", path, token, None).await;
        assert_eq!(
            (answer.status, &answer.body),
            (403, &denied),
            "{path} with {token:?}"
        );
    }
}

#[tokio::test]
async fn the_mount_check_is_404_until_the_kv_engine_is_enabled() {
    let (_server, _client, stand_in) = server().await;
    let root = stand_in.root_token();
    let missing = bao(&stand_in, "GET", "sys/mounts/barbican", Some(&root), None).await;
    assert_eq!((missing.status, missing.body), (404, json!({"errors": []})));
    stand_in.enable_kv("barbican");
    let found = bao(&stand_in, "GET", "sys/mounts/barbican", Some(&root), None).await;
    assert_eq!(found.status, 200);
    assert_eq!(found.body["data"]["type"], "kv");
    assert_eq!(found.body["data"]["options"]["version"], "2");
}

#[tokio::test]
async fn a_sealed_stand_in_answers_503_until_unsealed() {
    let (_server, _client, stand_in) = server().await;
    let root = stand_in.root_token();
    stand_in.enable_kv("barbican");
    stand_in.set_sealed(true);
    let sealed = bao(&stand_in, "GET", "sys/mounts/barbican", Some(&root), None).await;
    assert_eq!(
        (sealed.status, sealed.body),
        (503, json!({"errors": ["Vault is sealed"]}))
    );
    stand_in.set_sealed(false);
    let open = bao(&stand_in, "GET", "sys/mounts/barbican", Some(&root), None).await;
    assert_eq!(open.status, 200);
}

#[tokio::test]
async fn the_stand_in_serves_https_with_a_certificate_its_ca_signed() {
    let (_server, _client, stand_in) = server().await;
    assert!(
        stand_in.url().starts_with("https://127.0.0.1:"),
        "{}",
        stand_in.url()
    );
    let health = format!("{}/v1/sys/health", stand_in.url());
    let untrusted = try_send(None, "GET", &health, &[], None)
        .await
        .expect_err("without the CA the handshake fails");
    assert!(untrusted.contains("UnknownIssuer"), "{untrusted}");
    let trusted = send_trusting(&stand_in.ca_pem(), "GET", &health, &[], None).await;
    assert_eq!(trusted.status, 200, "{:?}", trusted.body);
    assert_eq!(trusted.body["sealed"], false);
}
