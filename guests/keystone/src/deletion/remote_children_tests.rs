use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::deletion::testing::{FOREIGN, deletes, deleting, finalizers, note, pass_at};
use wasm_operator_sdk::blocks::remote_children::swept;

#[test]
fn a_local_keystone_carrying_the_remote_children_finalizer_has_it_released_without_a_sweep() {
    let cluster = FakeCluster::new().with(deleting(&[REMOTE_CHILDREN_FINALIZER, FOREIGN]));
    let mut pass = pass_at(&cluster, 30);
    release(&mut pass, Children::Local(&cluster)).expect("released");
    assert_eq!(finalizers(&cluster), [FOREIGN]);
    assert!(deletes(&cluster).is_empty(), "{:?}", deletes(&cluster));
    assert!(cluster.events().is_empty());
}

#[test]
fn abandoned_children_release_it_with_remote_children_abandoned() {
    let cluster = FakeCluster::new().with(deleting(&[REMOTE_CHILDREN_FINALIZER, FOREIGN]));
    let mut pass = pass_at(&cluster, 400);
    release(&mut pass, Children::Abandoned).expect("released");
    assert_eq!(finalizers(&cluster), [FOREIGN]);
    assert_eq!(
        note(&cluster, "RemoteChildrenAbandoned"),
        "Target cluster is no longer registered; releasing the remote-children finalizer \
         without deleting the objects on it labelled as owned by this Keystone"
    );
}

#[test]
fn a_keystone_without_it_sends_nothing() {
    let cluster = FakeCluster::new().with(deleting(&[FOREIGN]));
    let mut pass = pass_at(&cluster, 400);
    release(&mut pass, Children::Abandoned).expect("runs");
    assert!(cluster.calls().is_empty(), "{:?}", cluster.calls());
    assert!(cluster.events().is_empty());
}

#[test]
fn every_swept_kind_is_declared_with_list_and_delete_and_watched_on_the_target() {
    let description = crate::describe::describe();
    wasm_operator_sdk::testing::assert_can_sweep(&description, &swept());
    for kind in swept() {
        assert!(
            description.targets.watches.contains(&kind),
            "{kind} is not watched on a target"
        );
    }
}
