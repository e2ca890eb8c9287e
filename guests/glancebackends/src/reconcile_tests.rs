use std::time::Duration;

use serde_json::json;
use wasm_operator_sdk::testing::{FakeCluster, Op};
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError, Request};

use crate::reconcile::SECRET_POLLING;
use crate::testing::{
    BACKEND, NS, RENDERED, World, backend, cond, credentials, deployment, glance, projection,
};

const ALL_READY: (&str, &str, &str) = ("True", "AllReady", "All sub-conditions are ready");

#[test]
fn a_backend_turns_ready_once_its_credentials_and_its_section_are_there() {
    // Step by step as the handshake goes: parent, credentials, projection.
    let world = World::of(backend());
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("CredentialsReady").1, "WaitingForParent");

    let world = world.with(glance(None));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("CredentialsReady").1, "WaitingForCredentials");
    assert!(world.condition("ConfigProjected").is_none());

    let world = world.with(credentials());
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("CredentialsReady").1, "CredentialsAvailable");
    assert_eq!(world.said("ConfigProjected").1, "WaitingForProjection");
    assert_eq!(
        world.said("Ready"),
        cond(
            "False",
            "NotAllReady",
            "One or more sub-conditions are not ready"
        )
    );

    let world = world
        .with(deployment("backends"))
        .with(projection(RENDERED));
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(
        world.said("Ready"),
        cond(ALL_READY.0, ALL_READY.1, ALL_READY.2)
    );
    let status = world.stored().status.expect("a status");
    assert_eq!(status.observed_generation, 3);
    assert!(
        status
            .conditions
            .iter()
            .all(|c| c.observed_generation == Some(3)),
        "{:?}",
        status.conditions
    );
    assert_eq!(world.status_writes(), 4, "one status write per pass");
}

#[test]
fn a_converged_pass_writes_nothing() {
    let world = World::projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.status_writes(), 1);
    world.cluster.clear_calls();
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.said("Ready").1, "AllReady", "the pass ran");
    assert!(
        world.cluster.writes().is_empty(),
        "{:?}",
        world.cluster.write_log()
    );
}

#[test]
fn a_new_generation_is_stamped_on_every_condition_and_the_status() {
    let world = World::projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    world.cluster.change("GlanceBackend", BACKEND, |b| {
        b["metadata"]["generation"] = json!(4)
    });
    assert_eq!(world.run(), Ok(Outcome::done()));
    let status = world.stored().status.expect("a status");
    assert_eq!(status.observed_generation, 4);
    assert!(
        status
            .conditions
            .iter()
            .all(|c| c.observed_generation == Some(4))
    );
}

#[test]
fn a_deleting_backend_is_left_alone() {
    let mut deleting = backend();
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    let world = World::of(deleting).with(glance(None)).with(credentials());
    assert_eq!(world.run(), Ok(Outcome::done()));
    let reads: Vec<String> = world
        .cluster
        .calls()
        .iter()
        .filter_map(|c| c.object().map(|o| o.kind.clone()))
        .collect();
    assert_eq!(reads, ["GlanceBackend"], "only the backend itself is read");
    assert!(world.cluster.writes().is_empty());
    assert!(world.stored().status.is_none());
}

#[test]
fn a_backend_that_is_gone_ends_the_pass() {
    let cluster = FakeCluster::new();
    let request = Request {
        namespace: Some(NS.into()),
        name: BACKEND.into(),
    };
    assert_eq!(
        crate::reconcile::reconcile(&cluster, &request),
        Ok(Outcome::done())
    );
    assert!(cluster.writes().is_empty());
}

#[test]
fn a_backend_that_does_not_decode_fails_permanently() {
    let mut broken = backend();
    broken["spec"]["type"] = json!("Swift");
    let world = World::of(broken);
    let Err(ReconcileError::Permanent(message)) = world.run() else {
        panic!("a permanent error");
    };
    assert!(
        message
            .starts_with("GlanceBackend openstack/images does not decode: unknown variant `Swift`"),
        "{message}"
    );
}

#[test]
fn a_conflict_on_the_status_write_runs_the_pass_again_after_a_second() {
    let world = World::projected();
    world.cluster.fail(
        Op::UpdateStatus,
        BACKEND,
        ApiError::Conflict("stale".into()),
        1,
    );
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(1))));
    assert!(world.stored().status.is_none());
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.said("Ready").1, "AllReady");
}

#[test]
fn a_failed_status_write_fails_the_pass_naming_the_backend() {
    let world = World::projected();
    world.cluster.fail(
        Op::UpdateStatus,
        BACKEND,
        ApiError::Unavailable("etcd".into()),
        1,
    );
    assert_eq!(
        world.run(),
        Err(ReconcileError::Transient(
            "writing the status of GlanceBackend openstack/images: unavailable: etcd".into()
        ))
    );
}
