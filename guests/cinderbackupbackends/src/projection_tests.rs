use serde_json::{Value, json};
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::reconcile::SECRET_POLLING;
use crate::testing::{PROJECTION_SECRET, Said, World, cond, deployment, not_all_ready};

const PROJECTED: &str = "the driver section is rendered into the cinder-backup Deployment";
const WAITING: &str = "waiting for the cinder-backup Deployment to mount this backup target's rendered driver section";

fn waiting() -> Said {
    cond("False", "WaitingForProjection", WAITING)
}

#[test]
fn config_projected_follows_the_name_of_the_secret_the_backup_volume_mounts() {
    let config_map_volume = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "cinder-backup", "namespace": "openstack"},
        "spec": {"selector": {}, "template": {"spec": {"containers": [],
            "volumes": [{"name": "backup", "configMap": {"name": PROJECTION_SECRET}}]}}}});
    // (objects besides the target and its Cinder; ConfigProjected; outcome)
    let table: Vec<(Vec<Value>, Said, Outcome)> = vec![
        (
            vec![deployment("backup", PROJECTION_SECRET)],
            cond("True", "ConfigProjected", PROJECTED),
            Outcome::done(),
        ),
        (vec![], waiting(), Outcome::requeue(SECRET_POLLING)),
        (
            vec![deployment("backups", PROJECTION_SECRET)],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![config_map_volume],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![deployment("backup", "cinder-backup-nfsbk-archive-5f7c9d")],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![deployment("backup", "cinder-backup-other-5f7c9d")],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![deployment("backup", "cinder-backup-nfsbk")],
            waiting(),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![deployment("backup", "nohyphen")],
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
fn the_secret_content_is_never_read() {
    let world = World::projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    let secret_reads = world
        .cluster
        .calls()
        .iter()
        .filter(|c| c.object().is_some_and(|o| o.kind == "Secret"))
        .count();
    assert_eq!(secret_reads, 0);
}

#[test]
fn a_rollout_to_another_target_turns_config_projected_false_again() {
    let world = World::projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    world
        .cluster
        .put(deployment("backup", "cinder-backup-other-0001"));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("ConfigProjected"), waiting());
    assert_eq!(world.said("Ready"), not_all_ready());
}

#[test]
fn a_failed_read_of_the_backup_deployment_fails_the_pass_and_keeps_a_true_projection() {
    let world = World::projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    world.cluster.fail(
        Op::Get,
        "cinder-backup",
        ApiError::Unavailable("etcd".into()),
        1,
    );
    assert_eq!(
        world.run(),
        Err(ReconcileError::Transient(
            "fetching backup Deployment openstack/cinder-backup: unavailable: etcd".into()
        ))
    );
    assert_eq!(
        world.said("ConfigProjected"),
        cond("True", "ConfigProjected", PROJECTED)
    );
}
