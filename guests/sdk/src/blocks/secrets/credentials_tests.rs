use serde_json::{Value, json};

use super::*;
use crate::error::ApiError;
use crate::testing::{Call, FakeCluster, Op};

const WAITING: &str = "Waiting for ESO to sync database credentials from OpenBao";

fn gate() -> CredentialGate<'static> {
    CredentialGate {
        noun: "Database credentials",
        namespace: "ns",
        name: "db",
        expected_keys: &["username", "password"],
        waiting_message: WAITING,
    }
}

/// The Secret `ns/db` holding `keys`.
fn secret(keys: &[&str]) -> Value {
    let data: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| (k.to_string(), json!("eA==")))
        .collect();
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": "ns"}, "data": data})
}

/// The ExternalSecret `ns/db`, with a Ready condition of `ready` when given.
fn external_secret(ready: Option<&str>) -> Value {
    let status = match ready {
        Some(status) => json!({"conditions": [{"type": "Ready", "status": status}]}),
        None => json!({}),
    };
    json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
        "metadata": {"name": "db", "namespace": "ns"}, "status": status})
}

fn cluster(objects: &[Value]) -> FakeCluster {
    objects
        .iter()
        .fold(FakeCluster::new(), |c, o| c.with(o.clone()))
}

#[test]
fn a_secret_with_every_expected_key_passes_without_reading_its_external_secret() {
    let cluster = cluster(&[secret(&["username", "password"])]);
    assert_eq!(
        credential_gate(&cluster, &gate()).expect("reads"),
        GateOutcome::Pass
    );
    let external_reads = cluster
        .calls()
        .iter()
        .filter(|c| matches!(c, Call::Get(r, _) if r.kind == "ExternalSecret"))
        .count();
    assert_eq!(external_reads, 0, "{:?}", cluster.calls());
}

#[test]
fn a_gate_that_holds_says_why_from_the_external_secret() {
    let cases: &[(&str, Vec<Value>, Waiting, &str)] = &[
        (
            "no Secret and no ExternalSecret: the ExternalSecret is not found yet",
            vec![],
            Waiting::ExternalSecretNotFound,
            "Database credentials ExternalSecret ns/db not found yet",
        ),
        (
            "a Secret missing a key and no ExternalSecret: not found yet",
            vec![secret(&["username"])],
            Waiting::ExternalSecretNotFound,
            "Database credentials ExternalSecret ns/db not found yet",
        ),
        (
            "a Secret missing a key whose ExternalSecret is Ready: keys are missing",
            vec![secret(&["username"]), external_secret(Some("True"))],
            Waiting::MissingExpectedKeys,
            "Database credentials Secret exists but is missing expected keys",
        ),
        (
            "no Secret and an ExternalSecret not synced: the waiting text",
            vec![external_secret(None)],
            Waiting::NotSynced,
            WAITING,
        ),
        (
            "a Secret missing a key whose ExternalSecret is Ready=False: the waiting text",
            vec![secret(&["password"]), external_secret(Some("False"))],
            Waiting::NotSynced,
            WAITING,
        ),
    ];
    for (case, objects, why, message) in cases {
        let got = credential_gate(&cluster(objects), &gate()).expect(case);
        assert_eq!(
            got,
            GateOutcome::Wait {
                why: *why,
                message: (*message).to_owned()
            },
            "{case}"
        );
    }
}

#[test]
fn a_gate_that_holds_becomes_the_steps_false_condition_and_one_that_passed_none() {
    let outcome = waiting_outcome(&gate(), ExternalSecretState::NotSynced);
    let condition = outcome
        .condition("SecretsReady", "WaitingForDBCredentials", 3)
        .expect("holds");
    assert_eq!(
        condition,
        NewCondition {
            type_: "SecretsReady",
            status: "False",
            reason: "WaitingForDBCredentials",
            message: WAITING,
            observed_generation: 3,
        }
    );
    assert!(!outcome.passed());
    assert!(
        GateOutcome::Pass
            .condition("SecretsReady", "R", 3)
            .is_none()
    );
    assert!(GateOutcome::Pass.passed());
}

#[test]
fn a_failed_secret_read_is_an_error_naming_the_secret() {
    let failing = FakeCluster::new().failing(Op::Get, "db", ApiError::Forbidden("no".into()));
    let err = credential_gate(&failing, &gate()).expect_err("the Secret read fails");
    assert!(
        matches!(&err, Error::Get { what, source: crate::Error::Api(ApiError::Forbidden(_)) }
            if what == "Secret ns/db"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "getting Secret ns/db: forbidden: no");
}
