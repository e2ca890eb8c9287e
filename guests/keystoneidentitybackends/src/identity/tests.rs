use std::cell::RefCell;

use serde_json::json;
use wasm_operator_sdk::http::{HttpError, Method, Request, Response};

use super::fake::{self, FakeKeystone};
use super::*;

fn client<'t>(transport: &'t dyn Transport, password: &str) -> Client<'t> {
    let credentials = Credentials {
        user: fake::USER.into(),
        password: password.into(),
    };
    Client::new(transport, fake::ENDPOINT, credentials)
}

/// Answers every request with one response, recording the requests.
struct Canned {
    answer: Result<Response, HttpError>,
    sent: RefCell<Vec<Request>>,
}

impl Canned {
    fn new(status: u16, headers: &[(&str, &str)], body: &str) -> Self {
        let headers = headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Self {
            answer: Ok(Response {
                status,
                headers,
                body: body.as_bytes().to_vec(),
                url: String::new(),
            }),
            sent: RefCell::new(Vec::new()),
        }
    }
}

impl Transport for Canned {
    fn send(&self, request: Request) -> Result<Response, HttpError> {
        self.sent.borrow_mut().push(request);
        self.answer.clone()
    }
}

#[test]
fn every_call_first_gets_a_project_scoped_token_for_the_bootstrap_admin() {
    let keystone = FakeKeystone::new();
    let client = client(&keystone, fake::PASSWORD);
    client.domain_by_name("corp").expect("listed");
    client.domain_by_name("corp").expect("listed");
    let sent = keystone.sent();
    let lines: Vec<String> = sent.iter().map(|s| s.line()).collect();
    assert_eq!(
        lines,
        [
            "POST /auth/tokens",
            "GET /domains?name=corp",
            "POST /auth/tokens",
            "GET /domains?name=corp",
        ]
    );
    assert_eq!(
        sent[0].body,
        Some(json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": "admin", "domain": {"name": "Default"}, "password": fake::PASSWORD}}},
            "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}},
        }}))
    );
    assert_eq!(sent[0].token, None);
    // Each call carries the token issued just before it.
    assert_eq!(sent[1].token.as_deref(), Some("token-0001"));
    assert_eq!(sent[3].token.as_deref(), Some("token-0002"));
}

#[test]
fn a_refused_password_is_http_401_of_the_token_call_and_never_shows_the_password() {
    let keystone = FakeKeystone::new();
    let error = client(&keystone, "wrong-horse")
        .domain_by_name("corp")
        .expect_err("refused");
    assert_eq!(error.to_string(), "POST /auth/tokens: HTTP 401");
    assert_eq!(keystone.requests(), ["POST /auth/tokens"]);
    assert!(!format!("{error:?}").contains("wrong-horse"));
}

