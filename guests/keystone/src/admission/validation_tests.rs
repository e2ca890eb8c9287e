use serde_json::json;
use wasm_operator_sdk::admission::Operation;
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::admission::tests::{keystone, request, with};

#[test]
fn every_field_at_fault_is_named_in_one_denial_in_the_order_of_the_facts() {
    let object = with(
        keystone(),
        &[
            ("/spec/extraConfig", json!({"token": {"expirations": "1"}})),
            ("/spec/deployment/preStopSleepSeconds", json!(40)),
            ("/spec/trustFlush/schedule", json!("hourly")),
            ("/spec/fernet/maxActiveKeys", json!(2)),
            ("/spec/deployment/replicas", json!(0)),
        ],
    );
    let validated = validate_object(
        &FakeCluster::new(),
        &request(Operation::Create, object, None),
    );
    let denial = validated.denial.expect("denied");
    assert_eq!(
        denial.message,
        "Keystone.keystone.openstack.c5c3.io \"keystone\" is invalid: [\
         spec.deployment.replicas: Invalid value: 0: must be at least 1, \
         spec.fernet.maxActiveKeys: Invalid value: 2: must be at least 3, \
         spec.trustFlush.schedule: Invalid value: \"hourly\": invalid cron expression: expected \
         exactly 5 fields, found 1: [hourly], \
         spec.deployment.preStopSleepSeconds: Invalid value: 40: must be less than \
         terminationGracePeriodSeconds (30), \
         spec.extraConfig[token][expirations]: Invalid value: \"expirations\": no such option in \
         the keystone 2022.2 option catalog]"
    );
    assert_eq!(denial.fields.len(), 5);
}

#[test]
fn an_object_that_does_not_read_as_a_keystone_is_denied_naming_the_cause() {
    let table = [
        (json!(3), None),
        (
            json!("three"),
            Some(
                "Keystone \"keystone\" cannot be read: invalid type: string \"three\", expected i32",
            ),
        ),
    ];
    for (replicas, expected) in table {
        let object = with(
            keystone(),
            &[("/spec/deployment/replicas", replicas.clone())],
        );
        let validated = validate_object(
            &FakeCluster::new(),
            &request(Operation::Create, object, None),
        );
        let message = validated.denial.map(|d| d.message);
        match expected {
            None => assert_eq!(message, None),
            Some(prefix) => {
                let message = message.expect("denied");
                assert!(message.starts_with(prefix), "{message}");
            }
        }
    }
}
