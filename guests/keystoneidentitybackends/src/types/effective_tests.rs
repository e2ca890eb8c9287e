use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::types::{KeystoneIdentityBackendSpec, OidcBackendSpec, SamlBackendSpec};

fn backend(
    type_: BackendType,
    oidc: Option<OidcBackendSpec>,
    saml: Option<SamlBackendSpec>,
) -> KeystoneIdentityBackend {
    KeystoneIdentityBackend {
        metadata: ObjectMeta {
            name: Some("corp".into()),
            ..ObjectMeta::default()
        },
        spec: KeystoneIdentityBackendSpec {
            type_,
            oidc,
            saml,
            ..KeystoneIdentityBackendSpec::default()
        },
        ..KeystoneIdentityBackend::default()
    }
}

#[test]
fn unset_federation_fields_read_as_their_documented_defaults() {
    let oidc = backend(
        BackendType::Oidc,
        Some(OidcBackendSpec {
            issuer: "https://idp.example.com/realms/x".into(),
            ..OidcBackendSpec::default()
        }),
        None,
    );
    let saml = backend(
        BackendType::Saml,
        None,
        Some(SamlBackendSpec {
            idp_entity_id: "urn:idp".into(),
            ..SamlBackendSpec::default()
        }),
    );
    let ldap = backend(BackendType::Ldap, None, None);
    // (backend, identity provider, protocol, remote id attribute, remote id, mapping)
    let table = [
        (
            &oidc,
            "corp",
            "openid",
            "HTTP_OIDC_ISS",
            "https://idp.example.com/realms/x",
            "corp-mapping",
        ),
        (
            &saml,
            "corp",
            "mapped",
            "HTTP_MELLON_IDP",
            "urn:idp",
            "corp-mapping",
        ),
        (&ldap, "corp", "", "HTTP_OIDC_ISS", "", "corp-mapping"),
    ];
    for (b, idp, protocol, attribute, remote_id, mapping) in table {
        assert_eq!(b.identity_provider_name(), idp, "{:?}", b.spec.type_);
        assert_eq!(b.protocol_id(), protocol, "{:?}", b.spec.type_);
        assert_eq!(b.remote_id_attribute(), attribute, "{:?}", b.spec.type_);
        assert_eq!(b.federation_remote_id(), remote_id, "{:?}", b.spec.type_);
        assert_eq!(b.mapping_id(), mapping, "{:?}", b.spec.type_);
    }
}

#[test]
fn set_federation_fields_win_over_the_defaults() {
    let oidc = backend(
        BackendType::Oidc,
        Some(OidcBackendSpec {
            identity_provider_name: "keycloak".into(),
            protocol_id: "oidc".into(),
            remote_id_attribute: "HTTP_OIDC_ISSUER".into(),
            ..OidcBackendSpec::default()
        }),
        None,
    );
    assert_eq!(
        (
            oidc.identity_provider_name(),
            oidc.protocol_id(),
            oidc.remote_id_attribute()
        ),
        ("keycloak", "oidc", "HTTP_OIDC_ISSUER")
    );
    assert_eq!(oidc.mapping_id(), "keycloak-mapping");
}

#[test]
fn a_federation_backend_without_its_block_still_has_its_type_s_protocol() {
    assert_eq!(
        backend(BackendType::Saml, None, None).protocol_id(),
        "mapped"
    );
    assert_eq!(
        backend(BackendType::Oidc, None, None).protocol_id(),
        "openid"
    );
}

#[test]
fn the_oidc_metadata_url_is_derived_from_the_issuer_only_without_endpoints() {
    let spec = |issuer: &str, url: &str, endpoints: bool| OidcBackendSpec {
        issuer: issuer.into(),
        provider_metadata_url: url.into(),
        endpoints: endpoints.then(Default::default),
        ..OidcBackendSpec::default()
    };
    // (spec, effective metadata URL)
    let table = [
        (
            spec("https://idp/realms/x", "", false),
            Some("https://idp/realms/x/.well-known/openid-configuration"),
        ),
        (
            spec("https://idp/realms/x/", "", false),
            Some("https://idp/realms/x/.well-known/openid-configuration"),
        ),
        (
            spec("https://idp/realms/x", "https://idp/meta", false),
            Some("https://idp/meta"),
        ),
        (spec("https://idp/realms/x", "", true), None),
        (spec("", "", false), None),
    ];
    for (spec, expected) in table {
        assert_eq!(
            spec.effective_provider_metadata_url().as_deref(),
            expected,
            "{spec:?}"
        );
    }
}

#[test]
fn unset_oidc_knobs_read_as_their_defaults() {
    let unset = OidcBackendSpec::default();
    assert_eq!(unset.effective_scopes(), ["openid", "email", "profile"]);
    assert_eq!(unset.effective_response_type(), "code");
    assert!(!unset.introspection_enabled());
    let set = OidcBackendSpec {
        scopes: vec!["openid".into()],
        response_type: "id_token".into(),
        oauth2_introspection: Some(crate::types::OidcIntrospectionSpec {
            enabled: true,
            tls_verify: None,
        }),
        ..OidcBackendSpec::default()
    };
    assert_eq!(set.effective_scopes(), ["openid"]);
    assert_eq!(set.effective_response_type(), "id_token");
    assert!(set.introspection_enabled());
    assert!(
        set.oauth2_introspection
            .as_ref()
            .is_some_and(|i| i.tls_verify())
    );
}

#[test]
fn an_ldap_backend_is_read_only_unless_it_opts_out() {
    use crate::types::LdapBackendSpec;
    // (readOnly, effective)
    let table = [(None, true), (Some(true), true), (Some(false), false)];
    for (read_only, expected) in table {
        let ldap = LdapBackendSpec {
            read_only,
            ..LdapBackendSpec::default()
        };
        assert_eq!(ldap.read_only(), expected, "{read_only:?}");
    }
}
