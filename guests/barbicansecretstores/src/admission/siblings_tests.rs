use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::admission::Operation;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use crate::admission::tests::{brownfield, create_errors_among, field_errors, request, with};
use crate::admission::validate_object;

/// A stored store `name`: the valid one renamed, then `changes`.
fn sibling(name: &str, changes: &[(&str, Value)]) -> Value {
    with(
        with(brownfield(), &[("/metadata/name", json!(name))]),
        changes,
    )
}

/// (siblings stored, changes to the store written, the errors).
type Row<'a> = (Vec<Value>, Vec<(&'a str, Value)>, Vec<&'a str>);

const DEFAULT_TAKEN: &str = "spec.isDefault: Invalid value: true: BarbicanSecretStore \"archive\" attached to the same Barbican \"barbican\" is already marked isDefault; exactly one default store is allowed";
const OPENBAO_TAKEN: &str = "spec.type: Invalid value: \"OpenBao\": BarbicanSecretStore \"archive\" attached to the same Barbican \"barbican\" is already of type OpenBao; the vault plugin's [vault_plugin] options are process-global, so both stores would share one server, one credential, and one mount";

#[test]
fn a_store_is_refused_when_a_sibling_of_the_same_barbican_is_the_default_or_of_type_openbao() {
    let deleting = json!("2026-01-01T00:00:00Z");
    let table: Vec<Row<'_>> = vec![
        (
            vec![
                sibling("other", &[("/spec/barbicanRef/name", json!("barbican2"))]),
                sibling("old", &[("/metadata/deletionTimestamp", deleting)]),
                sibling("elsewhere", &[("/metadata/namespace", json!("other"))]),
            ],
            vec![],
            vec![],
        ),
        (
            vec![sibling("archive", &[("/spec/isDefault", json!(false))])],
            vec![],
            vec![OPENBAO_TAKEN],
        ),
        (
            vec![sibling("archive", &[])],
            vec![],
            vec![DEFAULT_TAKEN, OPENBAO_TAKEN],
        ),
        (
            vec![sibling("archive", &[])],
            vec![("/spec/isDefault", json!(false))],
            vec![OPENBAO_TAKEN],
        ),
    ];
    assert_eq!(table.iter().filter(|(_, _, e)| e.is_empty()).count(), 1);
    for (siblings, changes, expected) in table {
        assert_eq!(
            create_errors_among(&siblings, with(brownfield(), &changes)),
            expected,
            "{changes:?}"
        );
    }
}

#[test]
fn an_update_of_a_store_does_not_collide_with_itself() {
    let cluster = FakeCluster::new().with(brownfield());
    let edited = with(
        brownfield(),
        &[("/spec/openBao/server/url", json!("https://b.example.com"))],
    );
    let validated = validate_object(
        &cluster,
        &request(Operation::Update, edited, Some(brownfield())),
    );
    assert_eq!(field_errors(&validated), Vec::<String>::new());
}

#[test]
fn a_failed_list_refuses_the_store_and_a_sibling_that_does_not_read_is_skipped() {
    let cluster = FakeCluster::new().failing(
        Op::List,
        "BarbicanSecretStore",
        ApiError::Unavailable("etcd".into()),
    );
    let validated = validate_object(&cluster, &request(Operation::Create, brownfield(), None));
    assert_eq!(
        field_errors(&validated),
        [
            "spec: Internal error: listing BarbicanSecretStores for the sibling checks: unavailable: etcd"
        ]
    );
    let unreadable = sibling("broken", &[("/spec/type", json!("Vault"))]);
    let cluster = FakeCluster::new().with(unreadable);
    let validated = validate_object(&cluster, &request(Operation::Create, brownfield(), None));
    assert_eq!(field_errors(&validated), Vec::<String>::new());
    assert_eq!(validated.warnings.len(), 1);
    assert!(
        validated.warnings[0].starts_with(
            "BarbicanSecretStore \"broken\" cannot be read for the sibling checks: unknown variant `Vault`"
        ),
        "{:?}",
        validated.warnings
    );
}
