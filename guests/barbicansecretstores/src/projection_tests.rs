use std::time::Duration;

use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome};

use crate::testing::{
    ALL, PROJECTION_SECRET, RENDERED, World, cond, deployment, projection, secret,
};

const PROJECTED: &str = "secret-store section is rendered into the Barbican Deployment's config";
const WAITING: &str =
    "waiting for the Barbican Deployment to mount this store's rendered secret-store section";

/// (case, objects added, ConfigProjected as (status, reason, message), requeue)
type Row = (
    &'static str,
    Vec<serde_json::Value>,
    (&'static str, &'static str, &'static str),
    Duration,
);

#[test]
fn config_projected_follows_the_section_header_through_the_deployment_config_volume() {
    let fifteen_min = Duration::from_secs(15 * 60);
    let thirty = Duration::from_secs(30);
    // (case, objects added, ConfigProjected, requeue)
    let rows: Vec<Row> = vec![
        (
            "the header in barbican.conf",
            vec![deployment("config"), projection(RENDERED)],
            ("True", "ConfigProjected", PROJECTED),
            fifteen_min,
        ),
        (
            "no Deployment",
            vec![],
            ("False", "WaitingForProjection", WAITING),
            thirty,
        ),
        (
            "no config volume",
            vec![deployment("backends"), projection(RENDERED)],
            ("False", "WaitingForProjection", WAITING),
            thirty,
        ),
        (
            "no projection Secret",
            vec![deployment("config")],
            ("False", "WaitingForProjection", WAITING),
            thirty,
        ),
        (
            "another data key",
            vec![
                deployment("config"),
                secret(PROJECTION_SECRET, &[("other.conf", RENDERED)]),
            ],
            ("False", "WaitingForProjection", WAITING),
            thirty,
        ),
        (
            "only a longer store's section",
            vec![
                deployment("config"),
                projection("[secretstore:vault2]\n[secretstore:vaults]\n"),
            ],
            ("False", "WaitingForProjection", WAITING),
            thirty,
        ),
        (
            "the header inside a value",
            vec![
                deployment("config"),
                projection("[DEFAULT]\nx = [secretstore:vault]\n"),
            ],
            ("False", "WaitingForProjection", WAITING),
            thirty,
        ),
        (
            "a CRLF line",
            vec![
                deployment("config"),
                projection("[DEFAULT]\r\n[secretstore:vault]\r\n"),
            ],
            ("True", "ConfigProjected", PROJECTED),
            fifteen_min,
        ),
    ];
    for (case, objects, (status, reason, message), requeue) in rows {
        let world = objects
            .into_iter()
            .fold(World::brownfield(&ALL), World::with);
        assert_eq!(world.run(), Ok(Outcome::requeue(requeue)), "{case}");
        assert_eq!(
            world.said("ConfigProjected"),
            cond(status, reason, message),
            "{case}"
        );
        // Waiting for the projection is no failure: no event.
        assert_eq!(
            world.events(),
            Vec::<(String, String, String)>::new(),
            "{case}"
        );
    }
}

#[test]
fn a_failed_read_of_the_barbican_or_its_deployment_keeps_a_true_condition_and_fails_the_pass() {
    let mut world = World::brownfield(&ALL).projected();
    world.run().expect("projected");
    assert_eq!(world.said("ConfigProjected").0, "True");
    world.cluster =
        world
            .cluster
            .failing(Op::Get, "barbican", ApiError::Unavailable("etcd".into()));
    let error = world.run().expect_err("fails");
    assert!(error.to_string().contains("fetching "), "{error}");
    assert!(error.to_string().ends_with("unavailable: etcd"), "{error}");
    assert_eq!(world.said("ConfigProjected").0, "True");
}

#[test]
fn a_store_whose_credentials_do_not_pass_is_not_observed() {
    let world = World::brownfield(&["read"]).projected();
    world.run().expect("a pass");
    assert_eq!(world.said("CredentialsReady").1, "InsufficientCapabilities");
    assert_eq!(world.condition("ConfigProjected"), None);
}
