use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::http::HttpError;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use super::testing::{Idp, refused};
use super::*;
use crate::testing::{keystone, owned, pass, secret};

const URL: &str = "https://idp.example.com/.well-known/openid-configuration";

#[test]
fn fetch_takes_a_2xx_body_within_the_budget_and_nothing_else() {
    let big = vec![b'x'; MAX_DOCUMENT_BYTES + 1];
    let exact = vec![b'x'; MAX_DOCUMENT_BYTES];
    let cases = [
        (
            "a 200 with a document",
            Idp::default().answering(URL, 200, b"{}"),
            Ok(b"{}".to_vec()),
        ),
        (
            "a 2xx of exactly the budget",
            Idp::default().answering(URL, 203, &exact),
            Ok(exact.clone()),
        ),
        (
            "a 404",
            Idp::default().answering(URL, 404, b"{}"),
            Err(Fetch::Failed),
        ),
        (
            "a 302 the SDK did not follow",
            Idp::default().answering(URL, 302, b""),
            Err(Fetch::Failed),
        ),
        (
            "one byte over the budget",
            Idp::default().answering(URL, 200, &big),
            Err(Fetch::Failed),
        ),
        (
            "a destination outside the declared egress",
            Idp::default().failing(URL, refused(URL)),
            Err(Fetch::Refused),
        ),
    ];
    for (case, idp, want) in cases {
        assert_eq!(fetch(&idp, URL), want, "{case}");
        assert_eq!(idp.asked(), [URL], "{case}: one GET");
    }
    let timeout = Idp::default().failing(URL, HttpError::Timeout { url: URL.into() });
    assert_eq!(fetch(&timeout, URL), Err(Fetch::Failed), "a timeout");
}

/// A federation Secret of the Keystone `ks` created at `created`, holding `pairs`.
fn federation_secret(name: &str, created: &str, pairs: &[(&str, &str)]) -> Value {
    let mut s = owned(secret(name, pairs));
    s["metadata"]["labels"] = json!({"cobaltcore.c5c3.io/config-base": "ks-federation"});
    s["metadata"]["creationTimestamp"] = json!(created);
    s
}

#[test]
fn the_last_known_good_copy_is_the_newest_federation_secret_of_this_keystone() {
    let mut foreign = federation_secret(
        "ks-federation-ffff",
        "2026-03-01T00:00:00Z",
        &[("kc.provider", "foreign")],
    );
    foreign["metadata"]["ownerReferences"][0]["uid"] = json!("other-uid");
    let mut unlabelled = federation_secret(
        "ks-federation-eeee",
        "2026-03-01T00:00:00Z",
        &[("kc.provider", "unlabelled")],
    );
    unlabelled["metadata"]["labels"] = json!({});
    let cluster = FakeCluster::new()
        .with(federation_secret(
            "ks-federation-aaaa",
            "2026-01-01T00:00:00Z",
            &[("kc.provider", "oldest")],
        ))
        .with(federation_secret(
            "ks-federation-bbbb",
            "2026-02-01T00:00:00Z",
            &[("kc.provider", "tie, earlier name")],
        ))
        .with(federation_secret(
            "ks-federation-cccc",
            "2026-02-01T00:00:00Z",
            &[("kc.provider", "newest"), ("empty.provider", "")],
        ))
        .with(foreign)
        .with(unlabelled);
    let pass = pass(&cluster, &keystone());
    let got = |key: &str| {
        last_known_good(&pass, key)
            .expect("lists")
            .map(|v| String::from_utf8(v).expect("text"))
    };
    assert_eq!(got("kc.provider").as_deref(), Some("newest"));
    assert_eq!(got("other.provider"), None, "a key the newest lacks");
    assert_eq!(got("empty.provider"), None, "an empty value");
}

#[test]
fn without_a_federation_secret_there_is_no_copy() {
    let cluster = FakeCluster::new();
    let pass = pass(&cluster, &keystone());
    assert_eq!(last_known_good(&pass, "kc.provider").expect("lists"), None);
}

#[test]
fn a_failed_list_fails_the_pass_naming_the_secrets() {
    let cluster =
        FakeCluster::new().failing(Op::List, "Secret", ApiError::Unavailable("down".into()));
    let pass = pass(&cluster, &keystone());
    let err = last_known_good(&pass, "kc.provider").expect_err("fails");
    assert_eq!(
        err.to_string(),
        "listing the federation Secrets ns/ks-federation-*: unavailable: down"
    );
}

#[test]
fn url_helpers_follow_mod_auth_openidc_and_go() {
    let basenames = [
        (
            "https://idp.example.com/realms/x/",
            "idp.example.com%2Frealms%2Fx",
        ),
        ("https://idp.example.com:8443", "idp.example.com%3A8443"),
        ("http://a.b/c d~e_f-g.h", "a.b%2Fc%20d~e_f-g.h"),
    ];
    for (issuer, want) in basenames {
        assert_eq!(metadata_basename(issuer), want, "{issuer}");
    }
    assert_eq!(
        query_escape("https://a b/c?d=e&f"),
        "https%3A%2F%2Fa+b%2Fc%3Fd%3De%26f"
    );
    let ports = [
        ("https://idp.example.com/x", 443),
        ("http://idp.example.com/x", 80),
        ("HTTP://idp.example.com", 80),
        ("https://idp.example.com:8443/x", 8443),
        ("https://user@idp.example.com:8443", 8443),
        ("https://[::1]:9443/x", 9443),
        ("https://[::1]/x", 443),
        ("https://idp.example.com:0/x", 443),
        ("https://idp.example.com:99999", 443),
        ("", 443),
    ];
    for (url, want) in ports {
        assert_eq!(egress_port(url), want, "{url:?}");
    }
}
