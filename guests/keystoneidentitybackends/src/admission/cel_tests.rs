use serde_json::{Value, json};
use wasm_operator_sdk::admission::Operation;
use wasm_operator_sdk::testing::FakeCluster;

use crate::admission::tests::{Rows, Table, assert_create_rows, field_errors, ldap, request, with};
use crate::admission::validate_object;

#[test]
fn an_extra_option_past_its_length_is_refused_as_the_schema_rule_words_it() {
    let long = |n: usize| "x".repeat(n);
    let option = |key: String, value: String| {
        Value::Object(serde_json::Map::from_iter([(key, Value::String(value))]))
    };
    let rows: Rows<'_> = vec![
        (
            vec![("/spec/extraOptions", option(long(256), long(1024)))],
            vec![],
        ),
        (
            vec![("/spec/extraOptions", option(long(257), "1".into()))],
            vec![
                "spec.extraOptions: Invalid value: \"object\": each extraOptions key must be <=256 characters and each value <=1024 characters",
            ],
        ),
        (
            vec![("/spec/extraOptions", option("page_size".into(), long(1025)))],
            vec![
                "spec.extraOptions: Invalid value: \"object\": each extraOptions key must be <=256 characters and each value <=1024 characters",
            ],
        ),
    ];
    assert_create_rows(ldap, &rows);
}

/// The field errors of updating the valid LDAP backend to `changes`.
fn update_errors(changes: &[(&str, Value)]) -> Vec<String> {
    let validated = validate_object(
        &FakeCluster::new(),
        &request(Operation::Update, with(ldap(), changes), Some(ldap())),
    );
    field_errors(&validated)
}

#[test]
fn an_update_keeps_the_keystone_the_type_the_domain_name_and_the_mode() {
    // (changes, errors)
    let table: Table<'_> = &[
        (
            &[
                ("/spec/domain/deletionPolicy", json!("Delete")),
                ("/spec/domain/description", json!("changed")),
            ],
            &[],
        ),
        (
            &[("/spec/keystoneRef/name", json!("other"))],
            &["spec: Invalid value: \"object\": keystoneRef is immutable"],
        ),
        (
            &[
                ("/spec/type", json!("OIDC")),
                ("/spec/ldap", Value::Null),
                ("/spec/extraOptions", Value::Null),
                (
                    "/spec/oidc",
                    crate::admission::tests::oidc()["spec"]["oidc"].clone(),
                ),
            ],
            &["spec: Invalid value: \"object\": type is immutable"],
        ),
        (
            &[("/spec/domain/name", json!("corp2"))],
            &["spec.domain.name: Invalid value: \"string\": domain.name is immutable"],
        ),
        (
            &[("/spec/domain/mode", json!("Adopt"))],
            &["spec.domain.mode: Invalid value: \"string\": domain.mode is immutable"],
        ),
    ];
    for (changes, expected) in table {
        assert_eq!(update_errors(changes), *expected, "{changes:?}");
    }
}

#[test]
fn the_immutables_are_not_checked_on_create() {
    let validated = validate_object(
        &FakeCluster::new(),
        &request(
            Operation::Create,
            with(ldap(), &[("/spec/domain/name", json!("corp2"))]),
            Some(ldap()),
        ),
    );
    assert_eq!(field_errors(&validated), Vec::<String>::new());
}
