//! Config (facts §4): `cinder.conf` in the immutable Secret `{name}-config-{hash}`, which
//! the API, volume and backup Deployments mount at `/etc/cinder/cinder.conf.d/`.
//!
//! | Section | Options |
//! |---|---|
//! | `[DEFAULT]` | `osapi_volume_listen_port = 8776` |
//! | `[keystone_authtoken]` | `auth_type = password`, `auth_url`, `www_authenticate_uri`, `username`, `project_name`, `user_domain_name`, `project_domain_name`, `region_name` (when set), `memcached_servers` |
//! | `[oslo_concurrency]` | `lock_path = /var/lib/cinder/tmp` |
//!
//! No credential is rendered: the pods read the database connection
//! (`OS_DATABASE__CONNECTION`) and the service user's password
//! (`OS_KEYSTONE_AUTHTOKEN__PASSWORD`) from the environment. The backends' sections are
//! not here: each cinder-volume loads its own backend Secret as a further config dir.
//! Superseded config Secrets are pruned to the three newest.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use wasm_operator_sdk::blocks::config::ini::{Sections, render_ini};
use wasm_operator_sdk::blocks::config::{create_immutable_secret, prune_immutable_secrets};
use wasm_operator_sdk::blocks::service::authtoken;

use crate::error::Error;
use crate::pass::{Pass, StepResult};
use crate::steps::backends::RETAIN;
/// The data key of the config Secret.
pub(crate) const CINDER_CONF: &str = "cinder.conf";
/// The pod volume of the config Secret.
pub(crate) const CONFIG_VOLUME: &str = "config";
/// The API port.
pub(crate) const API_PORT: i32 = 8776;

/// The config Secret's base name.
pub(crate) fn base_name(cinder: &str) -> String {
    format!("{cinder}-config")
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let data = BTreeMap::from([(
        CINDER_CONF.to_owned(),
        ByteString(render_ini(&sections(pass)).into_bytes()),
    )]);
    let base = base_name(pass.name());
    let namespace = pass.namespace().to_owned();
    let name = create_immutable_secret(pass.cluster, &pass.owner, &base, &namespace, &data)
        .map_err(|source| Error::ImmutableSecret {
            what: "config",
            source,
        })?;
    prune_immutable_secrets(pass.cluster, &pass.owner, &base, &namespace, &name, RETAIN).map_err(
        |source| Error::Prune {
            what: "config",
            source: Box::new(source),
        },
    )?;
    pass.config_secret = name;
    Ok(None)
}

/// `cinder.conf`'s sections.
pub(crate) fn sections(pass: &Pass<'_>) -> Sections {
    let authtoken = authtoken::section(&pass.service());
    Sections::from([
        (
            "DEFAULT".to_owned(),
            BTreeMap::from([("osapi_volume_listen_port".to_owned(), API_PORT.to_string())]),
        ),
        ("keystone_authtoken".to_owned(), authtoken),
        (
            "oslo_concurrency".to_owned(),
            BTreeMap::from([("lock_path".to_owned(), "/var/lib/cinder/tmp".to_owned())]),
        ),
    ])
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
