//! Config (facts §3.3, §4): `glance-api.conf` in the immutable Secret
//! `{name}-config-{hash}`, over the Backends step's projection.
//!
//! | Projection | What the Deployment gets |
//! |---|---|
//! | valid | a config with `[DEFAULT] enabled_backends` and `[glance_store] default_backend`, and the backends Secret of this pass |
//! | invalid, the Deployment mounts a config and a backends Secret | those two (the last good ones), nothing rendered |
//! | invalid, no Deployment yet | nothing: the Deployment step waits ([`super::deployment`]) |
//!
//! The rendered sections:
//!
//! | Section | Options |
//! |---|---|
//! | `[DEFAULT]` | `bind_port = 9292`, `enabled_backends` |
//! | `[glance_store]` | `default_backend` |
//! | `[keystone_authtoken]` | `auth_type = password`, `auth_url`, `www_authenticate_uri`, `username`, `project_name`, `user_domain_name`, `project_domain_name`, `region_name` (when set), `memcached_servers` |
//! | `[paste_deploy]` | `flavor = keystone` |
//!
//! No credential is rendered: the pods read the database connection
//! (`OS_DATABASE__CONNECTION`, [`super::db_connection`]) and the service user's password
//! (`OS_KEYSTONE_AUTHTOKEN__PASSWORD`) from the environment. Superseded config Secrets
//! are pruned to the three newest.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::Deployment;
use wasm_operator_sdk::blocks::config::ini::{Sections, render_ini};
use wasm_operator_sdk::blocks::config::{create_immutable_secret, prune_immutable_secrets};
use wasm_operator_sdk::blocks::satellite::secret_name_for_volume;
use wasm_operator_sdk::blocks::service::authtoken;
use wasm_operator_sdk::{ClusterExt, ReadFrom};

use crate::error::Error;
use crate::pass::{Pass, StepResult};
use crate::steps::backends::RETAIN;

/// The data key of the config Secret.
pub(crate) const GLANCE_API_CONF: &str = "glance-api.conf";
/// The pod volumes of the config and the backends Secret.
pub(crate) const CONFIG_VOLUME: &str = "config";
pub(crate) const BACKENDS_VOLUME: &str = "backends";
/// The API port.
pub(crate) const API_PORT: i32 = 9292;

/// The config Secret's base name.
pub(crate) fn base_name(glance: &str) -> String {
    format!("{glance}-config")
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    if !pass.projection.valid {
        return keep_last_good(pass);
    }
    let sections = sections(pass);
    let data = BTreeMap::from([(
        GLANCE_API_CONF.to_owned(),
        ByteString(render_ini(&sections).into_bytes()),
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
    pass.backends_secret = pass.projection.secret_name.clone();
    Ok(None)
}

/// The config and backends Secrets the live Deployment mounts, when it mounts both.
fn keep_last_good(pass: &mut Pass<'_>) -> StepResult {
    let what = format!("reading Deployment {}", pass.key(pass.name()));
    let live = pass
        .cluster
        .get_typed_from::<Deployment>(Some(pass.namespace()), pass.name(), ReadFrom::Cache)
        .map_err(Error::cluster(what))?;
    let spec = live.as_ref().and_then(|d| d.spec.template.spec.as_ref());
    let mounted = |volume| secret_name_for_volume(spec, volume).map(str::to_owned);
    if let (Some(config), Some(backends)) = (mounted(CONFIG_VOLUME), mounted(BACKENDS_VOLUME)) {
        pass.config_secret = config;
        pass.backends_secret = backends;
    }
    Ok(None)
}

/// `glance-api.conf`'s sections.
pub(crate) fn sections(pass: &Pass<'_>) -> Sections {
    let authtoken = authtoken::section(&pass.service());
    let projection = &pass.projection;
    Sections::from([
        (
            "DEFAULT".to_owned(),
            BTreeMap::from([
                ("bind_port".to_owned(), API_PORT.to_string()),
                (
                    "enabled_backends".to_owned(),
                    projection.enabled_backends.clone(),
                ),
            ]),
        ),
        (
            "glance_store".to_owned(),
            BTreeMap::from([(
                "default_backend".to_owned(),
                projection.default_backend.clone(),
            )]),
        ),
        ("keystone_authtoken".to_owned(), authtoken),
        (
            "paste_deploy".to_owned(),
            BTreeMap::from([("flavor".to_owned(), "keystone".to_owned())]),
        ),
    ])
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
