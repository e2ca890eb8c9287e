use serde_json::{Value, json};
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::reconcile::SECRET_POLLING;
use crate::testing::{
    CEPHX_KEY, KEY_SECRET, Said, World, cinder, cond, external_secret, key_secret, nfs_target,
    rbd_target, secret,
};

const AVAILABLE: &str = "RBD key Secret \"rbdbk-key\" carries the userKey data key";

fn waiting(message: &str) -> Said {
    cond("False", "WaitingForCredentials", message)
}

#[test]
fn the_rbd_gate_passes_only_a_secret_with_a_cephx_user_key_and_says_why_it_waits() {
    let other_key = || secret(KEY_SECRET, &[("keyring", "[client.cinder]")]);
    // (objects besides the target and its Cinder, CredentialsReady)
    let table: Vec<(Vec<Value>, Said)> = vec![
        (
            vec![key_secret(CEPHX_KEY)],
            cond("True", "CredentialsAvailable", AVAILABLE),
        ),
        (
            vec![],
            waiting("RBD key ExternalSecret openstack/rbdbk-key not found yet"),
        ),
        (
            vec![other_key(), external_secret(true)],
            waiting("RBD key Secret exists but is missing expected keys"),
        ),
        (
            vec![external_secret(false)],
            waiting("waiting for the RBD key Secret to carry the userKey data key"),
        ),
        (
            vec![key_secret(" \n")],
            waiting("Secret \"rbdbk-key\" carries an empty userKey"),
        ),
        (
            vec![key_secret("not a key!")],
            waiting(
                "Secret \"rbdbk-key\" carries a userKey that is not a cephx key (base64 expected)",
            ),
        ),
    ];
    assert_eq!(table.iter().filter(|(_, s)| s.0 == "True").count(), 1);
    for (objects, expected) in table {
        let world = objects
            .into_iter()
            .fold(World::of(rbd_target()).with(cinder(None)), World::with);
        // Once the gate passes the projection is observed next, and is not there.
        assert_eq!(
            world.run(),
            Ok(Outcome::requeue(SECRET_POLLING)),
            "{expected:?}"
        );
        assert_eq!(world.said("CredentialsReady"), expected);
        let projection = world.condition("ConfigProjected");
        assert_eq!(
            projection.is_some(),
            expected.0 == "True",
            "observed only once the gate passed: {expected:?}"
        );
    }
}

#[test]
fn an_nfs_target_needs_no_credentials_once_its_cinder_resolves() {
    let world = World::of(nfs_target()).with(cinder(None));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(
        world.said("CredentialsReady"),
        cond(
            "True",
            "CredentialsNotRequired",
            "the NFS export is mounted with the pod's own identity, so no credentials are required"
        )
    );
    let secret_reads = world
        .cluster
        .calls()
        .iter()
        .filter(|c| c.object().is_some_and(|o| o.kind == "Secret"))
        .count();
    assert_eq!(secret_reads, 0, "an NFS target references no Secret");
}

#[test]
fn an_rbd_target_without_an_rbd_block_waits_for_credentials() {
    let mut target = rbd_target();
    target["spec"]
        .as_object_mut()
        .expect("a spec")
        .remove("rbd");
    let world = World::of(target).with(cinder(None));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(
        world.said("CredentialsReady"),
        waiting("spec.rbd is not set; no RBD key to resolve")
    );
    assert!(world.condition("ConfigProjected").is_none());
}

#[test]
fn a_failed_read_of_the_key_fails_the_pass_and_keeps_a_true_gate() {
    let mut stored = rbd_target();
    stored["status"] = json!({"conditions": [{
        "type": "CredentialsReady", "status": "True", "reason": "CredentialsAvailable",
        "message": AVAILABLE, "observedGeneration": 3,
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    let world = World::of(stored)
        .with(cinder(None))
        .with(key_secret(CEPHX_KEY));
    world
        .cluster
        .fail(Op::Get, KEY_SECRET, ApiError::Unavailable("etcd".into()), 1);
    assert_eq!(
        world.run(),
        Err(ReconcileError::Transient(
            "checking the RBD key of CinderBackupBackend openstack/rbdbk: getting Secret \
             openstack/rbdbk-key: unavailable: etcd"
                .into()
        ))
    );
    assert_eq!(
        world.said("CredentialsReady"),
        cond("True", "CredentialsAvailable", AVAILABLE)
    );
}
