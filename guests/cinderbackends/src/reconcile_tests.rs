use std::time::Duration;

use serde_json::json;
use wasm_operator_sdk::testing::{FakeCluster, Op};
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError, Request};

use crate::reconcile::SECRET_POLLING;
use crate::testing::{
    CEPHX_KEY, NFS, NS, RENDERED, World, cinder, cond, deployment, key_secret, nfs_backend,
    not_all_ready, projection, rbd_backend,
};

const ALL_READY: (&str, &str, &str) = ("True", "AllReady", "All sub-conditions are ready");

#[test]
fn an_nfs_backend_turns_ready_once_its_cinder_resolves_and_its_section_is_mounted() {
    let world = World::of(nfs_backend());
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("CredentialsReady").1, "WaitingForParent");

    let world = world.with(cinder(None));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("CredentialsReady").1, "CredentialsNotRequired");
    assert_eq!(world.said("ConfigProjected").1, "WaitingForProjection");
    assert_eq!(world.said("Ready"), not_all_ready());

    let world = world
        .with(deployment("cinder-volume-nfs-a", "backend"))
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
    assert_eq!(world.status_writes(), 3, "one status write per pass");
}

#[test]
fn an_rbd_backend_turns_ready_once_its_key_and_its_section_are_there() {
    let rendered = "[rbd-a]\nrbd_pool = volumes\n";
    let world = World::of(rbd_backend())
        .with(cinder(None))
        .with(key_secret(CEPHX_KEY))
        .with(deployment("cinder-volume-rbd-a", "backend"))
        .with(projection(rendered));
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(
        world.said("CredentialsReady"),
        cond(
            "True",
            "CredentialsAvailable",
            "RBD key Secret \"rbd-a-key\" carries the userKey data key"
        )
    );
    assert_eq!(world.said("Ready").1, "AllReady");
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
    world.cluster.change("CinderBackend", NFS, |b| {
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
fn a_backend_that_is_gone_ends_the_pass() {
    let cluster = FakeCluster::new();
    let request = Request {
        namespace: Some(NS.into()),
        name: NFS.into(),
    };
    assert_eq!(
        crate::reconcile::reconcile(&cluster, &request),
        Ok(Outcome::done())
    );
    assert!(cluster.writes().is_empty());
}

#[test]
fn a_backend_that_does_not_decode_fails_permanently() {
    let mut broken = nfs_backend();
    broken["spec"]["type"] = json!("iSCSI");
    let world = World::of(broken);
    let Err(ReconcileError::Permanent(message)) = world.run() else {
        panic!("a permanent error");
    };
    assert!(
        message
            .starts_with("CinderBackend openstack/nfs-a does not decode: unknown variant `iSCSI`"),
        "{message}"
    );
}

#[test]
fn a_conflict_on_the_status_write_runs_the_pass_again_after_a_second() {
    let world = World::projected();
    world
        .cluster
        .fail(Op::UpdateStatus, NFS, ApiError::Conflict("stale".into()), 1);
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
        NFS,
        ApiError::Unavailable("etcd".into()),
        1,
    );
    assert_eq!(
        world.run(),
        Err(ReconcileError::Transient(
            "writing the status of CinderBackend openstack/nfs-a: unavailable: etcd".into()
        ))
    );
}
