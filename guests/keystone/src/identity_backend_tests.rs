use serde_json::{Value, json};

use super::*;

fn backend(spec: Value) -> IdentityBackend {
    serde_json::from_value(json!({"metadata": {"name": "corp"}, "spec": spec})).expect("a backend")
}

#[test]
fn effective_federation_values_default_per_type() {
    let cases = [
        (
            "an OIDC block naming nothing",
            json!({"type": "OIDC", "oidc": {"issuer": "https://idp/"}}),
            ("corp", "openid", "HTTP_OIDC_ISS"),
        ),
        (
            "an OIDC block naming everything",
            json!({"type": "OIDC", "oidc": {"identityProviderName": "kc",
                "protocolID": "oidc", "remoteIDAttribute": "HTTP_OIDC_X"}}),
            ("kc", "oidc", "HTTP_OIDC_X"),
        ),
        (
            "a SAML block naming nothing",
            json!({"type": "SAML", "saml": {"idpEntityID": "urn:idp"}}),
            ("corp", "mapped", "HTTP_MELLON_IDP"),
        ),
        (
            "a SAML block naming everything",
            json!({"type": "SAML", "saml": {"identityProviderName": "adfs",
                "protocolID": "saml2", "remoteIDAttribute": "HTTP_MELLON_X"}}),
            ("adfs", "saml2", "HTTP_MELLON_X"),
        ),
        (
            "an OIDC type without its block",
            json!({"type": "OIDC"}),
            ("corp", "openid", "HTTP_OIDC_ISS"),
        ),
        (
            "an LDAP backend",
            json!({"type": "LDAP"}),
            ("corp", "", "HTTP_OIDC_ISS"),
        ),
    ];
    for (case, spec, want) in cases {
        let b = backend(spec);
        let got = (
            b.identity_provider_name(),
            b.protocol_id(),
            b.remote_id_attribute(),
        );
        assert_eq!(got, want, "{case}");
    }
}

#[test]
fn oidc_settings_default_as_documented() {
    let b = backend(json!({"type": "OIDC", "oidc": {"issuer": "https://idp.example/realms/x/"}}));
    let o = b.spec.oidc.as_ref().expect("an oidc block");
    assert_eq!(
        o.metadata_url(),
        "https://idp.example/realms/x/.well-known/openid-configuration"
    );
    assert_eq!(o.scopes(), ["openid", "email", "profile"]);
    assert_eq!(
        (o.response_type(), o.session_type(), o.state_input_headers()),
        ("code", "client-cookie", "none")
    );
    assert!(!o.introspection());

    let b = backend(json!({"type": "OIDC", "oidc": {
        "issuer": "https://idp", "providerMetadataURL": "https://meta/doc",
        "scopes": ["openid"], "responseType": "id_token",
        "sessionType": "client-cookie-persistent", "stateInputHeaders": "both",
        "oauth2Introspection": {"enabled": true}},
        "mappings": [{"remote": [{"type": "HTTP_OIDC_EMAIL"}, {"type": "HTTP_OIDC_SUB"}]},
                     {"remote": [{"type": "HTTP_OIDC_GROUPS"}]}]}));
    let o = b.spec.oidc.as_ref().expect("an oidc block");
    assert_eq!(o.metadata_url(), "https://meta/doc");
    assert_eq!(o.scopes(), ["openid"]);
    assert_eq!(
        (o.response_type(), o.session_type(), o.state_input_headers()),
        ("id_token", "client-cookie-persistent", "both")
    );
    assert!(o.introspection());
    assert_eq!(
        b.mapping_remote_types().collect::<Vec<_>>(),
        ["HTTP_OIDC_EMAIL", "HTTP_OIDC_SUB", "HTTP_OIDC_GROUPS"]
    );
}
