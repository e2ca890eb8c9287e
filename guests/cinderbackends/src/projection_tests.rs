use serde_json::{Value, json};
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::cinder_ref::Cinder;
use crate::reconcile::SECRET_POLLING;
use crate::testing::{
    PROJECTION_SECRET, RENDERED, Said, World, cinder, cond, deployment, not_all_ready, projection,
    secret,
};

const PROJECTED: &str =
    "the backend section is rendered into this backend's cinder-volume Deployment";
const WAITING: &str =
    "waiting for this backend's cinder-volume Deployment to mount its rendered backend section";
const DEPLOYMENT: &str = "cinder-volume-nfs-a";

fn waiting() -> Said {
    cond("False", "WaitingForProjection", WAITING)
}

#[test]
fn config_projected_follows_the_header_through_deployment_volume_secret_and_key() {
    let config_map_volume = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": DEPLOYMENT, "namespace": "openstack"},
        "spec": {"selector": {}, "template": {"spec": {"containers": [],
            "volumes": [{"name": "backend", "configMap": {"name": PROJECTION_SECRET}}]}}}});
    // (objects besides the backend and its Cinder; ConfigProjected; outcome)
    let table: Vec<(Vec<Value>, Said, Outcome)> = vec![
        (
            vec![deployment(DEPLOYMENT, "backend"), projection(RENDERED)],
            cond("True", "ConfigProjected", PROJECTED),
            Outcome::done(),
        ),
        (vec![], waiting(), Outcome::requeue(SECRET_POLLING)),
        (
            vec![deployment("cinder", "backend"), projection(RENDERED)],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![deployment(DEPLOYMENT, "backends"), projection(RENDERED)],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![config_map_volume, projection(RENDERED)],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![deployment(DEPLOYMENT, "backend")],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![
                deployment(DEPLOYMENT, "backend"),
                secret(PROJECTION_SECRET, &[("volume.conf", "[nfs-a]\n")]),
            ],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![
                deployment(DEPLOYMENT, "backend"),
                projection("[nfs-a2]\nvolume_backend_name = nfs-a2\n# [nfs-a]\n"),
            ],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
    ];
    assert_eq!(table.iter().filter(|(_, s, _)| s.0 == "True").count(), 1);
    for (objects, expected, outcome) in table {
        let world = objects.into_iter().fold(World::attached(), World::with);
        assert_eq!(world.run(), Ok(outcome), "{expected:?}");
        assert_eq!(world.said("ConfigProjected"), expected);
    }
}

#[test]
fn a_section_that_disappears_turns_config_projected_false_again() {
    let world = World::projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(
        world.said("ConfigProjected"),
        cond("True", "ConfigProjected", PROJECTED)
    );
    world.cluster.put(projection("[nfs-b]\n"));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("ConfigProjected"), waiting());
    assert_eq!(world.said("Ready"), not_all_ready());
}

#[test]
fn a_failed_read_of_the_deployment_is_an_error_naming_it_and_keeps_a_true_projection() {
    let world = World::projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    let mut backend = world.stored();
    let cinder: Cinder = serde_json::from_value(cinder(None)).expect("a Cinder");
    world
        .cluster
        .fail(Op::Get, DEPLOYMENT, ApiError::Unavailable("etcd".into()), 1);
    let error = super::run(&world.cluster, &mut backend, &cinder).expect_err("fails");
    assert_eq!(
        error.to_string(),
        "fetching Deployment openstack/cinder-volume-nfs-a: unavailable: etcd"
    );
    let projected = backend
        .status
        .iter()
        .flat_map(|s| &s.conditions)
        .find(|c| c.type_ == "ConfigProjected")
        .map(|c| (c.status.as_str(), c.reason.as_str()));
    assert_eq!(projected, Some(("True", "ConfigProjected")));
}

#[test]
fn a_failed_read_of_the_projection_secret_fails_the_pass_naming_it() {
    let world = World::projected();
    world.cluster.fail(
        Op::Get,
        PROJECTION_SECRET,
        ApiError::Forbidden("no".into()),
        1,
    );
    assert_eq!(
        world.run(),
        Err(ReconcileError::Transient(
            "fetching projection Secret openstack/cinder-backend-nfs-a-0001: forbidden: no".into()
        ))
    );
    assert_eq!(
        world.said("CredentialsReady").1,
        "CredentialsNotRequired",
        "the gate ran and passed first"
    );
    assert!(world.condition("ConfigProjected").is_none());
}
