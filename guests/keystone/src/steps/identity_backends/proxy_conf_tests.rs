use serde_json::json;

use super::*;
use crate::steps::identity_backends::metadata::testing::{oidc_render, saml_render};
use crate::steps::identity_backends::oidc::Introspection;
use crate::testing::{keystone, keystone_with};

fn no_gateway() -> Keystone {
    serde_json::from_value(keystone()).expect("a Keystone")
}

fn with_gateway() -> Keystone {
    let object = keystone_with(json!({"gateway": {
        "parentRef": {"name": "gw", "namespace": "gateways"}, "hostname": "id.example.com"}}));
    serde_json::from_value(object).expect("a Keystone")
}

const STRIP_COMMENT: &str = "\
# Strip spoofable claim/attribute headers before authentication: the
# modules only scrub them on module-protected paths, and underscore
# spellings normalize to the same WSGI keys (validated by the federation
# spike). mellon attribute headers are stripped in both spellings too.
";

#[test]
fn an_oidc_backend_renders_the_module_directives_its_locations_and_the_global_websso_path() {
    let got = render(
        &no_gateway(),
        &[oidc_render("kc-oidc", "kc", "openid")],
        &[],
        "pw",
    );
    let want = format!(
        "\
# Rendered by the keystone operator — do not edit; changes are overwritten.
OIDCCryptoPassphrase \"pw\"
OIDCMetadataDir /etc/keystone-federation-proxy/metadata
OIDCRedirectURI /v3/OS-FEDERATION/redirect_uri
OIDCClaimPrefix \"OIDC-\"
OIDCSessionType client-cookie
OIDCStateInputHeaders none

{STRIP_COMMENT}\
RequestHeader unset \"OIDC-EMAIL\" early
RequestHeader unset \"OIDC-ISS\" early
RequestHeader unset \"OIDC_EMAIL\" early
RequestHeader unset \"OIDC_ISS\" early

ProxyPreserveHost On
ProxyPass \"/\" \"http://127.0.0.1:5000/\"
ProxyPassReverse \"/\" \"http://127.0.0.1:5000/\"

<Location \"/v3/auth/OS-FEDERATION/identity_providers/kc/protocols/openid/websso\">
    AuthType openid-connect
    Require valid-user
    OIDCDiscoverURL D-kc
</Location>
<Location \"/v3/OS-FEDERATION/identity_providers/kc/protocols/openid/auth\">
    AuthType openid-connect
    Require valid-user
    OIDCDiscoverURL D-kc
</Location>

<Location \"/v3/OS-FEDERATION/redirect_uri\">
    AuthType openid-connect
    Require valid-user
</Location>

<Location \"/v3/auth/OS-FEDERATION/websso/openid\">
    AuthType openid-connect
    Require valid-user
    OIDCDiscoverURL D-kc
</Location>
"
    );
    assert_eq!(got, want);
}

#[test]
fn forwarded_headers_are_honoured_only_behind_a_declared_gateway() {
    let oidc = [oidc_render("kc-oidc", "kc", "openid")];
    let behind = render(&with_gateway(), &oidc, &[], "pw");
    assert!(
        behind.contains(
            "OIDCStateInputHeaders none\n\
             OIDCXForwardedHeaders X-Forwarded-Host X-Forwarded-Proto\n\n"
        ),
        "{behind}"
    );
    let direct = render(&no_gateway(), &oidc, &[], "pw");
    assert!(!direct.contains("OIDCXForwardedHeaders"), "{direct}");
    let saml_only = render(
        &with_gateway(),
        &[],
        &[saml_render("s", "adfs", "mapped")],
        "",
    );
    assert!(!saml_only.contains("OIDC"), "{saml_only}");
}

