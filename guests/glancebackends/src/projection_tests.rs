use serde_json::{Value, json};
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::glance_ref::Glance;
use crate::reconcile::SECRET_POLLING;
use crate::testing::{
    PROJECTION_SECRET, RENDERED, Said, World, cond, deployment, glance, projection, secret,
};

const PROJECTED: &str = "store section is rendered into the Glance Deployment's backends config";
const WAITING: &str =
    "waiting for the Glance Deployment to mount this backend's rendered store section";

fn waiting() -> Said {
    cond("False", "WaitingForProjection", WAITING)
}

#[test]
fn config_projected_follows_the_header_through_deployment_volume_secret_and_key() {
    let config_map_volume = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "glance", "namespace": "openstack"},
        "spec": {"selector": {}, "template": {"spec": {"containers": [],
            "volumes": [{"name": "backends", "configMap": {"name": PROJECTION_SECRET}}]}}}});
    // (objects besides the backend, its Glance and credentials; ConfigProjected; outcome)
    let table: Vec<(Vec<Value>, Said, Outcome)> = vec![
        (
            vec![deployment("backends"), projection(RENDERED)],
            cond("True", "ConfigProjected", PROJECTED),
            Outcome::done(),
        ),
        (vec![], waiting(), Outcome::requeue(SECRET_POLLING)),
        (
            vec![deployment("config-extra"), projection(RENDERED)],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![config_map_volume, projection(RENDERED)],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![deployment("backends")],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![
                deployment("backends"),
                secret(PROJECTION_SECRET, &[("glance-api.conf", "[images]\n")]),
            ],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![
                deployment("backends"),
                projection("[images2]\ns3_store_host = x\n# [images]\n"),
            ],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![
                deployment("backends"),
                projection("[archive]\r\n[images]\r\n"),
            ],
            cond("True", "ConfigProjected", PROJECTED),
            Outcome::done(),
        ),
    ];
    let mut valid = 0;
    for (objects, expected, outcome) in table {
        let world = objects.into_iter().fold(World::credentialed(), World::with);
        assert_eq!(world.run(), Ok(outcome), "{expected:?}");
        assert_eq!(world.said("ConfigProjected"), expected);
        valid += usize::from(expected.0 == "True");
    }
    assert_eq!(valid, 2);
}

#[test]
fn a_section_that_disappears_turns_config_projected_false_again() {
    let world = World::projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(
        world.said("ConfigProjected"),
        cond("True", "ConfigProjected", PROJECTED)
    );
    world.cluster.put(projection("[archive]\n"));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("ConfigProjected"), waiting());
    assert_eq!(
        world.said("Ready"),
        cond(
            "False",
            "NotAllReady",
            "One or more sub-conditions are not ready"
        )
    );
}

#[test]
fn a_failed_read_of_the_deployment_is_an_error_naming_it_and_keeps_a_true_projection() {
    let world = World::projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    let mut backend = world.stored();
    let glance: Glance = serde_json::from_value(glance(None)).expect("a Glance");
    world
        .cluster
        .fail(Op::Get, "glance", ApiError::Unavailable("etcd".into()), 1);
    let error = super::run(&world.cluster, &mut backend, &glance).expect_err("fails");
    assert_eq!(
        error.to_string(),
        "fetching Deployment openstack/glance: unavailable: etcd"
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
            "fetching projection Secret openstack/glance-backends-0001: forbidden: no".into()
        ))
    );
    assert_eq!(
        world.said("CredentialsReady").1,
        "CredentialsAvailable",
        "the gate ran and passed first"
    );
    assert!(world.condition("ConfigProjected").is_none());
}