#[test]
fn failures_name_the_call_and_never_carry_the_response_body() {
    let secret_body = r#"{"domains": "token s3cr3t-value"}"#;
    let token = [("X-Subject-Token", "t")];
    // (case, transport, message)
    let table = [
        (
            "no X-Subject-Token",
            Canned::new(201, &[], "{}"),
            "POST /auth/tokens: the response carries no X-Subject-Token",
        ),
        (
            "a status other than 2xx",
            Canned::new(500, &token, secret_body),
            "POST /auth/tokens: HTTP 500",
        ),
        (
            "a body that does not decode",
            Canned::new(200, &token, secret_body),
            "GET /domains?name=corp: the response does not decode (line 1, column 32)",
        ),
        (
            "no response",
            Canned {
                answer: Err(HttpError::Timeout {
                    url: format!("{}/auth/tokens", fake::ENDPOINT),
                }),
                sent: RefCell::new(Vec::new()),
            },
            "POST /auth/tokens: http://keystone.openstack.svc.cluster.local:5000/v3/auth/tokens: timed out",
        ),
        (
            "the valid row: an answer that decodes",
            Canned::new(200, &token, r#"{"domains": []}"#),
            "",
        ),
    ];
    for (case, transport, message) in table {
        let result = client(&transport, fake::PASSWORD).domain_by_name("corp");
        if message.is_empty() {
            assert_eq!(result, Ok(None), "{case}");
            continue;
        }
        let error = result.expect_err("fails");
        assert_eq!(error.to_string(), message, "{case}");
        assert!(!format!("{error:?}").contains("s3cr3t"), "{case}");
    }
}

#[test]
fn the_token_is_sent_as_x_auth_token_and_bodies_as_json() {
    let transport = Canned::new(
        201,
        &[("x-subject-token", "tok")],
        r#"{"domain": {"id": "d1"}}"#,
    );
    let created = client(&transport, fake::PASSWORD)
        .create_domain("corp", "")
        .expect("created");
    assert_eq!(created.id, "d1");
    let sent = transport.sent.borrow();
    let post = &sent[1];
    assert_eq!(
        (post.method, post.url.as_str()),
        (
            Method::Post,
            "http://keystone.openstack.svc.cluster.local:5000/v3/domains"
        )
    );
    let header = |name: &str| {
        post.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(header("x-auth-token"), Some("tok"));
    assert_eq!(header("content-type"), Some("application/json"));
    let body: serde_json::Value = serde_json::from_slice(&post.body).expect("JSON");
    // No description key for an empty description.
    assert_eq!(body, json!({"domain": {"name": "corp", "enabled": true}}));
}

#[test]
fn names_are_percent_encoded_in_paths_and_queries() {
    assert_eq!(encode("ops team/x&y=z"), "ops%20team%2Fx%26y%3Dz");
    assert_eq!(encode("a-b.c_d~e"), "a-b.c_d~e");
    let keystone = FakeKeystone::new().with_domain("d 1", "my corp", "", true);
    let client = client(&keystone, fake::PASSWORD);
    let domain = client
        .domain_by_name("my corp")
        .expect("listed")
        .expect("found");
    assert_eq!(domain.id, "d 1");
    client.group_by_name("ops team", "d 1").expect("listed");
    assert_eq!(
        keystone.calls(),
        [
            "GET /domains?name=my%20corp",
            "GET /groups?name=ops%20team&domain_id=d%201",
        ]
    );
}

#[test]
fn a_missing_object_or_an_empty_list_reads_as_absent() {
    let keystone = FakeKeystone::new();
    let client = client(&keystone, fake::PASSWORD);
    assert_eq!(client.domain_by_name("corp"), Ok(None));
    assert_eq!(client.identity_provider("corp"), Ok(None));
    assert_eq!(client.mapping("corp-mapping"), Ok(None));
    assert_eq!(client.role_by_name("member"), Ok(None));
    assert_eq!(client.project_by_name("p", "d"), Ok(None));
    // A protocol of a missing identity provider is as absent.
    assert_eq!(client.protocol("corp", "openid"), Ok(None));
    // Deleting what is not there is an HTTP 404 the caller can tell apart.
    let error = client.delete_mapping("corp-mapping").expect_err("404");
    assert!(error.is_not_found(), "{error}");
}

#[test]
fn keystone_refuses_deleting_an_enabled_domain_so_it_is_disabled_first() {
    let keystone = FakeKeystone::new().with_domain("d1", "corp", "", true);
    let client = client(&keystone, fake::PASSWORD);
    let refused = client.delete_domain("d1").expect_err("enabled");
    assert_eq!(refused.to_string(), "DELETE /domains/d1: HTTP 403");
    let disable = domains::DomainPatch {
        enabled: Some(false),
        description: None,
    };
    client.update_domain("d1", &disable).expect("disabled");
    client.delete_domain("d1").expect("deleted");
    assert_eq!(keystone.domain("corp"), None);
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
fn outside_the_wasm_host_the_egress_has_no_network() {
    let error = Egress
        .send(Request::get(format!("{}/domains", fake::ENDPOINT)))
        .expect_err("no host");
    assert!(matches!(error, HttpError::Unavailable { .. }), "{error}");
}
