use wasm_operator_sdk::http::Method;

use super::fake::FakeOpenBao;
use super::*;

const URL: &str = "https://openbao.example.com:8200/";

fn bao() -> FakeOpenBao {
    FakeOpenBao::new()
        .with_mount("barbican")
        .with_approle("barbican", "role-1", 3600)
        .with_secret_id("barbican", "secret-a")
        .granting("barbican", "barbican/data/probe", &["read", "list"])
        .with_kubernetes_role("provisioner", "jwt-1")
}

#[test]
fn an_approle_session_is_sent_as_x_vault_token_with_the_namespace_on_every_call() {
    let bao = bao();
    let client = Client::new(&bao, URL, "tenant-a");
    client
        .login_approle("role-1", "secret-a")
        .expect("accepted");
    let caps = client
        .capabilities_self("barbican/data/probe")
        .expect("read");
    assert_eq!(caps, ["read", "list"]);
    client.revoke_self().expect("revoked");
    let sent = bao.sent();
    assert_eq!(
        bao.requests(),
        [
            "POST /v1/auth/approle/login",
            "POST /v1/sys/capabilities-self",
            "POST /v1/auth/token/revoke-self"
        ]
    );
    assert_eq!(
        sent[0].url,
        "https://openbao.example.com:8200/v1/auth/approle/login"
    );
    assert_eq!(
        sent[0].body,
        Some(serde_json::json!({"role_id": "role-1", "secret_id": "secret-a"}))
    );
    assert_eq!(sent[0].token, None);
    assert!(sent[1].token.is_some());
    assert_eq!(sent[1].token, sent[2].token);
    assert_eq!(
        sent[1].body,
        Some(serde_json::json!({"paths": ["barbican/data/probe"]}))
    );
    assert!(
        sent.iter()
            .all(|s| s.namespace.as_deref() == Some("tenant-a"))
    );
    assert_eq!(bao.live_sessions(), 0);
}

#[test]
fn failed_calls_name_the_operation_and_the_status_and_never_the_credentials() {
    let bao = bao();
    let client = Client::new(&bao, URL, "");
    let rejected = client
        .login_approle("role-1", "wrong-secret")
        .expect_err("rejected");
    assert_eq!(
        rejected.to_string(),
        "logging in to OpenBao with the approle auth method: POST /v1/auth/approle/login: HTTP 400"
    );
    assert!(rejected.is_invalid_credentials());
    assert!(!rejected.is_permission_denied());
    assert!(!rejected.to_string().contains("wrong-secret"));
    // Without a session, a call is denied.
    let denied = client
        .capabilities_self("barbican/data/probe")
        .expect_err("denied");
    assert_eq!(
        denied.to_string(),
        "reading the token capabilities on \"barbican/data/probe\": POST /v1/sys/capabilities-self: HTTP 403"
    );
    assert!(denied.is_permission_denied());
    // A server that does not answer.
    let down = FakeOpenBao::new().unreachable();
    let client = Client::new(&down, URL, "");
    let error = client
        .login_approle("role-1", "secret-a")
        .expect_err("down");
    assert_eq!(
        error.to_string(),
        "logging in to OpenBao with the approle auth method: https://openbao.example.com:8200/v1/auth/approle/login: cannot connect: connection refused"
    );
    assert!(!error.is_invalid_credentials());
}

#[test]
fn the_provisioner_reads_mounts_and_the_role_id_and_mints_secret_ids_with_their_ttl() {
    let bao = bao();
    let client = Client::new(&bao, "https://vault.openstack.svc:8200", "");
    client
        .login_kubernetes("jwt-1", "provisioner")
        .expect("logged in");
    assert!(client.mount_exists("barbican").expect("read"));
    assert!(!client.mount_exists("other").expect("read"));
    assert_eq!(client.read_role_id("barbican").expect("read"), "role-1");
    let missing = client.read_role_id("nope").expect_err("absent");
    assert!(missing.is_not_found());
    assert_eq!(
        missing.to_string(),
        "reading the role ID of AppRole \"nope\": GET /v1/auth/approle/role/nope/role-id: HTTP 404"
    );
    assert_eq!(
        client.generate_secret_id("barbican").expect("minted"),
        ("secret-0001".to_owned(), 3600)
    );
    bao.fail(Method::Get, "/v1/sys/mounts/", 403);
    let denied = client.mount_exists("barbican").expect_err("denied");
    assert!(denied.is_permission_denied());
    // A wrong token for the role is refused with 403.
    let other = Client::new(&bao, "https://vault.openstack.svc:8200", "");
    let refused = other
        .login_kubernetes("jwt-2", "provisioner")
        .expect_err("refused");
    assert!(refused.is_permission_denied());
}

#[test]
fn a_secret_id_without_a_ttl_does_not_expire() {
    let bao = FakeOpenBao::new()
        .with_approle("barbican", "role-1", 0)
        .with_kubernetes_role("provisioner", "jwt-1");
    let client = Client::new(&bao, URL, "");
    client
        .login_kubernetes("jwt-1", "provisioner")
        .expect("logged in");
    let (_, ttl) = client.generate_secret_id("barbican").expect("minted");
    assert_eq!(ttl, 0);
}

#[test]
fn path_segments_are_percent_encoded() {
    assert_eq!(encode("barbican"), "barbican");
    assert_eq!(encode("a/b c"), "a%2Fb%20c");
}
