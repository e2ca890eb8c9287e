use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use super::*;
use crate::steps::identity_backends::metadata::testing::{Idp, refused};
use crate::testing::{keystone, keystone_with, owned, pass, secret};

const ISSUER: &str = "https://idp.example.com/realms/x";
const METADATA_URL: &str = "https://idp.example.com/realms/x/.well-known/openid-configuration";
const REDIRECT: &str = "http://ks.ns.svc.cluster.local:5000/v3/OS-FEDERATION/redirect_uri";

/// The OIDC backend `kc-oidc` with `oidc` as its block and one mapping rule.
fn backend(oidc: Value) -> IdentityBackend {
    serde_json::from_value(json!({
        "metadata": {"name": "kc-oidc", "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "domain": {"name": "corp"}, "type": "OIDC",
                 "oidc": oidc, "mappings": [{"remote": [{"type": "HTTP_OIDC_EMAIL"}]}]}}))
    .expect("a backend")
}

/// A discovery-mode block.
fn discovery() -> Value {
    json!({"issuer": ISSUER, "clientID": "keystone", "clientSecretRef": {"name": "kc-client"}})
}

/// An explicit-endpoints block.
fn explicit() -> Value {
    let mut o = discovery();
    o["endpoints"] = json!({
        "authorizationEndpoint": "https://idp.example.com/auth",
        "tokenEndpoint": "https://idp.example.com:8443/token",
        "jwksURI": "https://keys.example.com/jwks",
        "userinfoEndpoint": "http://userinfo.example.com/me"});
    o
}

/// The IdP's discovery document.
fn document() -> Value {
    json!({"issuer": ISSUER, "authorization_endpoint": "https://idp.example.com/auth",
           "token_endpoint": "https://idp.example.com:8443/token",
           "jwks_uri": "https://keys.example.com:9443/jwks",
           "introspection_endpoint": "https://idp.example.com/introspect"})
}

/// The client Secret, its value ending in the newline tools leave.
fn cluster() -> FakeCluster {
    FakeCluster::new().with(secret("kc-client", &[("clientSecret", "s3cret\r\n")]))
}

fn idp_serving(doc: &Value) -> Idp {
    Idp::default().answering(METADATA_URL, 200, doc.to_string().as_bytes())
}

fn rendered(cluster: &FakeCluster, idp: &Idp, backend: &IdentityBackend) -> OidcRender {
    let mut pass = pass(cluster, &keystone());
    pass.probe = idp;
    render(&pass, backend).expect("reads").expect("renders")
}

fn fault(cluster: &FakeCluster, idp: &Idp, backend: &IdentityBackend) -> String {
    let mut pass = pass(cluster, &keystone());
    pass.probe = idp;
    render(&pass, backend)
        .expect("a fault is not an error")
        .expect_err("a fault")
        .to_string()
}

#[test]
fn explicit_endpoints_render_every_file_without_a_request() {
    let idp = Idp::default();
    let got = rendered(&cluster(), &idp, &backend(explicit()));
    assert_eq!(
        String::from_utf8(got.provider.clone()).expect("text"),
        "{\n  \"authorization_endpoint\": \"https://idp.example.com/auth\",\n  \
         \"issuer\": \"https://idp.example.com/realms/x\",\n  \
         \"jwks_uri\": \"https://keys.example.com/jwks\",\n  \
         \"token_endpoint\": \"https://idp.example.com:8443/token\",\n  \
         \"userinfo_endpoint\": \"http://userinfo.example.com/me\"\n}"
    );
    assert_eq!(
        got.client,
        br#"{"client_id":"keystone","client_secret":"s3cret"}"#
    );
    assert_eq!(
        got.conf,
        br#"{"response_type":"code","scope":"openid email profile"}"#
    );
    assert_eq!(got.metadata_basename, "idp.example.com%2Frealms%2Fx");
    assert_eq!(
        got.discover_url,
        format!("{REDIRECT}?iss=https%3A%2F%2Fidp.example.com%2Frealms%2Fx")
    );
    assert_eq!(
        (got.idp_name.as_str(), got.protocol_id.as_str()),
        ("kc-oidc", "openid")
    );
    assert_eq!(
        (got.session_type.as_str(), got.state_input_headers.as_str()),
        ("client-cookie", "none")
    );
    assert_eq!(
        got.strip_headers,
        ["OIDC-EMAIL", "OIDC-ISS", "OIDC_EMAIL", "OIDC_ISS"]
    );
    assert_eq!(
        got.egress_ports,
        [443, 8443, 80],
        "issuer, token, jwks, userinfo"
    );
    assert!(got.introspection.is_none());
    assert_eq!(got.stale, None);
    assert_eq!(
        got.size(),
        got.provider.len() + got.client.len() + got.conf.len()
    );
    assert!(idp.asked().is_empty(), "no GET: {:?}", idp.asked());
}

