use serde_json::{Value, json};
use wasm_operator_sdk::admission::Operation;

use super::*;
use crate::admission::tests::{backend, ldap, oidc, request, saml, with};

/// The spec defaulting leaves `object` with.
fn defaulted(object: Value) -> Value {
    default_object(&request(Operation::Create, object, None))
        .expect("defaulted")
        .object["spec"]
        .clone()
}

#[test]
fn an_unset_field_takes_its_documented_default() {
    let ldap_minimal = with(
        ldap(),
        &[
            ("/spec/domain", json!({"name": "corp"})),
            ("/spec/ldap/readOnly", Value::Null),
        ],
    );
    let oidc_minimal = with(
        oidc(),
        &[(
            "/spec/oidc",
            json!({"issuer": "https://idp.example.com/realms/cloud/",
                                "clientID": "keystone", "clientSecretRef": {"name": "sso-client"}}),
        )],
    );
    let saml_minimal = with(
        saml(),
        &[(
            "/spec/saml",
            json!({"idpEntityID": "urn:idp",
                                "idpMetadata": {"url": "https://idp/metadata"}}),
        )],
    );
    // (object, pointer under spec, the default)
    let table = [
        (&ldap_minimal, "/domain/mode", json!("Manage")),
        (&ldap_minimal, "/domain/deletionPolicy", json!("Retain")),
        (&ldap_minimal, "/ldap/readOnly", json!(true)),
        (&oidc_minimal, "/oidc/protocolID", json!("openid")),
        (&oidc_minimal, "/oidc/identityProviderName", json!("sso")),
        (
            &oidc_minimal,
            "/oidc/remoteIDAttribute",
            json!("HTTP_OIDC_ISS"),
        ),
        (
            &oidc_minimal,
            "/oidc/scopes",
            json!(["openid", "email", "profile"]),
        ),
        (&oidc_minimal, "/oidc/responseType", json!("code")),
        (&oidc_minimal, "/oidc/sessionType", json!("client-cookie")),
        (&oidc_minimal, "/oidc/stateInputHeaders", json!("none")),
        (
            &oidc_minimal,
            "/oidc/providerMetadataURL",
            json!("https://idp.example.com/realms/cloud/.well-known/openid-configuration"),
        ),
        (&saml_minimal, "/saml/protocolID", json!("mapped")),
        (&saml_minimal, "/saml/identityProviderName", json!("saml")),
        (
            &saml_minimal,
            "/saml/remoteIDAttribute",
            json!("HTTP_MELLON_IDP"),
        ),
    ];
    for (object, pointer, expected) in table {
        let spec = defaulted(object.clone());
        assert_eq!(spec.pointer(pointer), Some(&expected), "{pointer}");
    }
}

#[test]
fn a_set_field_is_never_changed() {
    let object = with(
        oidc(),
        &[
            ("/spec/domain/mode", json!("Adopt")),
            ("/spec/domain/deletionPolicy", json!("Delete")),
            ("/spec/oidc/protocolID", json!("oidc")),
            ("/spec/oidc/identityProviderName", json!("keycloak")),
            ("/spec/oidc/scopes", json!(["openid"])),
            ("/spec/oidc/sessionType", json!("client-cookie-persistent")),
            ("/spec/oidc/providerMetadataURL", json!("https://idp/meta")),
        ],
    );
    let spec = defaulted(object.clone());
    assert_eq!(spec, object["spec"]);
}

#[test]
fn the_metadata_url_is_not_derived_with_explicit_endpoints() {
    let object = with(
        oidc(),
        &[
            ("/spec/oidc/providerMetadataURL", Value::Null),
            (
                "/spec/oidc/endpoints",
                json!({"authorizationEndpoint": "https://idp/auth",
                "tokenEndpoint": "https://idp/token", "jwksURI": "https://idp/jwks"}),
            ),
        ],
    );
    let spec = defaulted(object);
    assert_eq!(spec["oidc"].get("providerMetadataURL"), None);
}

#[test]
fn a_backend_without_a_name_yet_keeps_its_identity_provider_name_unset() {
    let mut object = with(oidc(), &[("/spec/oidc/identityProviderName", Value::Null)]);
    object["metadata"] = json!({"generateName": "sso-", "namespace": "openstack"});
    let spec = defaulted(object);
    assert_eq!(spec["oidc"].get("identityProviderName"), None);
    assert_eq!(spec["oidc"]["protocolID"], "openid");
}

#[test]
fn only_the_spec_is_written_and_unknown_fields_are_kept() {
    let object = with(
        backend("corp", ldap()["spec"].clone()),
        &[
            ("/metadata/labels", json!({"team": "iam"})),
            ("/spec/futureField", json!("kept")),
            ("/status", json!({"domainID": "abc"})),
        ],
    );
    let defaulted = default_object(&request(Operation::Create, object.clone(), None))
        .expect("defaulted")
        .object;
    assert_eq!(defaulted["metadata"], object["metadata"]);
    assert_eq!(defaulted["status"], object["status"]);
    assert_eq!(defaulted["spec"]["futureField"], "kept");
}
