use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::admission::Operation;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use crate::admission::tests::{create_errors_among, field_errors, ldap, oidc, request, saml, with};
use crate::admission::validate_object;

/// A stored backend `name` of Keystone `keystone`: `base` renamed, its domain and identity
/// provider named after it, then `changes`.
fn sibling(base: fn() -> Value, name: &str, changes: &[(&str, Value)]) -> Value {
    let mut object = with(
        base(),
        &[
            ("/metadata/name", json!(name)),
            ("/spec/domain/name", json!(name)),
        ],
    );
    for block in ["oidc", "saml"] {
        if object["spec"].get(block).is_some() {
            object["spec"][block]["identityProviderName"] = json!(name);
        }
    }
    with(object, changes)
}

#[test]
fn a_backend_is_refused_what_a_sibling_of_the_same_keystone_already_holds() {
    let introspecting = json!({"enabled": true});
    // (siblings, the backend written, the errors)
    let table: Vec<(Vec<Value>, Value, Vec<&str>)> = vec![
        (
            vec![
                sibling(ldap, "ad", &[]),
                sibling(oidc, "google", &[]),
                sibling(saml, "adfs", &[]),
            ],
            oidc(),
            vec![],
        ),
        (
            vec![sibling(ldap, "ad", &[("/spec/domain/name", json!("SSO"))])],
            oidc(),
            vec![
                "spec.domain.name: Invalid value: \"sso\": domain name collides with KeystoneIdentityBackend \"ad\" attached to the same Keystone \"keystone\" (comparison is case-insensitive)",
            ],
        ),
        (
            vec![sibling(
                saml,
                "adfs",
                &[("/spec/saml/identityProviderName", json!("sso"))],
            )],
            oidc(),
            vec![
                "spec.oidc.identityProviderName: Invalid value: \"sso\": identity provider name collides with KeystoneIdentityBackend \"adfs\" attached to the same Keystone \"keystone\"",
            ],
        ),
        (
            vec![sibling(
                oidc,
                "google",
                &[("/spec/oidc/remoteIDAttribute", json!("HTTP_OIDC_ISSUER"))],
            )],
            oidc(),
            vec![
                "spec.oidc.remoteIDAttribute: Invalid value: \"HTTP_OIDC_ISS\": remoteIDAttribute must be uniform across all OIDC backends of Keystone \"keystone\" (it renders into the single [openid] section); KeystoneIdentityBackend \"google\" uses \"HTTP_OIDC_ISSUER\"",
            ],
        ),
        (
            vec![sibling(
                oidc,
                "google",
                &[("/spec/oidc/oauth2Introspection", introspecting.clone())],
            )],
            with(
                oidc(),
                &[("/spec/oidc/oauth2Introspection", introspecting.clone())],
            ),
            vec![
                "spec.oidc.oauth2Introspection.enabled: Invalid value: true: at most one OIDC backend per Keystone may enable oauth2Introspection (mod_auth_openidc's OIDCOAuth* directives are server-scoped); KeystoneIdentityBackend \"google\" already enables it",
            ],
        ),
        (
            vec![sibling(saml, "adfs", &[])],
            saml(),
            vec![
                "spec.saml: Invalid value: \"SAML\": at most one SAML backend per Keystone \"keystone\" is supported (the mod_auth_mellon SP configuration projects onto a shared /v3 parent Location); KeystoneIdentityBackend \"adfs\" already provides one",
            ],
        ),
    ];
    let valid = table.iter().filter(|(_, _, e)| e.is_empty()).count();
    assert_eq!(valid, 1);
    for (siblings, object, expected) in table {
        assert_eq!(
            create_errors_among(&siblings, object.clone()),
            expected,
            "{object}"
        );
    }
}

#[test]
fn backends_of_another_keystone_or_namespace_deleting_ones_and_itself_do_not_count() {
    let same_domain = |name: &str| sibling(oidc, name, &[("/spec/domain/name", json!("sso"))]);
    let deleting = with(
        same_domain("leaving"),
        &[
            ("/metadata/deletionTimestamp", json!("2026-01-01T00:00:00Z")),
            (
                "/metadata/finalizers",
                json!(["keystone.openstack.c5c3.io/identitybackend"]),
            ),
        ],
    );
    let others = [
        with(
            same_domain("other-keystone"),
            &[("/spec/keystoneRef/name", json!("keystone2"))],
        ),
        with(
            same_domain("elsewhere"),
            &[("/metadata/namespace", json!("tenant"))],
        ),
        deleting,
        // The stored version of the backend itself, on update.
        oidc(),
    ];
    let cluster = others
        .iter()
        .fold(FakeCluster::new(), |c, s| c.with(s.clone()));
    let validated = validate_object(&cluster, &request(Operation::Update, oidc(), Some(oidc())));
    assert_eq!(field_errors(&validated), Vec::<String>::new());
}

#[test]
fn a_backend_without_an_identity_provider_name_collides_by_its_own_name() {
    let unnamed = |object: Value| with(object, &[("/spec/oidc/identityProviderName", Value::Null)]);
    // (sibling, the backend written): one of the two leaves the name to its backend's name.
    let table = [
        (
            sibling(
                oidc,
                "google",
                &[("/spec/oidc/identityProviderName", json!("sso"))],
            ),
            unnamed(oidc()),
            "\"sso\"",
        ),
        (
            unnamed(sibling(oidc, "google", &[])),
            with(
                oidc(),
                &[("/spec/oidc/identityProviderName", json!("google"))],
            ),
            "\"google\"",
        ),
    ];
    for (sibling, mine, name) in table {
        assert_eq!(
            create_errors_among(&[sibling], mine),
            [format!(
                "spec.oidc.identityProviderName: Invalid value: {name}: identity provider name collides with KeystoneIdentityBackend \"google\" attached to the same Keystone \"keystone\""
            )]
        );
    }
}

#[test]
fn a_failed_list_refuses_the_backend_naming_the_cause() {
    let cluster = FakeCluster::new().failing(
        Op::List,
        "KeystoneIdentityBackend",
        ApiError::Unavailable("etcd timeout".into()),
    );
    let validated = validate_object(&cluster, &request(Operation::Create, ldap(), None));
    assert_eq!(
        field_errors(&validated),
        [format!(
            "spec.domain.name: Internal error: listing KeystoneIdentityBackends for the cross-backend checks: {}",
            ApiError::Unavailable("etcd timeout".into())
        )]
    );
}

#[test]
fn a_stored_backend_that_does_not_decode_is_skipped_with_a_warning() {
    let broken = with(
        sibling(ldap, "broken", &[]),
        &[("/spec/type", json!("Kerberos"))],
    );
    let cluster = FakeCluster::new().with(broken);
    let validated = validate_object(&cluster, &request(Operation::Create, ldap(), None));
    assert_eq!(validated.denial, None);
    assert_eq!(validated.warnings.len(), 1);
    assert!(
        validated.warnings[0].starts_with(
            "KeystoneIdentityBackend \"broken\" cannot be read for the cross-backend checks: unknown variant `Kerberos`"
        ),
        "{:?}",
        validated.warnings
    );
}
