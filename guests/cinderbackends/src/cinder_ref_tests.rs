use serde_json::json;
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::reconcile::SECRET_POLLING;
use crate::testing::{World, cinder, cond, key_secret, nfs_backend, not_all_ready, rbd_backend};

const WAITING_FOR_PARENT: &str = "parent Cinder openstack/cinder does not exist; the cluster this backend's volume service runs on is unknown";
const DEMOTED: &str =
    "parent Cinder openstack/cinder does not exist; nothing mounts this backend's rendered section";

/// The NFS backend with a ConfigProjected of `status` stored from an earlier pass.
fn with_projected(status: &str) -> serde_json::Value {
    let mut backend = nfs_backend();
    backend["status"] = json!({"conditions": [{
        "type": "ConfigProjected", "status": status, "reason": "Earlier", "message": "earlier",
        "observedGeneration": 2, "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    backend
}

#[test]
fn a_backend_without_its_cinder_waits_for_the_parent_and_reads_no_secret() {
    let world = World::of(rbd_backend()).with(key_secret("AQ=="));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(
        world.said("CredentialsReady"),
        cond("False", "WaitingForParent", WAITING_FOR_PARENT)
    );
    assert!(
        world.condition("ConfigProjected").is_none(),
        "never observed, left absent"
    );
    assert_eq!(world.said("Ready"), not_all_ready());
    let secret_reads = world
        .cluster
        .calls()
        .iter()
        .filter(|c| c.object().is_some_and(|o| o.kind == "Secret"))
        .count();
    assert_eq!(secret_reads, 0, "the key belongs on an unknown cluster");
}

#[test]
fn a_missing_cinder_demotes_a_true_config_projected_and_leaves_a_false_one() {
    // (ConfigProjected before, after)
    let table = [
        ("True", cond("False", "WaitingForProjection", DEMOTED)),
        ("False", cond("False", "Earlier", "earlier")),
    ];
    for (before, after) in table {
        let world = World::of(with_projected(before));
        assert_eq!(
            world.run(),
            Ok(Outcome::requeue(SECRET_POLLING)),
            "{before}"
        );
        assert_eq!(world.said("ConfigProjected"), after, "{before}");
        assert_eq!(
            world.said("CredentialsReady"),
            cond("False", "WaitingForParent", WAITING_FOR_PARENT)
        );
    }
}

#[test]
fn a_cinder_kind_the_cluster_does_not_serve_reads_as_a_missing_cinder() {
    let world = World::of(with_projected("True"));
    world
        .cluster
        .fail(Op::Get, "cinder", ApiError::NotServed("cinders".into()), 1);
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(
        world.said("CredentialsReady"),
        cond("False", "WaitingForParent", WAITING_FOR_PARENT)
    );
    assert_eq!(
        world.said("ConfigProjected"),
        cond("False", "WaitingForProjection", DEMOTED)
    );
}

#[test]
fn a_cinder_on_an_unregistered_target_cluster_holds_its_backends_and_demotes_nothing() {
    let world = World::of(with_projected("True")).with(cinder(Some("edge")));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(
        world.said("CredentialsReady"),
        cond(
            "False",
            "TargetClusterUnavailable",
            "target cluster \"edge\" is not registered"
        )
    );
    assert_eq!(
        world.said("ConfigProjected"),
        cond("True", "Earlier", "earlier"),
        "unobservable is not un-projected"
    );
}

#[test]
fn a_failed_read_of_the_cinder_fails_the_pass_naming_it_and_sets_no_gate() {
    let world = World::attached();
    world
        .cluster
        .fail(Op::Get, "cinder", ApiError::Forbidden("no".into()), 1);
    assert_eq!(
        world.run(),
        Err(ReconcileError::Transient(
            "fetching parent Cinder openstack/cinder: forbidden: no".into()
        ))
    );
    assert!(world.condition("CredentialsReady").is_none());
    assert_eq!(
        world.said("Ready"),
        not_all_ready(),
        "the status is still written with Ready and observedGeneration"
    );
    assert_eq!(
        world.stored().status.map(|s| s.observed_generation),
        Some(3)
    );
}

#[test]
fn a_cinder_on_a_registered_target_has_its_backend_observe_the_projection_there() {
    let target = std::rc::Rc::new(
        wasm_operator_sdk::testing::FakeCluster::new()
            .with(crate::testing::deployment("cinder-volume-nfs-a", "backend"))
            .with(crate::testing::projection(crate::testing::RENDERED)),
    );
    let mut world = World::of(nfs_backend()).with(cinder(Some("edge")));
    world.cluster = world
        .cluster
        .with_target("edge", "openstack.c5c3.io", target.clone());
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.said("ConfigProjected").0, "True");
    assert!(
        target
            .calls()
            .iter()
            .any(|c| c.object().is_some_and(|o| o.kind == "Deployment")),
        "{:?}",
        target.calls()
    );
    assert!(
        !world
            .cluster
            .calls()
            .iter()
            .any(|c| c.object().is_some_and(|o| o.kind == "Deployment")),
        "nothing of the Cinder's children is read here"
    );
}
