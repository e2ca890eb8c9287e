//! Validation of the Keystone's schedules (facts §1.6): key rotation and `trust_flush`
//! always (when their block is present), admin-password rotation only when enabled —
//! each required and in the cron grammar of [`super::cron`] — and the rest of an enabled
//! password rotation.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use super::cron;
use crate::types::{
    DEFAULT_PASSWORD_ROTATION_SCHEDULE, DEFAULT_ROTATION_SCHEDULE, DEFAULT_TRUST_FLUSH_SCHEDULE,
    KeystoneSpec, MIN_PASSWORD_LENGTH,
};

/// Checks the schedules of `spec`.
pub(super) fn check(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    schedule(
        "spec.fernet.rotationSchedule",
        &spec.fernet.rotation_schedule,
        DEFAULT_ROTATION_SCHEDULE,
        errors,
    );
    schedule(
        "spec.credentialKeys.rotationSchedule",
        &spec.credential_keys.rotation_schedule,
        DEFAULT_ROTATION_SCHEDULE,
        errors,
    );
    if let Some(flush) = &spec.trust_flush {
        schedule(
            "spec.trustFlush.schedule",
            &flush.schedule,
            DEFAULT_TRUST_FLUSH_SCHEDULE,
            errors,
        );
    }
    let Some(rotation) = spec.password_rotation.as_ref().filter(|r| r.enabled) else {
        return;
    };
    schedule(
        "spec.passwordRotation.schedule",
        &rotation.schedule,
        DEFAULT_PASSWORD_ROTATION_SCHEDULE,
        errors,
    );
    if spec.bootstrap.admin_password_secret_ref.name.is_empty() {
        errors.required(
            "spec.bootstrap.adminPasswordSecretRef.name",
            "must be set when passwordRotation is enabled",
        );
    }
    let length = rotation.password_length;
    if length != 0 && length < MIN_PASSWORD_LENGTH {
        errors.invalid(
            "spec.passwordRotation.passwordLength",
            &json!(length),
            &format!("must be at least {MIN_PASSWORD_LENGTH}"),
        );
    }
}

/// `value` at `field` is required and a cron schedule.
fn schedule(field: &str, value: &str, default: &str, errors: &mut FieldErrors) {
    if value.is_empty() {
        errors.required(field, &format!("the default is {default:?}"));
    } else if let Err(e) = cron::check(value) {
        errors.invalid(
            field,
            &json!(value),
            &format!("invalid cron expression: {e}"),
        );
    }
}

#[cfg(test)]
#[path = "schedules_tests.rs"]
mod tests;
