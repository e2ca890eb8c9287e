use serde_json::{Value, json};

use crate::admission::tests::{assert_create_table, ldap, oidc};

#[test]
fn the_block_type_and_domain_rules_name_the_field_at_fault() {
    assert_create_table(
        ldap,
        &[
            (&[], &[]),
            (
                &[("/spec/keystoneRef/name", json!(""))],
                &["spec.keystoneRef.name: Required value: keystoneRef.name must be set"],
            ),
            (
                &[("/spec/ldap", Value::Null)],
                &[
                    "spec.ldap: Invalid value: \"LDAP\": exactly one backend block matching spec.type must be set (type LDAP requires spec.ldap)",
                ],
            ),
            (
                &[("/spec/oidc", oidc()["spec"]["oidc"].clone())],
                &[
                    "spec.oidc: Invalid value: \"LDAP\": exactly one backend block matching spec.type must be set (type OIDC requires spec.oidc)",
                ],
            ),
            (
                &[(
                    "/spec/saml",
                    json!({"idpEntityID": "urn:idp", "idpMetadata": {"url": "https://idp/m"}}),
                )],
                &[
                    "spec.saml: Invalid value: \"LDAP\": exactly one backend block matching spec.type must be set (type SAML requires spec.saml)",
                ],
            ),
            (
                &[("/spec/mappings", oidc()["spec"]["mappings"].clone())],
                &[
                    "spec.mappings: Invalid value: \"LDAP\": mappings are only supported on federation backends (type OIDC or SAML)",
                ],
            ),
            (
                &[("/spec/groups", json!([{"name": "members"}]))],
                &[
                    "spec.groups: Invalid value: \"LDAP\": groups are only supported on federation backends (type OIDC or SAML)",
                ],
            ),
            (
                &[("/spec/domain/name", json!("Default"))],
                &[
                    "spec.domain.name: Invalid value: \"Default\": the Default domain hosts the SQL-backed service users and the bootstrap admin and must never be backed by an external identity backend",
                ],
            ),
            (
                &[("/spec/domain/name", json!(""))],
                &["spec.domain.name: Required value: domain.name must be set"],
            ),
        ],
    );
}

#[test]
fn extra_options_are_refused_on_a_federation_backend() {
    assert_create_table(
        oidc,
        &[
            (&[], &[]),
            (
                &[("/spec/extraOptions", json!({"page_size": "100"}))],
                &[
                    "spec.extraOptions: Invalid value: \"OIDC\": extraOptions carries [ldap] section options and is only supported on type LDAP",
                ],
            ),
        ],
    );
}