#[test]
fn a_saml_backend_renders_mellon_its_endpoint_exclusion_and_protected_locations() {
    let got = render(
        &no_gateway(),
        &[],
        &[saml_render("corp-saml", "adfs", "mapped")],
        "",
    );
    let protected = |location: &str| {
        format!(
            "<Location \"{location}\">
    AuthType Mellon
    MellonEnable auth
    Require valid-user
    RequestHeader set \"MELLON-IDP\" \"expr=%{{reqenv:MELLON_IDP}}\"
    RequestHeader set \"MELLON-NAME-ID\" \"expr=%{{reqenv:MELLON_NAME_ID}}\"
</Location>
"
        )
    };
    let endpoint = "/v3/OS-FEDERATION/identity_providers/adfs/protocols/mapped/auth/mellon";
    let want = format!(
        "\
# Rendered by the keystone operator — do not edit; changes are overwritten.
{STRIP_COMMENT}\
RequestHeader unset \"MELLON-IDP\" early
RequestHeader unset \"MELLON-NAME-ID\" early
RequestHeader unset \"MELLON_IDP\" early
RequestHeader unset \"MELLON_NAME_ID\" early

ProxyPreserveHost On
ProxyPass \"{endpoint}\" !
ProxyPass \"/\" \"http://127.0.0.1:5000/\"
ProxyPassReverse \"/\" \"http://127.0.0.1:5000/\"

# mod_auth_mellon SP for identity provider adfs (protocol mapped).
<Location \"/v3\">
    MellonEnable \"info\"
    MellonMergeEnvVars On
    MellonSPPrivateKeyFile /etc/keystone-federation-proxy/mellon/sp-key.pem
    MellonSPCertFile /etc/keystone-federation-proxy/mellon/sp-cert.pem
    MellonSPMetadataFile /etc/keystone-federation-proxy/mellon/sp-metadata.xml
    MellonIdPMetadataFile /etc/keystone-federation-proxy/mellon/corp-saml.idp-metadata.xml
    MellonEndpointPath {endpoint}
    MellonSubjectConfirmationDataAddressCheck Off
</Location>
{}{}
{}",
        protected("/v3/auth/OS-FEDERATION/identity_providers/adfs/protocols/mapped/websso"),
        protected("/v3/OS-FEDERATION/identity_providers/adfs/protocols/mapped/auth"),
        protected("/v3/auth/OS-FEDERATION/websso/mapped"),
    );
    assert_eq!(got, want);
}

#[test]
fn oidc_and_saml_together_merge_their_headers_and_keep_the_order_of_the_blocks() {
    let mut oidc = oidc_render("kc-oidc", "kc", "openid");
    oidc.strip_headers.push("MELLON_IDP".to_owned());
    let got = render(
        &no_gateway(),
        &[oidc],
        &[saml_render("corp-saml", "adfs", "mapped")],
        "pw",
    );
    let position = |needle: &str| {
        got.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} missing from:\n{got}"))
    };
    let order = [
        "OIDCCryptoPassphrase \"pw\"",
        "RequestHeader unset \"MELLON-IDP\" early\nRequestHeader unset \"MELLON-NAME-ID\" early\n\
         RequestHeader unset \"MELLON_IDP\" early\nRequestHeader unset \"MELLON_NAME_ID\" early\n\
         RequestHeader unset \"OIDC-EMAIL\" early\n",
        "ProxyPass \"/v3/OS-FEDERATION/identity_providers/adfs/protocols/mapped/auth/mellon\" !",
        "ProxyPass \"/\" \"http://127.0.0.1:5000/\"",
        "<Location \"/v3/auth/OS-FEDERATION/identity_providers/kc/protocols/openid/websso\">",
        "<Location \"/v3/OS-FEDERATION/redirect_uri\">",
        "# mod_auth_mellon SP for identity provider adfs (protocol mapped).",
        "<Location \"/v3/auth/OS-FEDERATION/websso/openid\">",
        "<Location \"/v3/auth/OS-FEDERATION/websso/mapped\">",
    ];
    let positions: Vec<usize> = order.iter().map(|n| position(n)).collect();
    assert!(positions.is_sorted(), "blocks out of order:\n{got}");
    assert_eq!(got.matches("RequestHeader unset \"MELLON_IDP\"").count(), 1);
}

