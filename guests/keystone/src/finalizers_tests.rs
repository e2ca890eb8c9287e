use serde_json::json;
use wasm_operator_sdk::testing::{Call, FakeCluster};
use wasm_operator_sdk::{ApiError, ObjectRef, Outcome, Request};

use super::*;
use crate::pass::SECRET_POLLING;
use crate::testing::{keystone, keystone_with};

fn request() -> Request {
    Request {
        namespace: Some("ns".into()),
        name: "ks".into(),
    }
}

/// A cluster whose default ClusterSecretStore is ready, holding `object`.
fn cluster_with(object: serde_json::Value) -> FakeCluster {
    FakeCluster::new()
        .with(json!({"apiVersion": "external-secrets.io/v1",
            "kind": "ClusterSecretStore", "metadata": {"name": "openbao-cluster-store"},
            "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}))
        .with(object)
}

fn stored(cluster: &FakeCluster) -> serde_json::Value {
    cluster
        .object(&ObjectRef::of::<Keystone>(Some("ns"), "ks"))
        .expect("stored")
}

fn stored_finalizers(cluster: &FakeCluster) -> serde_json::Value {
    stored(cluster)["metadata"]["finalizers"].clone()
}

fn keystone_patches(cluster: &FakeCluster) -> usize {
    cluster
        .calls()
        .iter()
        .filter(|c| matches!(c, Call::Patch(r, _) if r.kind == "Keystone"))
        .count()
}

#[test]
fn the_finalizers_are_added_one_per_pass_in_order_then_a_pass_sends_no_write_for_them() {
    let cluster = cluster_with(keystone());
    let first = crate::reconcile::reconcile(&cluster, &request()).expect("runs");
    assert_eq!(first, Outcome::requeue(NEXT_PASS), "run again at once");
    assert_eq!(stored_finalizers(&cluster), json!([FINALIZER]));
    assert_eq!(
        cluster.write_log(),
        ["patch Keystone ns/ks"],
        "the pass ended at the finalizer: no step ran, no status was written"
    );
    cluster.clear_calls();
    let second = crate::reconcile::reconcile(&cluster, &request()).expect("runs");
    assert_eq!(second, Outcome::requeue(NEXT_PASS));
    assert_eq!(
        stored_finalizers(&cluster),
        json!([FINALIZER, OPENBAO_FINALIZER])
    );
    assert_eq!(cluster.write_log(), ["patch Keystone ns/ks"]);
    cluster.clear_calls();
    let third = crate::reconcile::reconcile(&cluster, &request()).expect("runs");
    assert_eq!(third, Outcome::requeue(SECRET_POLLING), "the steps ran");
    assert_eq!(keystone_patches(&cluster), 0, "{:?}", cluster.write_log());
    assert_eq!(
        stored_finalizers(&cluster),
        json!([FINALIZER, OPENBAO_FINALIZER])
    );
}

#[test]
fn a_foreign_finalizer_survives_ours_being_added_and_removed() {
    let mut object = keystone();
    object["metadata"]["finalizers"] = json!(["example.com/keep"]);
    let cluster = cluster_with(object);
    for _ in 0..2 {
        crate::reconcile::reconcile(&cluster, &request()).expect("runs");
    }
    assert_eq!(
        stored_finalizers(&cluster),
        json!(["example.com/keep", FINALIZER, OPENBAO_FINALIZER])
    );
    let stored = stored(&cluster);
    let mut pass = crate::testing::pass(&cluster, &stored);
    release(&mut pass, FINALIZER).expect("released");
    release(&mut pass, OPENBAO_FINALIZER).expect("released");
    assert_eq!(stored_finalizers(&cluster), json!(["example.com/keep"]));
}

#[test]
fn removing_the_last_finalizer_clears_the_list() {
    let mut object = keystone();
    object["metadata"]["finalizers"] = json!([FINALIZER]);
    let cluster = cluster_with(object);
    let stored = stored(&cluster);
    let mut pass = crate::testing::pass(&cluster, &stored);
    release(&mut pass, FINALIZER).expect("released");
    assert!(
        self::stored(&cluster)["metadata"]
            .get("finalizers")
            .is_none(),
        "{}",
        self::stored(&cluster)
    );
    assert!(!holds_any(&pass.keystone));
}

#[test]
fn a_finalizer_added_meanwhile_by_another_client_makes_ours_conflict_instead_of_being_lost() {
    let cluster = cluster_with(keystone());
    // The pass reads a cache that has not seen another client's write yet.
    cluster.freeze_cache();
    cluster.change("Keystone", "ks", |k| {
        k["metadata"]["finalizers"] = json!(["example.com/keep"]);
    });
    let outcome = crate::reconcile::reconcile(&cluster, &request()).expect("runs");
    assert_eq!(
        outcome,
        Outcome::requeue(std::time::Duration::from_secs(1)),
        "a conflict runs the pass again"
    );
    assert_eq!(keystone_patches(&cluster), 1, "the patch was sent");
    assert_eq!(stored_finalizers(&cluster), json!(["example.com/keep"]));
    cluster.sync_cache();
    crate::reconcile::reconcile(&cluster, &request()).expect("runs");
    assert_eq!(
        stored_finalizers(&cluster),
        json!(["example.com/keep", FINALIZER])
    );
}

#[test]
fn a_keystone_on_a_target_cluster_gets_no_finalizer() {
    let cluster = cluster_with(keystone_with(
        json!({"targetClusterRef": {"name": "remote"}}),
    ));
    let outcome = crate::reconcile::reconcile(&cluster, &request()).expect("runs");
    assert_eq!(outcome, Outcome::requeue(SECRET_POLLING));
    assert_eq!(
        cluster.write_log(),
        ["update-status Keystone ns/ks"],
        "TargetClusterUnavailable was written, nothing else"
    );
    assert!(stored(&cluster)["metadata"].get("finalizers").is_none());
}

#[test]
fn the_remote_children_finalizer_is_wanted_third_and_only_with_a_target_cluster() {
    let local: Keystone = serde_json::from_value(keystone()).expect("a Keystone");
    assert_eq!(wanted(&local), [FINALIZER, OPENBAO_FINALIZER]);
    let targeted: Keystone = serde_json::from_value(keystone_with(
        json!({"targetClusterRef": {"name": "remote"}}),
    ))
    .expect("a Keystone");
    assert_eq!(
        wanted(&targeted),
        [FINALIZER, OPENBAO_FINALIZER, REMOTE_CHILDREN_FINALIZER]
    );
}

#[test]
fn once_a_target_resolves_ensuring_adds_the_remote_children_finalizer_last() {
    // The seam the target-clusters issue calls after resolving the target.
    let mut object = keystone_with(json!({"targetClusterRef": {"name": "remote"}}));
    object["metadata"]["finalizers"] = json!([FINALIZER, OPENBAO_FINALIZER]);
    let cluster = FakeCluster::new().with(object);
    let stored = stored(&cluster);
    let mut pass = crate::testing::pass(&cluster, &stored);
    assert_eq!(ensure_next(&mut pass).expect("added"), Some(NEXT_PASS));
    assert_eq!(
        stored_finalizers(&cluster),
        json!([FINALIZER, OPENBAO_FINALIZER, REMOTE_CHILDREN_FINALIZER])
    );
    cluster.clear_calls();
    assert_eq!(ensure_next(&mut pass).expect("all there"), None);
    assert!(cluster.calls().is_empty(), "{:?}", cluster.calls());
}

#[test]
fn a_keystone_read_without_a_resource_version_is_not_patched() {
    let cluster = FakeCluster::new();
    let mut pass = crate::testing::pass(&cluster, &keystone());
    let error = ensure_next(&mut pass).expect_err("refused");
    assert!(
        matches!(&error, Error::Cluster { what, source: wasm_operator_sdk::Error::MissingField { field, .. } }
            if what == "adding finalizer keystone.openstack.c5c3.io/finalizer to Keystone ns/ks"
                && *field == "metadata.resourceVersion"),
        "{error}"
    );
    assert!(cluster.calls().is_empty());
}

#[test]
fn a_refused_finalizer_patch_names_the_keystone_and_the_finalizer() {
    let cluster = cluster_with(keystone()).failing(
        wasm_operator_sdk::testing::Op::Patch,
        "ks",
        ApiError::Forbidden("patch not allowed".into()),
    );
    let stored = stored(&cluster);
    let mut pass = crate::testing::pass(&cluster, &stored);
    let error = ensure_next(&mut pass).expect_err("refused");
    assert_eq!(
        error.to_string(),
        "adding finalizer keystone.openstack.c5c3.io/finalizer to Keystone ns/ks: forbidden: \
         patch not allowed"
    );
}
