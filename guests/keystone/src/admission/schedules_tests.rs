use serde_json::{Value, json};

use crate::admission::tests::{Table, assert_create_table};

#[test]
fn schedules_are_required_and_must_be_cron() {
    let table: Table<'_> = &[
        (&[], &[]),
        (
            &[("/spec/fernet/rotationSchedule", Value::Null)],
            &["spec.fernet.rotationSchedule: Required value: the default is \"0 0 * * 0\""],
        ),
        (
            &[(
                "/spec/credentialKeys/rotationSchedule",
                json!("@fortnightly"),
            )],
            &[
                "spec.credentialKeys.rotationSchedule: Invalid value: \"@fortnightly\": invalid \
               cron expression: unrecognized descriptor: @fortnightly",
            ],
        ),
        (
            &[("/spec/trustFlush/schedule", Value::Null)],
            &["spec.trustFlush.schedule: Required value: the default is \"0 * * * *\""],
        ),
        (
            &[("/spec/trustFlush/schedule", json!("0 * * *"))],
            &[
                "spec.trustFlush.schedule: Invalid value: \"0 * * *\": invalid cron expression: \
               expected exactly 5 fields, found 4: [0 * * *]",
            ],
        ),
        (&[("/spec/trustFlush", Value::Null)], &[]),
        (&[("/spec/fernet/rotationSchedule", json!("@daily"))], &[]),
    ];
    assert_create_table(table);
}

#[test]
fn an_enabled_password_rotation_needs_a_schedule_a_secret_and_a_long_password() {
    let table: Table<'_> = &[
        (
            &[(
                "/spec/passwordRotation",
                json!({"enabled": true, "schedule": "0 0 1 * *",
                                                "passwordLength": 24}),
            )],
            &[],
        ),
        (
            &[("/spec/passwordRotation", json!({"enabled": true}))],
            &["spec.passwordRotation.schedule: Required value: the default is \"0 0 1 * *\""],
        ),
        (
            &[(
                "/spec/passwordRotation",
                json!({"enabled": true, "schedule": "0 0 32 * *"}),
            )],
            &[
                "spec.passwordRotation.schedule: Invalid value: \"0 0 32 * *\": invalid cron \
               expression: end of range (32) above maximum (31): 32",
            ],
        ),
        (
            &[
                (
                    "/spec/passwordRotation",
                    json!({"enabled": true, "schedule": "@monthly",
                                                  "passwordLength": 23}),
                ),
                ("/spec/bootstrap/adminPasswordSecretRef/name", json!("")),
            ],
            &[
                "spec.bootstrap.adminPasswordSecretRef.name: Required value: must be set when \
                 passwordRotation is enabled",
                "spec.passwordRotation.passwordLength: Invalid value: 23: must be at least 24",
            ],
        ),
        (
            &[(
                "/spec/passwordRotation",
                json!({"schedule": "not cron", "passwordLength": 8}),
            )],
            &[],
        ),
    ];
    assert_create_table(table);
}
