use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::admission::Operation;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use crate::admission::tests::{create_errors_among, field_errors, request, s3, with};
use crate::admission::validate_object;

/// A stored backend `name`: the valid one renamed, then `changes`.
fn sibling(name: &str, changes: &[(&str, Value)]) -> Value {
    with(with(s3(), &[("/metadata/name", json!(name))]), changes)
}

/// (siblings stored, changes to the backend written, the errors).
type Row<'a> = (Vec<Value>, Vec<(&'a str, Value)>, Vec<&'a str>);

const TAKEN: &str = "spec.isDefault: Invalid value: true: GlanceBackend \"archive\" attached to the same Glance \"glance\" is already marked isDefault; exactly one default store is allowed";

#[test]
fn a_default_backend_is_refused_when_a_sibling_of_the_same_glance_is_the_default() {
    let deleting = json!("2026-01-01T00:00:00Z");
    let table: Vec<Row<'_>> = vec![
        (
            vec![
                sibling("archive", &[("/spec/isDefault", json!(false))]),
                sibling("other", &[("/spec/glanceRef/name", json!("glance2"))]),
                sibling("old", &[("/metadata/deletionTimestamp", deleting)]),
                sibling("elsewhere", &[("/metadata/namespace", json!("other"))]),
            ],
            vec![],
            vec![],
        ),
        (vec![sibling("archive", &[])], vec![], vec![TAKEN]),
        (
            vec![sibling("zeta", &[]), sibling("archive", &[])],
            vec![],
            vec![
                TAKEN,
                "spec.isDefault: Invalid value: true: GlanceBackend \"zeta\" attached to the same Glance \"glance\" is already marked isDefault; exactly one default store is allowed",
            ],
        ),
    ];
    assert_eq!(table.iter().filter(|(_, _, e)| e.is_empty()).count(), 1);
    for (siblings, changes, expected) in table {
        assert_eq!(
            create_errors_among(&siblings, with(s3(), &changes)),
            expected,
            "{changes:?}"
        );
    }
    // A store that is not the default may join a Glance that has one.
    let not_default = with(s3(), &[("/spec/isDefault", json!(false))]);
    assert_eq!(
        create_errors_among(&[sibling("archive", &[])], not_default),
        Vec::<String>::new()
    );
}

#[test]
fn an_update_of_the_default_does_not_collide_with_itself() {
    let cluster = FakeCluster::new().with(s3());
    let edited = with(s3(), &[("/spec/s3/bucket", json!("images2"))]);
    let validated = validate_object(&cluster, &request(Operation::Update, edited, Some(s3())));
    assert_eq!(field_errors(&validated), Vec::<String>::new());
}

#[test]
fn a_failed_list_refuses_a_default_backend_and_skips_a_sibling_that_does_not_read() {
    let cluster = FakeCluster::new().failing(
        Op::List,
        "GlanceBackend",
        ApiError::Unavailable("etcd".into()),
    );
    let validated = validate_object(&cluster, &request(Operation::Create, s3(), None));
    assert_eq!(
        field_errors(&validated),
        [
            "spec.isDefault: Internal error: listing GlanceBackends for the single-default check: unavailable: etcd"
        ]
    );
    // A non-default backend needs no list.
    let not_default = with(s3(), &[("/spec/isDefault", json!(false))]);
    let validated = validate_object(&cluster, &request(Operation::Create, not_default, None));
    assert_eq!(field_errors(&validated), Vec::<String>::new());

    let unreadable = sibling("broken", &[("/spec/type", json!("Swift"))]);
    let cluster = FakeCluster::new().with(unreadable);
    let validated = validate_object(&cluster, &request(Operation::Create, s3(), None));
    assert_eq!(field_errors(&validated), Vec::<String>::new());
    assert_eq!(validated.warnings.len(), 1);
    assert!(
        validated.warnings[0].starts_with(
            "GlanceBackend \"broken\" cannot be read for the single-default check: unknown variant `Swift`"
        ),
        "{:?}",
        validated.warnings
    );
}
