use serde_json::{Value, json};
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::reconcile::SECRET_POLLING;
use crate::testing::{
    CREDENTIALS, Said, World, backend, cond, credentials, external_secret, glance, secret,
};

const NOT_FOUND: &str = "S3 credentials ExternalSecret openstack/images-s3 not found yet";
const MISSING_KEYS: &str = "S3 credentials Secret exists but is missing expected keys";
const NOT_SYNCED: &str = "waiting for the S3 credentials Secret to carry the required keys";
const AVAILABLE: &str = "S3 credentials Secret \"images-s3\" carries the required keys";

fn waiting(message: &str) -> Said {
    cond("False", "WaitingForCredentials", message)
}

#[test]
fn the_gate_passes_only_a_secret_with_both_keys_and_says_why_it_waits() {
    let only_id = || secret(CREDENTIALS, &[("access-key-id", "AKIA")]);
    // (objects besides the backend and its Glance, CredentialsReady, the outcome)
    let table: Vec<(Vec<Value>, Said, Outcome)> = vec![
        (
            vec![credentials()],
            cond("True", "CredentialsAvailable", AVAILABLE),
            // the projection is observed next, and is not there
            Outcome::requeue(SECRET_POLLING),
        ),
        (vec![], waiting(NOT_FOUND), Outcome::requeue(SECRET_POLLING)),
        (
            vec![only_id()],
            waiting(NOT_FOUND),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![only_id(), external_secret(true)],
            waiting(MISSING_KEYS),
            Outcome::requeue(SECRET_POLLING),
        ),
        (
            vec![external_secret(false)],
            waiting(NOT_SYNCED),
            Outcome::requeue(SECRET_POLLING),
        ),
    ];
    for (objects, expected, outcome) in table {
        let world = objects
            .into_iter()
            .fold(World::of(backend()).with(glance(None)), World::with);
        assert_eq!(world.run(), Ok(outcome), "{expected:?}");
        assert_eq!(world.said("CredentialsReady"), expected);
        let projection = world.condition("ConfigProjected");
        if expected.0 == "True" {
            assert!(projection.is_some(), "observed once the gate passed");
        } else {
            assert!(
                projection.is_none(),
                "not observed while the gate holds: {expected:?}"
            );
        }
    }
}

#[test]
fn a_backend_without_an_s3_block_waits_for_credentials() {
    let mut backend = backend();
    backend["spec"]
        .as_object_mut()
        .expect("a spec")
        .remove("s3");
    let world = World::of(backend).with(glance(None));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(
        world.said("CredentialsReady"),
        waiting("spec.s3 is not set; no S3 credentials to resolve")
    );
    assert!(world.condition("ConfigProjected").is_none());
}

#[test]
fn an_external_secret_kind_the_cluster_does_not_serve_reads_as_not_found_yet() {
    let world = World::of(backend()).with(glance(None));
    // The Secret's read (absent either way), then the ExternalSecret's.
    world.cluster.fail(
        Op::Get,
        CREDENTIALS,
        ApiError::NotServed("externalsecrets".into()),
        2,
    );
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("CredentialsReady"), waiting(NOT_FOUND));
}

#[test]
fn a_failed_read_of_the_credentials_fails_the_pass_and_keeps_a_true_gate() {
    let mut stored = backend();
    stored["status"] = json!({"conditions": [{
        "type": "CredentialsReady", "status": "True", "reason": "CredentialsAvailable",
        "message": AVAILABLE, "observedGeneration": 3,
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    let world = World::of(stored).with(glance(None)).with(credentials());
    world.cluster.fail(
        Op::Get,
        CREDENTIALS,
        ApiError::Unavailable("etcd".into()),
        1,
    );
    assert_eq!(
        world.run(),
        Err(ReconcileError::Transient(
            "checking the S3 credentials of GlanceBackend openstack/images: getting Secret \
             openstack/images-s3: unavailable: etcd"
                .into()
        ))
    );
    assert_eq!(
        world.said("CredentialsReady"),
        cond("True", "CredentialsAvailable", AVAILABLE)
    );
}
