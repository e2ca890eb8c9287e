use serde_json::json;
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use super::*;
use crate::deletion::testing::{
    ALL_OURS_AND_FOREIGN, FOREIGN, deletes, deleting, event_reasons, finalizers, note, pass_at,
};
use crate::finalizers::OPENBAO_FINALIZER;
use crate::testing::mariadb_object;

fn normal(reason: &str) -> (String, String) {
    ("Normal".to_owned(), reason.to_owned())
}

const THE_THREE_DELETES: [&str; 3] = ["Database ks", "User ks", "Grant ks"];

#[test]
fn a_deleting_keystone_deletes_its_live_database_user_and_grant_and_releases_the_finalizer() {
    let cluster = FakeCluster::new()
        .with(deleting(ALL_OURS_AND_FOREIGN))
        .with(mariadb_object("Database", "ks", "True"))
        .with(mariadb_object("User", "ks", "True"))
        .with(mariadb_object("Grant", "ks", "True"));
    let mut pass = pass_at(&cluster, 30);
    release(&mut pass, Children::Local(&cluster)).expect("released");
    assert_eq!(deletes(&cluster), THE_THREE_DELETES);
    for kind in ["Database", "User", "Grant"] {
        assert!(cluster.server(kind, "ks").is_none(), "{kind} deleted");
    }
    assert_eq!(
        event_reasons(&cluster),
        [normal("FinalizingDatabase"), normal("DatabaseFinalized")]
    );
    assert_eq!(
        note(&cluster, "FinalizingDatabase"),
        "Cleaning up MariaDB Database, User, and Grant before removing Keystone"
    );
    assert_eq!(
        note(&cluster, "DatabaseFinalized"),
        "MariaDB Database, User, and Grant marked for deletion; releasing finalizer"
    );
    assert_eq!(finalizers(&cluster), [OPENBAO_FINALIZER, FOREIGN]);
    assert!(
        !crate::finalizers::holds(&pass.keystone, FINALIZER),
        "the pass holds the stored list"
    );
}

#[test]
fn without_a_live_mariadb_object_only_database_finalized_is_recorded_and_the_deletes_are_still_sent()
 {
    // A brownfield database: nothing was ever provisioned.
    let cluster = FakeCluster::new().with(deleting(ALL_OURS_AND_FOREIGN));
    let mut pass = pass_at(&cluster, 30);
    release(&mut pass, Children::Local(&cluster)).expect("released");
    assert_eq!(
        deletes(&cluster),
        THE_THREE_DELETES,
        "NotFound is tolerated"
    );
    assert_eq!(event_reasons(&cluster), [normal("DatabaseFinalized")]);
    assert_eq!(finalizers(&cluster), [OPENBAO_FINALIZER, FOREIGN]);
}

#[test]
fn a_terminating_mariadb_object_is_not_live_cleanup_work() {
    let mut database = mariadb_object("Database", "ks", "True");
    database["metadata"]["deletionTimestamp"] = json!("2026-03-01T12:00:00Z");
    database["metadata"]["finalizers"] = json!(["database.k8s.mariadb.com/finalizer"]);
    let cluster = FakeCluster::new()
        .with(deleting(ALL_OURS_AND_FOREIGN))
        .with(database);
    let mut pass = pass_at(&cluster, 30);
    release(&mut pass, Children::Local(&cluster)).expect("released");
    assert_eq!(event_reasons(&cluster), [normal("DatabaseFinalized")]);
    assert_eq!(deletes(&cluster), THE_THREE_DELETES);
}

#[test]
fn a_failed_delete_ends_the_pass_naming_the_object_and_keeps_the_finalizer() {
    let cluster = FakeCluster::new()
        .with(deleting(ALL_OURS_AND_FOREIGN))
        .with(mariadb_object("Database", "ks", "True"))
        .failing(
            Op::Delete,
            "ks",
            ApiError::Forbidden("denied by policy".into()),
        );
    let mut pass = pass_at(&cluster, 30);
    let error = release(&mut pass, Children::Local(&cluster)).expect_err("fails");
    assert!(
        matches!(&error, Error::Cluster { what, source: wasm_operator_sdk::Error::Api(ApiError::Forbidden(m)) }
            if what == "deleting Database ns/ks" && m == "denied by policy"),
        "{error}"
    );
    assert_eq!(finalizers(&cluster), ALL_OURS_AND_FOREIGN);
    assert!(
        !event_reasons(&cluster).contains(&normal("DatabaseFinalized")),
        "{:?}",
        event_reasons(&cluster)
    );
}

#[test]
fn a_cluster_that_serves_no_mariadb_kinds_has_nothing_to_delete_and_the_finalizer_goes() {
    let cluster = FakeCluster::new().with(deleting(ALL_OURS_AND_FOREIGN));
    let unserved = || ApiError::NotServed("k8s.mariadb.com/v1alpha1".into());
    cluster.fail(Op::Get, "ks", unserved(), 3);
    cluster.fail(Op::Delete, "ks", unserved(), 3);
    let mut pass = pass_at(&cluster, 30);
    release(&mut pass, Children::Local(&cluster)).expect("released");
    assert_eq!(deletes(&cluster), THE_THREE_DELETES, "each was tried");
    assert_eq!(event_reasons(&cluster), [normal("DatabaseFinalized")]);
    assert_eq!(finalizers(&cluster), [OPENBAO_FINALIZER, FOREIGN]);
}

#[test]
fn abandoned_children_release_the_finalizer_with_remote_children_abandoned_and_no_delete() {
    let cluster = FakeCluster::new()
        .with(deleting(ALL_OURS_AND_FOREIGN))
        .with(mariadb_object("Database", "ks", "True"));
    let mut pass = pass_at(&cluster, 400);
    release(&mut pass, Children::Abandoned).expect("released");
    assert!(deletes(&cluster).is_empty(), "{:?}", deletes(&cluster));
    assert_eq!(
        event_reasons(&cluster),
        [("Warning".to_owned(), "RemoteChildrenAbandoned".to_owned())]
    );
    assert_eq!(
        note(&cluster, "RemoteChildrenAbandoned"),
        "Target cluster is no longer registered; releasing the finalizer without deleting the \
         MariaDB Database, User, and Grant on it"
    );
    assert_eq!(finalizers(&cluster), [OPENBAO_FINALIZER, FOREIGN]);
}

#[test]
fn a_keystone_without_the_finalizer_sends_nothing() {
    let cluster = FakeCluster::new()
        .with(deleting(&[OPENBAO_FINALIZER]))
        .with(mariadb_object("Database", "ks", "True"));
    let mut pass = pass_at(&cluster, 30);
    cluster.clear_calls();
    release(&mut pass, Children::Local(&cluster)).expect("runs");
    assert!(cluster.calls().is_empty(), "{:?}", cluster.calls());
    assert!(cluster.events().is_empty());
}
