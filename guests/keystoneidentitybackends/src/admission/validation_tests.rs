use serde_json::json;
use wasm_operator_sdk::admission::Operation;
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::admission::tests::{ldap, request, with};

#[test]
fn every_field_at_fault_is_named_in_one_denial_in_cobaltcore_s_order() {
    let object = with(
        ldap(),
        &[
            ("/spec/extraOptions", json!({"url": "ldap://other"})),
            ("/spec/ldap/bindCredentialsSecretRef/key", json!("dn")),
            ("/spec/domain/name", json!("DEFAULT")),
            ("/spec/groups", json!([{"name": "members"}])),
            ("/spec/keystoneRef/name", json!("")),
        ],
    );
    let validated = validate_object(
        &FakeCluster::new(),
        &request(Operation::Create, object, None),
    );
    let denial = validated.denial.expect("denied");
    assert_eq!(
        denial.message,
        "KeystoneIdentityBackend.keystone.openstack.c5c3.io \"corp\" is invalid: [\
         spec.keystoneRef.name: Required value: keystoneRef.name must be set, \
         spec.groups: Invalid value: \"LDAP\": groups are only supported on federation backends (type OIDC or SAML), \
         spec.domain.name: Invalid value: \"DEFAULT\": the Default domain hosts the SQL-backed service users and the bootstrap admin and must never be backed by an external identity backend, \
         spec.ldap.bindCredentialsSecretRef.key: Invalid value: \"dn\": key must be empty: the bind Secret's data keys are fixed (\"username\" and \"password\"), \
         spec.extraOptions[url]: Invalid value: \"ldap://other\": option \"url\" is owned by spec.ldap.url and must not be set via extraOptions]"
    );
    assert_eq!(denial.fields.len(), 5);
}

#[test]
fn an_object_that_does_not_read_as_a_backend_is_denied_naming_the_cause() {
    // (type, the denial's start; None: admitted)
    let table = [
        (json!("LDAP"), None),
        (
            json!("Kerberos"),
            Some("KeystoneIdentityBackend \"corp\" cannot be read: unknown variant `Kerberos`"),
        ),
    ];
    for (type_, expected) in table {
        let object = with(ldap(), &[("/spec/type", type_.clone())]);
        let validated = validate_object(
            &FakeCluster::new(),
            &request(Operation::Create, object, None),
        );
        let message = validated.denial.map(|d| d.message);
        match expected {
            None => assert_eq!(message, None, "{type_}"),
            Some(prefix) => {
                let message = message.expect("denied");
                assert!(message.starts_with(prefix), "{message}");
            }
        }
    }
}

#[test]
fn a_delete_is_always_allowed() {
    let broken = with(ldap(), &[("/spec/domain/name", json!("default"))]);
    let validated = validate_object(
        &FakeCluster::new(),
        &request(Operation::Delete, broken.clone(), Some(broken)),
    );
    assert_eq!(validated, Validated::default());
}
