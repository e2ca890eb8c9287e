use serde_json::{Value, json};

use super::DENYLIST;
use crate::admission::tests::{Rows, assert_create_rows, create_errors_among, s3, with};

fn options(map: Value) -> Vec<(&'static str, Value)> {
    vec![("/spec/extraOptions", map)]
}

#[test]
fn extra_options_refuse_bad_names_owned_options_and_line_breaks() {
    let rows: Rows<'_> = vec![
        (options(json!({"s3_store_thread_pools": "10"})), vec![]),
        (
            options(json!({"": "x"})),
            vec!["spec.extraOptions: Invalid value: \"\": option name must not be empty"],
        ),
        (
            options(json!({"s3 store": "x"})),
            vec![
                "spec.extraOptions[s3 store]: Invalid value: \"s3 store\": option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore)",
            ],
        ),
        (
            options(json!({"s3_store_host ": "x"})),
            vec![
                "spec.extraOptions[s3_store_host ]: Invalid value: \"s3_store_host \": option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore)",
            ],
        ),
        (
            options(json!({"key\nx": "x"})),
            vec![
                "spec.extraOptions[key\nx]: Invalid value: \"key\\nx\": option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore)",
            ],
        ),
        (
            options(json!({"s3_store_host": "https://other"})),
            vec![
                "spec.extraOptions[s3_store_host]: Invalid value: \"https://other\": option \"s3_store_host\" is owned by spec.s3.host and must not be set via extraOptions",
            ],
        ),
        (
            options(json!({"store_description": "Images"})),
            vec![
                "spec.extraOptions[store_description]: Invalid value: \"Images\": option \"store_description\" is owned by the operator (store section wiring) and must not be set via extraOptions",
            ],
        ),
        (
            options(json!({"s3_store_thread_pools": "10\ns3_store_host = x"})),
            vec![
                "spec.extraOptions[s3_store_thread_pools]: Invalid value: \"10\\ns3_store_host = x\": value must not contain newline or carriage-return characters",
            ],
        ),
        (
            options(json!({"s3_store_thread_pools": "10\r"})),
            vec![
                "spec.extraOptions[s3_store_thread_pools]: Invalid value: \"10\\r\": value must not contain newline or carriage-return characters",
            ],
        ),
        (
            options(json!({"b_bad": "1\n", "a_owned": "x", "s3_store_bucket": "y"})),
            vec![
                "spec.extraOptions[b_bad]: Invalid value: \"1\\n\": value must not contain newline or carriage-return characters",
                "spec.extraOptions[s3_store_bucket]: Invalid value: \"y\": option \"s3_store_bucket\" is owned by spec.s3.bucket and must not be set via extraOptions",
            ],
        ),
    ];
    assert_create_rows(&rows);
}

#[test]
fn every_option_a_typed_field_renders_is_refused_naming_its_owner() {
    let expected: &[(&str, &str)] = &[
        ("s3_store_host", "spec.s3.host"),
        ("s3_store_bucket", "spec.s3.bucket"),
        ("s3_store_access_key", "spec.s3.credentialsSecretRef"),
        ("s3_store_secret_key", "spec.s3.credentialsSecretRef"),
        ("s3_store_bucket_url_format", "spec.s3.bucketURLFormat"),
        ("s3_store_region_name", "spec.s3.region"),
        ("s3_store_create_bucket_on_put", "spec.s3.createBucketOnPut"),
        ("s3_store_large_object_size", "spec.s3.largeObjectSize"),
        (
            "s3_store_large_object_chunk_size",
            "spec.s3.largeObjectChunkSize",
        ),
        ("store_description", "the operator (store section wiring)"),
    ];
    assert_eq!(DENYLIST, expected);
    for (option, owner) in DENYLIST {
        let got = create_errors_among(
            &[],
            with(s3(), &[("/spec/extraOptions", json!({ *option: "v" }))]),
        );
        assert_eq!(
            got,
            [format!(
                "spec.extraOptions[{option}]: Invalid value: \"v\": option {option:?} is owned by {owner} and must not be set via extraOptions"
            )]
        );
    }
}
