use serde_json::{Value, json};
use wasm_operator_sdk::admission::Operation;
use wasm_operator_sdk::testing::FakeCluster;

use crate::admission::tests::{Changes, field_errors, keystone, request, with};
use crate::admission::validate_object;

/// The field errors of updating the valid Keystone with `old` changes to one with `new`.
fn update_errors(
    old: &[(&str, Value)],
    new: &[(&str, Value)],
    operation: Operation,
) -> Vec<String> {
    let old = with(keystone(), old);
    let new = with(keystone(), new);
    field_errors(&validate_object(
        &FakeCluster::new(),
        &request(operation, new, Some(old)),
    ))
}

#[test]
fn an_update_may_not_change_what_section_1_4_fixes() {
    let managed = ("/spec/database/clusterRef", json!({"name": "mariadb"}));
    let brownfield: &[(&str, Value)] = &[
        ("/spec/database/clusterRef", Value::Null),
        ("/spec/database/host", json!("db.example")),
    ];
    let target = |name: &str| ("/spec/targetClusterRef", json!({"name": name}));
    let table: &[(Changes<'_>, Changes<'_>, &[&str])] = &[
        (
            &[],
            &[
                ("/spec/deployment/replicas", json!(5)),
                ("/spec/image/tag", json!("2022.2-p1")),
            ],
            &[],
        ),
        (&[target("east")], &[target("east")], &[]),
        (
            &[],
            &[target("east")],
            &["spec: Invalid value: \"object\": targetClusterRef is immutable"],
        ),
        (
            &[target("east")],
            &[],
            &["spec: Invalid value: \"object\": targetClusterRef is immutable"],
        ),
        (
            &[target("east")],
            &[target("west")],
            &["spec: Invalid value: \"object\": targetClusterRef is immutable"],
        ),
        (
            &[],
            &[("/spec/database/database", json!("identity"))],
            &["spec.database: Invalid value: \"object\": database name is immutable"],
        ),
        (
            &[managed],
            brownfield,
            &[
                "spec.database: Invalid value: \"object\": database mode (managed clusterRef vs \
               brownfield host) is immutable",
            ],
        ),
        (
            &[],
            &[("/spec/bootstrap/adminUser", json!("root"))],
            &[
                "spec.bootstrap.adminUser: Invalid value: \"string\": bootstrap.adminUser is immutable",
            ],
        ),
        (
            &[],
            &[("/spec/bootstrap/region", json!("RegionTwo"))],
            &["spec.bootstrap.region: Invalid value: \"string\": bootstrap.region is immutable"],
        ),
        (
            &[("/spec/bootstrap/region", Value::Null)],
            &[("/spec/bootstrap/region", json!("RegionTwo"))],
            &[],
        ),
    ];
    for (old, new, expected) in table {
        assert_eq!(
            update_errors(old, new, Operation::Update),
            *expected,
            "{old:?} -> {new:?}"
        );
    }
}

#[test]
fn a_create_is_not_held_to_an_old_object() {
    let changed = [("/spec/bootstrap/region", json!("RegionTwo"))];
    assert_eq!(
        update_errors(&[], &changed, Operation::Update),
        ["spec.bootstrap.region: Invalid value: \"string\": bootstrap.region is immutable"]
    );
    assert_eq!(
        update_errors(&[], &changed, Operation::Create),
        Vec::<String>::new()
    );
}
