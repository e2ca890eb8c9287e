use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, EventType, Outcome, ReconcileError};

use super::{FINALIZER, NEXT_PASS};
use crate::testing::{NFS, World, cinder, cond, nfs_backend};

const DETACHING: &str = "waiting for the parent Cinder to run the cinder-nfs-a-service-remove Job that unregisters this backend's volume service";
const SKIPPED: &str = "Parent Cinder openstack/cinder no longer exists, so no service registry row can be removed; released the backend";

/// The backend with `finalizers`, deleted when `deleting`, projected and ready before.
fn backend(finalizers: &[&str], deleting: bool) -> Value {
    let mut backend = nfs_backend();
    backend["metadata"]["finalizers"] = json!(finalizers);
    if deleting {
        backend["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    }
    let condition = |type_: &str, reason: &str| {
        json!({"type": type_, "status": "True", "reason": reason, "message": "earlier",
               "observedGeneration": 3, "lastTransitionTime": "2026-01-01T00:00:00Z"})
    };
    backend["status"] = json!({"observedGeneration": 3, "conditions": [
        condition("CredentialsReady", "CredentialsNotRequired"),
        condition("ConfigProjected", "ConfigProjected"),
        condition("Ready", "AllReady")]});
    backend
}

/// The kinds the passes read or wrote besides the backend itself.
fn other_kinds(world: &World) -> Vec<String> {
    world
        .cluster
        .calls()
        .iter()
        .filter_map(|c| c.object().map(|o| o.kind.clone()))
        .filter(|k| k != "CinderBackend")
        .collect()
}

#[test]
fn a_new_backend_gets_the_service_remove_finalizer_before_anything_else() {
    let world = World::of(backend(&["example.com/keep"], false)).with(cinder(None));
    assert_eq!(world.run(), Ok(Outcome::requeue(NEXT_PASS)));
    assert_eq!(NEXT_PASS, Duration::from_secs(1));
    assert_eq!(
        world.stored().metadata.finalizers,
        Some(vec!["example.com/keep".to_owned(), FINALIZER.to_owned()])
    );
    assert_eq!(world.status_writes(), 0, "the next pass writes the status");
    assert!(other_kinds(&world).is_empty(), "{:?}", other_kinds(&world));
    // The next pass goes on with the finalizer held.
    assert_eq!(
        world.run(),
        Ok(Outcome::requeue(crate::reconcile::SECRET_POLLING))
    );
    assert_eq!(world.said("ConfigProjected").1, "WaitingForProjection");
}

#[test]
fn a_deleting_backend_reports_detaching_while_its_cinder_exists_and_touches_nothing_else() {
    let world = World::of(backend(&[FINALIZER], true)).with(cinder(None));
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.said("Ready"), cond("False", "Detaching", DETACHING));
    assert_eq!(
        world.said("CredentialsReady"),
        cond("True", "CredentialsNotRequired", "earlier"),
        "the gate is not re-evaluated"
    );
    assert_eq!(other_kinds(&world), ["Cinder"], "no Secret, no Deployment");
    assert!(world.stored().holds(FINALIZER), "the Cinder releases it");
    assert!(world.cluster.events().is_empty());
    world.cluster.clear_calls();
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert!(world.cluster.writes().is_empty(), "converged: no write");
}

#[test]
fn a_deleting_backend_whose_cinder_is_gone_is_released_with_an_event() {
    // (the Cinder's get fails with, the finalizers kept)
    let table: Vec<Option<ApiError>> = vec![None, Some(ApiError::NotServed("cinders".into()))];
    for failure in table {
        let world = World::of(backend(&[FINALIZER, "example.com/keep"], true));
        if let Some(failure) = failure.clone() {
            world.cluster.fail(Op::Get, "cinder", failure, 1);
        }
        assert_eq!(world.run(), Ok(Outcome::done()), "{failure:?}");
        assert_eq!(
            world.stored().metadata.finalizers,
            Some(vec!["example.com/keep".to_owned()])
        );
        let events: Vec<(EventType, String, String)> = world
            .cluster
            .events()
            .into_iter()
            .map(|(o, e)| {
                assert_eq!(o.name, NFS);
                (e.event_type, e.reason, e.note)
            })
            .collect();
        assert_eq!(
            events,
            [(
                EventType::Normal,
                "ServiceRemoveSkipped".to_owned(),
                SKIPPED.to_owned()
            )]
        );
        assert_eq!(
            world.status_writes(),
            0,
            "a released backend's status is not written"
        );
    }
}

#[test]
fn a_deleting_backend_without_the_finalizer_is_left_alone() {
    let world = World::of(backend(&["example.com/keep"], true)).with(cinder(None));
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert!(other_kinds(&world).is_empty());
    assert!(world.cluster.writes().is_empty());
    assert!(world.cluster.events().is_empty());
}

#[test]
fn a_failed_read_of_the_cinder_while_deleting_fails_the_pass_and_keeps_the_finalizer() {
    let world = World::of(backend(&[FINALIZER], true)).with(cinder(None));
    world
        .cluster
        .fail(Op::Get, "cinder", ApiError::Forbidden("no".into()), 1);
    assert_eq!(
        world.run(),
        Err(ReconcileError::Transient(
            "fetching parent Cinder openstack/cinder: forbidden: no".into()
        ))
    );
    assert!(world.stored().holds(FINALIZER));
    assert!(world.cluster.writes().is_empty());
}

#[test]
fn a_conflict_adding_the_finalizer_runs_the_pass_again_after_a_second() {
    let world = World::of(backend(&[], false)).with(cinder(None));
    world
        .cluster
        .fail(Op::Patch, NFS, ApiError::Conflict("stale".into()), 1);
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(1))));
    assert!(!world.stored().holds(FINALIZER));
    assert_eq!(world.run(), Ok(Outcome::requeue(NEXT_PASS)));
    assert!(world.stored().holds(FINALIZER));
}
