use serde_json::{Value, json};

use super::*;
use crate::testing::FakeCluster;

const KEY: &str = "AQDHlkVoYx3QKRAAk9m6j4QzG8w2yK0hfr9c6g==";

#[test]
fn a_cephx_key_is_padded_standard_base64_once_trimmed() {
    // (value, fault)
    let table: &[(&str, Option<CephxFault>)] = &[
        (KEY, None),
        (" AQDHlkVoYx3QKRAAk9m6j4QzG8w2yK0hfr9c6g==\n", None),
        ("", Some(CephxFault::Empty)),
        (" \n\t", Some(CephxFault::Empty)),
        ("not a key!", Some(CephxFault::NotBase64)),
        (
            "key = AQDHlkVoYx3QKRAAk9m6j4QzG8w2yK0hfr9c6g==",
            Some(CephxFault::NotBase64),
        ),
        (
            "AQDHlkVoYx3QKRAA\n[client.admin]",
            Some(CephxFault::NotBase64),
        ),
        (
            "AQDHlkVoYx3QKRAAk9m6j4QzG8w2yK0hfr9c6g",
            Some(CephxFault::NotBase64),
        ),
        ("AQDH=lkV", Some(CephxFault::NotBase64)),
        ("AQ======", Some(CephxFault::NotBase64)),
        ("AQDH-_kV", Some(CephxFault::NotBase64)),
    ];
    for (value, expected) in table {
        assert_eq!(cephx_key_fault(value), *expected, "{value:?}");
    }
}

#[test]
fn a_fault_message_names_the_secret_and_the_key_never_the_value() {
    assert_eq!(
        CephxFault::Empty.message("rbd1-key", "userKey"),
        "Secret \"rbd1-key\" carries an empty userKey"
    );
    assert_eq!(
        CephxFault::NotBase64.message("rbd1-key", "userKey"),
        "Secret \"rbd1-key\" carries a userKey that is not a cephx key (base64 expected)"
    );
}

fn secret(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
           "metadata": {"name": "rbd1-key", "namespace": "openstack"}, "data": data})
}

fn gate() -> CredentialGate<'static> {
    CredentialGate {
        noun: "RBD key",
        namespace: "openstack",
        name: "rbd1-key",
        expected_keys: &["userKey"],
        waiting_message: "waiting for the RBD key Secret to carry the userKey data key",
    }
}

#[test]
fn the_gate_passes_a_secret_whose_key_is_a_cephx_key_and_refuses_another() {
    let b = base64_of;
    // (the Secret's data, the outcome)
    let table: Vec<(Option<Value>, GateOutcome)> = vec![
        (Some(json!({"userKey": b(KEY)})), GateOutcome::Pass),
        (
            Some(json!({"userKey": b(" \n")})),
            GateOutcome::Wait {
                why: Waiting::Refused,
                message: "Secret \"rbd1-key\" carries an empty userKey".into(),
            },
        ),
        (
            Some(json!({"userKey": "//79"})),
            GateOutcome::Wait {
                why: Waiting::Refused,
                message: "Secret \"rbd1-key\" carries a userKey that is not a cephx key (base64 expected)"
                    .into(),
            },
        ),
        (
            None,
            GateOutcome::Wait {
                why: Waiting::ExternalSecretNotFound,
                message: "RBD key ExternalSecret openstack/rbd1-key not found yet".into(),
            },
        ),
    ];
    for (data, expected) in table {
        let cluster = data
            .clone()
            .into_iter()
            .fold(FakeCluster::new(), |c, d| c.with(secret(d)));
        let got = cephx_key_gate(&cluster, &gate()).expect("no failure");
        assert_eq!(got, expected, "{data:?}");
    }
}

/// `text` as a Secret's data value (standard base64).
fn base64_of(text: &str) -> Value {
    serde_json::to_value(k8s_openapi::ByteString(text.as_bytes().to_vec())).expect("encodes")
}