#[test]
fn discovery_takes_the_fetched_document_verbatim_and_dials_its_endpoints() {
    let body = document().to_string();
    let idp = idp_serving(&document());
    let got = rendered(&cluster(), &idp, &backend(discovery()));
    assert_eq!(got.provider, body.as_bytes());
    assert_eq!(idp.asked(), [METADATA_URL]);
    assert_eq!(got.egress_ports, [443, 8443, 9443]);

    let mut named = discovery();
    named["providerMetadataURL"] = json!("http://meta.example.com:8080/oidc");
    let idp = Idp::default().answering("http://meta.example.com:8080/oidc", 200, body.as_bytes());
    let got = rendered(&cluster(), &idp, &backend(named));
    assert_eq!(idp.asked(), ["http://meta.example.com:8080/oidc"]);
    assert_eq!(got.egress_ports, [443, 8080, 8443, 9443]);
}

#[test]
fn the_redirect_uri_follows_the_keystone_endpoint() {
    let gateway = keystone_with(json!({"gateway": {
        "parentRef": {"name": "gw"}, "hostname": "id.example.com"}}));
    let cluster = cluster();
    let idp = Idp::default();
    let mut pass = pass(&cluster, &gateway);
    pass.probe = &idp;
    let got = render(&pass, &backend(explicit()))
        .expect("reads")
        .expect("renders");
    assert_eq!(
        got.discover_url,
        "https://id.example.com/v3/OS-FEDERATION/redirect_uri\
         ?iss=https%3A%2F%2Fidp.example.com%2Frealms%2Fx"
    );
}

