//! The backend name (CobaltCore's webhook): a backend's `metadata.name` becomes its
//! `[<name>]` cinder.conf section, its `volume_backend_name` and the `{cinder}@{name}`
//! host identity its volumes are keyed by. Compared lowercased; at most one error from
//! [`check`], and on create the budget ([`check_budget`]).
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | not `default` | `metadata.name` | name must not be "default": it names cinder.conf's [DEFAULT] section, so the backend's options would be read as service-wide ones |
//! | not a section of the option catalog ([`CATALOG_SECTIONS`]) | `metadata.name` | name "n" collides with the [n] section cinder.conf already carries |
//! | no `@` or `#` | `metadata.name` | name must not contain "@" or "#": cinder reads them as the separators of … |
//! | create: name + cinderRef.name ≤ 47 | `metadata.name` | metadata.name plus spec.cinderRef.name must not exceed 47 characters: … |
//! | create: name ≤ 35 | `metadata.name` | metadata.name must not exceed 35 characters: … |
//!
//! The budget is checked on create only: both names are immutable, and the update that
//! releases the finalizer must never be refused.
//!
//! DECISION: CobaltCore derives the reserved sections from the option catalogs it embeds
//! (2025.2, 2026.1, 2026.2); [`CATALOG_SECTIONS`] is the 2025.2 catalog's section list.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

/// The sections of cinder's option catalog (lowercase).
pub(crate) const CATALOG_SECTIONS: &[&str] = &[
    "default",
    "backend",
    "backend_defaults",
    "barbican",
    "barbican_service_user",
    "brcd_fabric_example",
    "cisco_fabric_example",
    "coordination",
    "cors",
    "database",
    "fc-zone-manager",
    "glance",
    "healthcheck",
    "key_manager",
    "keymgr",
    "keystone_authtoken",
    "nova",
    "os_brick",
    "oslo_concurrency",
    "oslo_messaging_kafka",
    "oslo_messaging_notifications",
    "oslo_messaging_rabbit",
    "oslo_middleware",
    "oslo_policy",
    "oslo_reports",
    "oslo_versionedobjects",
    "privsep",
    "profiler",
    "profiler_jaeger",
    "profiler_otlp",
    "sample_castellan_source",
    "sample_remote_file_source",
    "service_user",
    "ssl",
    "vault",
];

/// The most characters of metadata.name plus spec.cinderRef.name (the service-remove
/// Job's name is a label value, ≤ 63).
pub(crate) const MAX_NAME_PLUS_CINDER_REF: usize = 47;
/// The most characters of metadata.name alone (the Job's dedupe annotation key).
pub(crate) const MAX_NAME: usize = 63 - "last-service-remove-".len() - "-job-uid".len();

/// Checks the backend's name.
pub(super) fn check(name: &str, errors: &mut FieldErrors) {
    let lower = name.to_lowercase();
    let value = json!(name);
    if lower == "default" {
        errors.invalid(
            "metadata.name",
            &value,
            "name must not be \"default\": it names cinder.conf's [DEFAULT] section, so the \
             backend's options would be read as service-wide ones",
        );
    } else if CATALOG_SECTIONS.contains(&lower.as_str()) {
        errors.invalid(
            "metadata.name",
            &value,
            &format!(
                "name {name:?} collides with the [{lower}] section cinder.conf already carries"
            ),
        );
    } else if name.contains(['@', '#']) {
        errors.invalid(
            "metadata.name",
            &value,
            r##"name must not contain "@" or "#": cinder reads them as the separators of a service identity ("<cinder>@<backend>") and of a pool within it ("<host>#<pool>")"##,
        );
    }
}

/// Checks the two name bounds a detach puts on a new backend.
pub(super) fn check_budget(name: &str, cinder: &str, errors: &mut FieldErrors) {
    let value = json!(name);
    if name.len() + cinder.len() > MAX_NAME_PLUS_CINDER_REF {
        errors.invalid(
            "metadata.name",
            &value,
            &format!(
                "metadata.name plus spec.cinderRef.name must not exceed \
                 {MAX_NAME_PLUS_CINDER_REF} characters: detaching this backend runs the \
                 \"<cinder>-<name>-service-remove\" Job, whose name is copied into a label \
                 value Kubernetes caps at 63 characters"
            ),
        );
    }
    if name.len() > MAX_NAME {
        errors.invalid(
            "metadata.name",
            &value,
            &format!(
                "metadata.name must not exceed {MAX_NAME} characters: detaching this backend \
                 records its terminal state under the annotation key \
                 \"cobaltcore.c5c3.io/last-service-remove-<name>-job-uid\" on the Cinder, and \
                 Kubernetes caps an annotation key's name part at 63 characters"
            ),
        );
    }
}
