//! The Keystone's defaulting (facts §1.5).
//!
//! Every default fills a field only when it is unset; a set value is never changed. Blocks
//! the user may leave out are materialized only where the facts say so (`trustFlush`,
//! `logging`); `passwordRotation`'s leaves are filled only when it is enabled, `uwsgi`'s and
//! `database.tls`'s only when the block is present.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use wasm_operator_sdk::admission::{self, AdmissionRequest, Defaulted, Denial};
use wasm_operator_sdk::blocks::types::{
    CREDENTIALS_MODE_STATIC, DEFAULT_CACHE_BACKEND, DEFAULT_REPLICAS, LoggingSpec,
};

use super::Admitted;
use crate::types::{
    DEFAULT_ADMIN_USER, DEFAULT_PASSWORD_LENGTH, DEFAULT_PASSWORD_ROTATION_SCHEDULE,
    DEFAULT_REGION, DEFAULT_TRUST_FLUSH_SCHEDULE, Keystone, KeystoneSpec, MIN_ACTIVE_KEYS,
    TrustFlushSpec,
};

/// The API container's requests when `deployment.resources` is unset or empty.
const DEFAULT_REQUESTS: &[(&str, &str)] = &[("memory", "256Mi"), ("cpu", "100m")];
/// Its limits then.
const DEFAULT_LIMITS: &[(&str, &str)] = &[("memory", "512Mi"), ("cpu", "500m")];

/// The database TLS mode when `database.tls` is present without one.
const DEFAULT_TLS_MODE: &str = "require";

/// Fills the defaults of facts §1.5 into `keystone`.
pub(crate) fn default_keystone(keystone: &mut Keystone) {
    let spec = &mut keystone.spec;
    default_deployment(spec);
    for keys in [&mut spec.fernet, &mut spec.credential_keys] {
        if keys.max_active_keys == 0 {
            keys.max_active_keys = MIN_ACTIVE_KEYS;
        }
    }
    if spec.cache.backend.is_empty() {
        spec.cache.backend = DEFAULT_CACHE_BACKEND.into();
    }
    if spec.bootstrap.admin_user.is_empty() {
        spec.bootstrap.admin_user = DEFAULT_ADMIN_USER.into();
    }
    if spec.bootstrap.region.is_empty() {
        spec.bootstrap.region = DEFAULT_REGION.into();
    }
    spec.trust_flush.get_or_insert_with(|| TrustFlushSpec {
        schedule: DEFAULT_TRUST_FLUSH_SCHEDULE.into(),
        suspend: false,
        args: Vec::new(),
    });
    if let Some(rotation) = spec.password_rotation.as_mut().filter(|r| r.enabled) {
        if rotation.schedule.is_empty() {
            rotation.schedule = DEFAULT_PASSWORD_ROTATION_SCHEDULE.into();
        }
        if rotation.password_length == 0 {
            rotation.password_length = DEFAULT_PASSWORD_LENGTH;
        }
    }
    if let Some(uwsgi) = spec.uwsgi.as_mut() {
        uwsgi.default_leaves();
    }
    spec.logging
        .get_or_insert_with(LoggingSpec::default)
        .default_leaves();
    if let Some(tls) = spec.database.tls.as_mut()
        && tls.mode.is_empty()
    {
        tls.mode = DEFAULT_TLS_MODE.into();
    }
    if spec.database.credentials_mode.is_empty() {
        spec.database.credentials_mode = CREDENTIALS_MODE_STATIC.into();
    }
}

/// Replicas 3 when zero; the default requests and limits when `resources` is unset or has
/// neither.
fn default_deployment(spec: &mut KeystoneSpec) {
    let deployment = &mut spec.deployment;
    if deployment.replicas == 0 {
        deployment.replicas = DEFAULT_REPLICAS;
    }
    let empty =
        |list: &Option<BTreeMap<String, Quantity>>| list.as_ref().is_none_or(|l| l.is_empty());
    let unset = deployment
        .resources
        .as_ref()
        .is_none_or(|r| empty(&r.requests) && empty(&r.limits));
    if unset {
        deployment.resources = Some(ResourceRequirements {
            requests: Some(quantities(DEFAULT_REQUESTS)),
            limits: Some(quantities(DEFAULT_LIMITS)),
            ..ResourceRequirements::default()
        });
    }
}

fn quantities(list: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    list.iter()
        .map(|(name, value)| ((*name).to_owned(), Quantity((*value).to_owned())))
        .collect()
}

/// The admission entry: the request's Keystone with its defaults filled, or a denial when
/// it does not read as a Keystone. Only `spec` is written back, as the typed spec
/// serializes it (`admission::default_typed`): besides the defaults, a field the type
/// always writes may appear where the user left it out — the empty name of a reference the
/// schema requires anyway (`database.tls.clientCertSecretRef`).
pub(crate) fn default_object(request: &AdmissionRequest) -> Result<Defaulted, Denial> {
    admission::default_typed::<Admitted>(request, |admitted| {
        let mut keystone = Keystone {
            spec: std::mem::take(&mut admitted.spec),
            ..Keystone::default()
        };
        default_keystone(&mut keystone);
        admitted.spec = keystone.spec;
    })
}

#[cfg(test)]
#[path = "defaulting_tests.rs"]
mod tests;