#[test]
fn an_unusable_provider_document_is_a_fault_that_never_echoes_the_response() {
    let leaky = json!({"issuer": "https://evil.example.com", "secret": "LEAKED"});
    let big = format!(
        "{{\"issuer\":\"{ISSUER}\",\"pad\":\"{}\"}}",
        "LEAKED".repeat(50_000)
    );
    let unavailable = format!("provider metadata unavailable: fetching {METADATA_URL} failed");
    let cases = [
        (
            "valid: a 200 with the issuer",
            idp_serving(&document()),
            None,
        ),
        (
            "a 500",
            Idp::default().answering(METADATA_URL, 500, b"LEAKED"),
            Some(unavailable.clone()),
        ),
        (
            "a body over 256 KiB",
            Idp::default().answering(METADATA_URL, 200, big.as_bytes()),
            Some(unavailable.clone()),
        ),
        (
            "a body that is not JSON",
            Idp::default().answering(METADATA_URL, 200, b"<html>LEAKED</html>"),
            Some(unavailable.clone()),
        ),
        ("no answer", Idp::default(), Some(unavailable.clone())),
        (
            "another issuer",
            idp_serving(&leaky),
            Some(format!(
                "provider metadata unavailable: document issuer does not match spec issuer \
                 \"{ISSUER}\""
            )),
        ),
        (
            "a destination outside the declared egress",
            Idp::default().failing(METADATA_URL, refused(METADATA_URL)),
            Some(format!(
                "provider metadata unavailable: {METADATA_URL} is outside the operator's \
                 declared egress; set spec.oidc.endpoints instead"
            )),
        ),
    ];
    for (case, idp, want) in cases {
        let cluster = cluster();
        let mut pass = pass(&cluster, &keystone());
        pass.probe = &idp;
        let got = render(&pass, &backend(discovery())).expect("a fault is not an error");
        match (got, want) {
            (Ok(_), None) => {}
            (Err(fault), Some(want)) => {
                let message = fault.to_string();
                assert_eq!(message, want, "{case}");
                assert!(
                    !message.contains("LEAKED") && !message.contains("evil"),
                    "{case}"
                );
            }
            (got, want) => panic!("{case}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn a_failed_fetch_reuses_the_last_known_good_document_of_the_same_issuer() {
    let federation_secret = |doc: &Value| {
        let mut s = owned(secret(
            "ks-federation-abcd",
            &[("kc-oidc.provider", &doc.to_string())],
        ));
        s["metadata"]["labels"] = json!({"cobaltcore.c5c3.io/config-base": "ks-federation"});
        s
    };
    let idp = Idp::default().answering(METADATA_URL, 503, b"");
    let cluster = cluster().with(federation_secret(&document()));
    let got = rendered(&cluster, &idp, &backend(discovery()));
    assert_eq!(got.provider, document().to_string().as_bytes());
    assert_eq!(got.egress_ports, [443, 8443, 9443], "the copy's endpoints");
    assert_eq!(
        got.stale.as_deref(),
        Some(
            format!(
                "Identity backend kc-oidc: provider metadata unavailable (provider metadata \
                 unavailable: fetching {METADATA_URL} failed); reusing the last-known-good \
                 discovery document so federation stays up"
            )
            .as_str()
        )
    );
    assert_eq!(metadata::STALE, "FederationMetadataStale");

    let mut foreign = document();
    foreign["issuer"] = json!("https://old-idp.example.com");
    let cluster = self::cluster().with(federation_secret(&foreign));
    assert_eq!(
        fault(&cluster, &idp, &backend(discovery())),
        format!("provider metadata unavailable: fetching {METADATA_URL} failed"),
        "a copy of another issuer is not reused"
    );
}

#[test]
fn a_value_that_would_break_the_apache_config_is_a_fault_naming_its_field() {
    let with = |pointer: &str, value: Value| {
        let mut o = explicit();
        *o.pointer_mut(pointer).expect("a field") = value;
        o
    };
    let mut mapping = backend(explicit());
    mapping.spec.mappings[0].remote[0].type_ = "HTTP_OIDC\nX".to_owned();
    let cases = [
        ("valid", backend(explicit()), None),
        (
            "a newline in the client id",
            backend(with("/clientID", json!("key\nstone"))),
            Some("spec.oidc.clientID"),
        ),
        (
            "a carriage return in the issuer",
            backend(with("/issuer", json!("https://idp\r"))),
            Some("spec.oidc.issuer"),
        ),
        (
            "a double quote in an explicit endpoint",
            backend(with("/endpoints/tokenEndpoint", json!("https://t\""))),
            Some("spec.oidc.endpoints.tokenEndpoint"),
        ),
        (
            "a double quote in the second scope",
            backend({
                let mut o = explicit();
                o["scopes"] = json!(["openid", "email\"x"]);
                o
            }),
            Some("spec.oidc.scopes[1]"),
        ),
        (
            "a newline in a mapping's remote type",
            mapping,
            Some("spec.mappings[0].remote[0].type"),
        ),
    ];
    for (case, backend, field) in cases {
        let got = {
            let cluster = cluster();
            let idp = Idp::default();
            let mut pass = pass(&cluster, &keystone());
            pass.probe = &idp;
            render(&pass, &backend)
                .expect("a fault is not an error")
                .map(|_| ())
                .map_err(|f| f.to_string())
        };
        let want = field
            .map(|f| format!("{f} contains a newline, carriage-return or double-quote character"));
        assert_eq!(got.err(), want, "{case}");
    }
}

#[test]
fn a_missing_client_secret_skips_the_backend_and_a_failed_read_fails_the_pass() {
    let idp = Idp::default();
    let cases = [
        (
            "no client Secret",
            FakeCluster::new(),
            "getting Secret ns/kc-client: not found",
        ),
        (
            "a client Secret without clientSecret",
            FakeCluster::new().with(secret("kc-client", &[("other", "x")])),
            "key not found in Secret: key \"clientSecret\" in Secret ns/kc-client",
        ),
    ];
    for (case, cluster, want) in cases {
        assert_eq!(fault(&cluster, &idp, &backend(explicit())), want, "{case}");
    }
    let no_block = backend(Value::Null);
    assert_eq!(
        fault(&cluster(), &idp, &no_block),
        "backend has type \"OIDC\" but no oidc block"
    );
    let down = cluster().failing(Op::Get, "kc-client", ApiError::Unavailable("down".into()));
    let mut pass = pass(&down, &keystone());
    pass.probe = &idp;
    let err = render(&pass, &backend(explicit())).expect_err("fails");
    assert_eq!(
        err.to_string(),
        "rendering the federation config of backend kc-oidc: getting Secret ns/kc-client: \
         unavailable: down"
    );
}

#[test]
fn introspection_needs_an_https_endpoint() {
    let explicit_with = |endpoint: &str, tls_verify: Value| {
        let mut o = explicit();
        o["endpoints"]["introspectionEndpoint"] = json!(endpoint);
        o["oauth2Introspection"] = json!({"enabled": true, "tlsVerify": tls_verify});
        o
    };
    let mut discovered = discovery();
    discovered["oauth2Introspection"] = json!({"enabled": true});
    let mut plain = document();
    plain["introspection_endpoint"] = json!("http://idp.example.com/introspect");
    let mut none = document();
    none.as_object_mut()
        .map(|d| d.remove("introspection_endpoint"));
    let not_https = "provider metadata unavailable: introspection endpoint \
                     \"http://idp.example.com/introspect\" is not https (mod_auth_openidc \
                     rejects http introspection endpoints)";
    let cases = [
        (
            "valid: an explicit https endpoint without TLS verification",
            explicit_with("https://idp.example.com/introspect", json!(false)),
            document(),
            Ok(false),
        ),
        (
            "an explicit http endpoint",
            explicit_with("http://idp.example.com/introspect", Value::Null),
            document(),
            Err(not_https.to_owned()),
        ),
        (
            "a discovered http endpoint",
            discovered.clone(),
            plain,
            Err(not_https.to_owned()),
        ),
        (
            "a document without one",
            discovered.clone(),
            none,
            Err(
                "provider metadata unavailable: oauth2Introspection is enabled but the \
                 provider metadata carries no introspection_endpoint"
                    .to_owned(),
            ),
        ),
        (
            "a discovered https endpoint",
            discovered,
            document(),
            Ok(true),
        ),
    ];
    for (case, oidc, doc, want) in cases {
        let cluster = cluster();
        let idp = idp_serving(&doc);
        let mut pass = pass(&cluster, &keystone());
        pass.probe = &idp;
        let got = render(&pass, &backend(oidc)).expect("a fault is not an error");
        let got = got.map_err(|f| f.to_string()).map(|r| {
            let i = r.introspection.expect("introspection on");
            assert_eq!(i.endpoint, "https://idp.example.com/introspect", "{case}");
            assert_eq!(
                (i.client_id.as_str(), i.client_secret.as_str()),
                ("keystone", "s3cret"),
                "{case}"
            );
            i.tls_verify
        });
        assert_eq!(got, want, "{case}");
    }
}
