use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::admission::Operation;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use crate::admission::tests::{create_errors_among, field_errors, nfs, request, with};
use crate::admission::validate_object;

/// A stored target `name`: the valid NFS one renamed, then `changes`.
fn sibling(name: &str, changes: &[(&str, Value)]) -> Value {
    with(with(nfs(), &[("/metadata/name", json!(name))]), changes)
}

fn taken(name: &str) -> String {
    format!(
        "spec.cinderRef: Forbidden: Cinder \"cinder\" already has CinderBackupBackend \"{name}\" attached"
    )
}

#[test]
fn a_target_is_refused_when_the_same_cinder_already_has_one() {
    let deleting = json!("2026-01-01T00:00:00Z");
    // (siblings stored, the errors)
    let table: Vec<(Vec<Value>, Vec<String>)> = vec![
        (
            vec![
                sibling("other", &[("/spec/cinderRef/name", json!("cinder2"))]),
                sibling("old", &[("/metadata/deletionTimestamp", deleting)]),
                sibling("elsewhere", &[("/metadata/namespace", json!("other"))]),
            ],
            vec![],
        ),
        (vec![sibling("daily", &[])], vec![taken("daily")]),
        (
            vec![sibling("zeta", &[]), sibling("daily", &[])],
            vec![taken("daily"), taken("zeta")],
        ),
    ];
    assert_eq!(table.iter().filter(|(_, e)| e.is_empty()).count(), 1);
    for (siblings, expected) in table {
        assert_eq!(create_errors_among(&siblings, nfs()), expected);
    }
}

#[test]
fn an_update_of_the_attached_target_does_not_collide_with_itself() {
    let cluster = FakeCluster::new().with(nfs());
    let edited = with(nfs(), &[("/spec/compression", json!("zstd"))]);
    let validated = validate_object(&cluster, &request(Operation::Update, edited, Some(nfs())));
    assert_eq!(field_errors(&validated), Vec::<String>::new());
}

#[test]
fn a_failed_list_refuses_the_target_and_a_sibling_that_does_not_read_is_skipped() {
    let cluster = FakeCluster::new().failing(
        Op::List,
        "CinderBackupBackend",
        ApiError::Unavailable("etcd".into()),
    );
    let validated = validate_object(&cluster, &request(Operation::Create, nfs(), None));
    assert_eq!(
        field_errors(&validated),
        [
            "spec.cinderRef: Internal error: listing CinderBackupBackends for the single-attachment check: unavailable: etcd"
        ]
    );
    let unreadable = sibling("broken", &[("/spec/type", json!("Swift"))]);
    let cluster = FakeCluster::new().with(unreadable);
    let validated = validate_object(&cluster, &request(Operation::Create, nfs(), None));
    assert_eq!(field_errors(&validated), Vec::<String>::new());
    assert_eq!(validated.warnings.len(), 1);
    assert!(
        validated.warnings[0].starts_with(
            "CinderBackupBackend \"broken\" cannot be read for the single-attachment check: unknown variant `Swift`"
        ),
        "{:?}",
        validated.warnings
    );
}
