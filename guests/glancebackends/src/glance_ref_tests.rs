use std::rc::Rc;

use serde_json::json;
use wasm_operator_sdk::testing::{FakeCluster, Op};
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::reconcile::SECRET_POLLING;
use crate::testing::{RENDERED, World, backend, cond, credentials, deployment, glance, projection};

const WAITING_FOR_PARENT: &str = "parent Glance openstack/glance does not exist; the cluster this backend's credentials belong on is unknown";
const DEMOTED: &str = "parent Glance openstack/glance does not exist; nothing mounts this backend's rendered store section";

/// The backend with a ConfigProjected of `status` stored from an earlier pass.
fn with_projected(status: &str) -> serde_json::Value {
    let mut backend = backend();
    backend["status"] = json!({"conditions": [{
        "type": "ConfigProjected", "status": status, "reason": "Earlier", "message": "earlier",
        "observedGeneration": 2, "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    backend
}

#[test]
fn a_backend_without_its_glance_waits_for_the_parent_and_does_not_read_its_credentials() {
    let world = World::of(backend()).with(credentials());
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(
        world.said("CredentialsReady"),
        cond("False", "WaitingForParent", WAITING_FOR_PARENT)
    );
    assert_eq!(
        world
            .condition("CredentialsReady")
            .map(|c| c.observed_generation),
        Some(Some(3))
    );
    assert!(
        world.condition("ConfigProjected").is_none(),
        "never observed, left absent"
    );
    assert_eq!(
        world.said("Ready"),
        cond(
            "False",
            "NotAllReady",
            "One or more sub-conditions are not ready"
        )
    );
    let secret_reads = world
        .cluster
        .calls()
        .iter()
        .filter(|c| c.object().is_some_and(|o| o.kind == "Secret"))
        .count();
    assert_eq!(
        secret_reads, 0,
        "the credentials belong on an unknown cluster"
    );
}

#[test]
fn a_missing_glance_demotes_a_true_config_projected_and_leaves_a_false_one() {
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
fn a_glance_kind_the_cluster_does_not_serve_reads_as_a_missing_glance() {
    let world = World::of(with_projected("True")).with(credentials());
    world
        .cluster
        .fail(Op::Get, "glance", ApiError::NotServed("glances".into()), 1);
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
fn a_glance_on_an_unregistered_target_cluster_holds_its_backends_and_demotes_nothing() {
    let world = World::of(with_projected("True"))
        .with(glance(Some("edge")))
        .with(credentials());
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
fn a_glance_on_a_registered_target_has_its_backend_read_credentials_and_projection_there() {
    let target = Rc::new(
        FakeCluster::new()
            .with(credentials())
            .with(deployment("backends"))
            .with(projection(RENDERED)),
    );
    let mut world = World::of(backend()).with(glance(Some("edge")));
    world.cluster = world
        .cluster
        .with_target("edge", "openstack.c5c3.io", target.clone());
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.said("CredentialsReady").0, "True");
    assert_eq!(world.said("ConfigProjected").0, "True");
    let here = world
        .cluster
        .calls()
        .iter()
        .filter(|c| {
            c.object()
                .is_some_and(|o| o.kind != "GlanceBackend" && o.kind != "Glance")
        })
        .count();
    assert_eq!(here, 0, "{:?}", world.cluster.calls());
    assert!(
        target
            .calls()
            .iter()
            .any(|c| c.object().is_some_and(|o| o.kind == "Deployment")),
        "{:?}",
        target.calls()
    );
}

#[test]
fn a_failed_read_of_the_glance_fails_the_pass_naming_it_and_sets_no_gate() {
    let world = World::of(backend()).with(glance(None)).with(credentials());
    world
        .cluster
        .fail(Op::Get, "glance", ApiError::Forbidden("no".into()), 1);
    assert_eq!(
        world.run(),
        Err(ReconcileError::Transient(
            "fetching parent Glance openstack/glance: forbidden: no".into()
        ))
    );
    assert!(world.condition("CredentialsReady").is_none());
    assert_eq!(
        world.said("Ready"),
        cond(
            "False",
            "NotAllReady",
            "One or more sub-conditions are not ready"
        ),
        "the status is still written with Ready and observedGeneration"
    );
    assert_eq!(
        world.stored().status.map(|s| s.observed_generation),
        Some(3)
    );
}
