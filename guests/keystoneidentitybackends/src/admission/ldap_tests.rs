use serde_json::{Value, json};

use super::DENYLIST;
use crate::admission::tests::{
    Rows, assert_create_rows, assert_create_table, create_errors_among, ldap, with,
};

#[test]
fn the_ldap_block_refuses_a_foreign_scheme_line_breaks_and_data_keys() {
    assert_create_table(
        ldap,
        &[
            (&[], &[]),
            (
                &[("/spec/ldap/url", json!("https://ldap.example.com"))],
                &[
                    "spec.ldap.url: Invalid value: \"https://ldap.example.com\": url must use the ldap:// or ldaps:// scheme",
                ],
            ),
            (
                &[(
                    "/spec/ldap/suffix",
                    json!("dc=example\nuser_allow_create = true"),
                )],
                &[
                    "spec.ldap.suffix: Invalid value: \"dc=example\\nuser_allow_create = true\": value must not contain newline or carriage-return characters",
                ],
            ),
            (
                &[("/spec/ldap/users/filter", json!("(x=1)\r"))],
                &[
                    "spec.ldap.users.filter: Invalid value: \"(x=1)\\r\": value must not contain newline or carriage-return characters",
                ],
            ),
            (
                &[("/spec/ldap/groups/memberAttribute", json!("member\n"))],
                &[
                    "spec.ldap.groups.memberAttribute: Invalid value: \"member\\n\": value must not contain newline or carriage-return characters",
                ],
            ),
            (
                &[("/spec/ldap/bindCredentialsSecretRef/key", json!("dn"))],
                &[
                    "spec.ldap.bindCredentialsSecretRef.key: Invalid value: \"dn\": key must be empty: the bind Secret's data keys are fixed (\"username\" and \"password\")",
                ],
            ),
            (
                &[("/spec/ldap/tls/caBundleSecretRef/key", json!("ca.pem"))],
                &[
                    "spec.ldap.tls.caBundleSecretRef.key: Invalid value: \"ca.pem\": key must be empty: the CA bundle Secret's data key is fixed (\"ca.crt\")",
                ],
            ),
        ],
    );
}

#[test]
fn extra_options_refuse_bad_names_owned_options_write_options_and_line_breaks() {
    let options = |map: Value| -> Vec<(&'static str, Value)> { vec![("/spec/extraOptions", map)] };
    let rows: Rows<'_> = vec![
        (
            options(json!({"page_size": "100", "user_enabled_attribute": "enabled"})),
            vec![],
        ),
        (
            options(json!({"": "x"})),
            vec!["spec.extraOptions: Invalid value: \"\": option name must not be empty"],
        ),
        (
            options(json!({"user_allow_create ": "true"})),
            vec![
                "spec.extraOptions[user_allow_create ]: Invalid value: \"user_allow_create \": option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore)",
            ],
        ),
        (
            options(json!({"url": "ldap://other"})),
            vec![
                "spec.extraOptions[url]: Invalid value: \"ldap://other\": option \"url\" is owned by spec.ldap.url and must not be set via extraOptions",
            ],
        ),
        (
            options(json!({"driver": "sql"})),
            vec![
                "spec.extraOptions[driver]: Invalid value: \"sql\": option \"driver\" is owned by the operator (identity driver wiring) and must not be set via extraOptions",
            ],
        ),
        (
            options(json!({"group_allow_delete": "true"})),
            vec![
                "spec.extraOptions[group_allow_delete]: Invalid value: \"true\": option \"group_allow_delete\" conflicts with readOnly: true (the default), which forces it to false",
            ],
        ),
        (
            options(json!({"page_size": "100\nurl = ldap://evil"})),
            vec![
                "spec.extraOptions[page_size]: Invalid value: \"100\\nurl = ldap://evil\": value must not contain newline or carriage-return characters",
            ],
        ),
    ];
    assert_create_rows(ldap, &rows);
}

#[test]
fn write_options_pass_once_read_only_is_switched_off() {
    // readOnly unset counts as true; false lets the write options through.
    let object = |read_only: Value| {
        with(
            ldap(),
            &[
                ("/spec/ldap/readOnly", read_only),
                ("/spec/extraOptions", json!({"user_allow_update": "true"})),
            ],
        )
    };
    let refused = "spec.extraOptions[user_allow_update]: Invalid value: \"true\": option \"user_allow_update\" conflicts with readOnly: true (the default), which forces it to false";
    // (readOnly, errors)
    let table = [
        (json!(false), vec![]),
        (Value::Null, vec![refused]),
        (json!(true), vec![refused]),
    ];
    for (read_only, expected) in table {
        assert_eq!(
            create_errors_among(&[], object(read_only.clone())),
            expected,
            "{read_only}"
        );
    }
}

#[test]
fn every_option_a_typed_field_renders_is_denylisted() {
    let typed = [
        "url",
        "suffix",
        "user",
        "password",
        "tls_cacertfile",
        "use_pool",
        "pool_size",
        "user_tree_dn",
        "user_filter",
        "user_objectclass",
        "user_id_attribute",
        "user_name_attribute",
        "user_mail_attribute",
        "group_tree_dn",
        "group_filter",
        "group_objectclass",
        "group_id_attribute",
        "group_name_attribute",
        "group_member_attribute",
        "driver",
        "domain_config_dir",
    ];
    let listed: Vec<&str> = DENYLIST.iter().map(|(option, _)| *option).collect();
    assert_eq!(listed, typed);
}