#[test]
fn a_protocol_id_shared_by_two_backends_gets_no_global_websso_location() {
    let cases = [
        (
            "two OIDC backends over openid",
            vec![
                oidc_render("a", "a", "openid"),
                oidc_render("b", "b", "openid"),
            ],
            vec![],
            vec![],
        ),
        (
            "an OIDC and a SAML backend over mapped",
            vec![oidc_render("a", "a", "mapped")],
            vec![saml_render("s", "s", "mapped")],
            vec![],
        ),
        (
            "valid: one OIDC over openid, one over oidc2",
            vec![
                oidc_render("a", "a", "openid"),
                oidc_render("b", "b", "oidc2"),
            ],
            vec![],
            vec!["openid", "oidc2"],
        ),
    ];
    for (case, oidc, saml, want) in cases {
        let got = render(&no_gateway(), &oidc, &saml, "pw");
        let global: Vec<&str> = got
            .lines()
            .filter_map(|l| l.strip_prefix("<Location \"/v3/auth/OS-FEDERATION/websso/"))
            .map(|l| l.trim_end_matches("\">"))
            .collect();
        assert_eq!(global, want, "{case}");
    }
}

#[test]
fn introspection_adds_the_resource_server_and_accepts_bearer_tokens_on_the_auth_path() {
    let mut oidc = oidc_render("kc-oidc", "kc", "openid");
    oidc.introspection = Some(Introspection {
        endpoint: "https://kc.example.com/introspect".to_owned(),
        client_id: "my client".to_owned(),
        client_secret: "s\"e\\c".to_owned(),
        tls_verify: false,
    });
    let got = render(&no_gateway(), &[oidc.clone()], &[], "pw");
    assert!(
        got.contains(
            "ProxyPassReverse \"/\" \"http://127.0.0.1:5000/\"\n\n\
             # OAuth2 resource server: bearer-token introspection for kc\n\
             OIDCOAuthIntrospectionEndpoint \"https://kc.example.com/introspect\"\n\
             OIDCOAuthClientID \"my client\"\n\
             OIDCOAuthClientSecret \"s\\\"e\\\\c\"\n\
             OIDCOAuthSSLValidateServer Off\n"
        ),
        "{got}"
    );
    assert!(
        got.contains(
            "<Location \"/v3/OS-FEDERATION/identity_providers/kc/protocols/openid/auth\">\n    \
             AuthType auth-openidc\n    Require valid-user\n</Location>\n"
        ),
        "{got}"
    );
    if let Some(i) = oidc.introspection.as_mut() {
        i.tls_verify = true;
    }
    let verified = render(&no_gateway(), &[oidc], &[], "pw");
    assert!(verified.contains("OIDCOAuthClientID"), "{verified}");
    assert!(
        !verified.contains("OIDCOAuthSSLValidateServer"),
        "{verified}"
    );
}

#[test]
fn strip_headers_take_http_names_in_both_spellings_sorted_once() {
    let got = strip_headers([
        "HTTP_OIDC_ISS",
        "REMOTE_USER",
        "HTTP_",
        "HTTP_OIDC_ISS",
        "HTTP_OIDC_EMAIL",
    ]);
    assert_eq!(got, ["OIDC-EMAIL", "OIDC-ISS", "OIDC_EMAIL", "OIDC_ISS"]);
}

#[test]
fn go_quote_escapes_what_go_escapes() {
    let cases = [
        ("plain", "\"plain\""),
        ("a \"b\" c", "\"a \\\"b\\\" c\""),
        ("back\\slash", "\"back\\\\slash\""),
        ("line\nbreak\r\t", "\"line\\nbreak\\r\\t\""),
        ("bell\u{7}nul\u{0}del\u{7f}", "\"bell\\anul\\x00del\\x7f\""),
        ("Grüße", "\"Grüße\""),
    ];
    for (input, want) in cases {
        assert_eq!(go_quote(input), want, "{input:?}");
    }
}
