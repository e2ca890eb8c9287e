use serde_json::{Value, json};

use super::DENYLIST;
use crate::admission::tests::{Rows, assert_create_rows, brownfield, create_errors_among, with};

fn options(map: Value) -> Vec<(&'static str, Value)> {
    vec![("/spec/extraOptions", map)]
}

#[test]
fn extra_options_refuse_bad_names_owned_options_and_line_breaks() {
    let rows: Rows<'_> = vec![
        (options(json!({"retry_delay": "2"})), vec![]),
        (
            options(json!({"": "x"})),
            vec!["spec.extraOptions: Invalid value: \"\": option name must not be empty"],
        ),
        (
            options(json!({"vault url": "x"})),
            vec![
                "spec.extraOptions[vault url]: Invalid value: \"vault url\": option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore)",
            ],
        ),
        (
            options(json!({"vault_url": "https://other"})),
            vec![
                "spec.extraOptions[vault_url]: Invalid value: \"https://other\": option \"vault_url\" is owned by the operator (derived from spec.openBao.instanceRef, or spec.openBao.server.url) and must not be set via extraOptions",
            ],
        ),
        (
            options(json!({"global_default": "True"})),
            vec![
                "spec.extraOptions[global_default]: Invalid value: \"True\": option \"global_default\" is owned by spec.isDefault and must not be set via extraOptions",
            ],
        ),
        (
            options(json!({"retry_delay": "2\nvault_url = x"})),
            vec![
                "spec.extraOptions[retry_delay]: Invalid value: \"2\\nvault_url = x\": value must not contain newline or carriage-return characters",
            ],
        ),
    ];
    assert_create_rows(&rows);
}

#[test]
fn every_option_the_operator_renders_is_refused_naming_its_owner() {
    let names: Vec<&str> = DENYLIST.iter().map(|(option, _)| *option).collect();
    assert_eq!(
        names,
        [
            "vault_url",
            "use_ssl",
            "ssl_ca_crt_file",
            "approle_role_id",
            "approle_secret_id",
            "root_token_id",
            "kv_mountpoint",
            "namespace",
            "secret_store_plugin",
            "crypto_plugin",
            "global_default",
        ]
    );
    for (option, owner) in DENYLIST {
        let got = create_errors_among(
            &[],
            with(
                brownfield(),
                &[("/spec/extraOptions", json!({ *option: "v" }))],
            ),
        );
        assert_eq!(
            got,
            [format!(
                "spec.extraOptions[{option}]: Invalid value: \"v\": option {option:?} is owned by {owner} and must not be set via extraOptions"
            )]
        );
    }
}
