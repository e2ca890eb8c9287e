//! Config (facts §3.6, §4): `barbican.conf`, `barbican-api-paste.ini` and `policy.yaml`
//! in the immutable Secret `{name}-config-{hash}`, over the SecretStores step's
//! projection.
//!
//! | Projection | What happens |
//! |---|---|
//! | valid | the config rendered; the Deployment step mounts it |
//! | invalid | nothing rendered: the running Deployment keeps its config (the last good one) |
//!
//! `barbican.conf`: `[DEFAULT] bind_port = 9311`; `[keystone_authtoken]` as the Glance
//! renders it; the store sections of [`super::secret_stores`]. No credential is rendered:
//! the pods read the database connection (`OS_DATABASE__CONNECTION`), the service user's
//! password (`OS_KEYSTONE_AUTHTOKEN__PASSWORD`) and the AppRole secret ID
//! (`OS_VAULT_PLUGIN__APPROLE_SECRET_ID`) from the environment. Superseded config Secrets
//! are pruned to the three newest.
//!
//! DECISION: `policy.yaml` is empty (Barbican's defaults) and the paste pipeline is
//! Barbican's keystone-authenticated one: the minimal parent has no policyOverrides or
//! middleware blocks.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use wasm_operator_sdk::blocks::config::ini::{Sections, render_ini};
use wasm_operator_sdk::blocks::config::{create_immutable_secret, prune_immutable_secrets};
use wasm_operator_sdk::blocks::service::authtoken;

use crate::error::Error;
use crate::pass::{Pass, StepResult};

/// The data keys of the config Secret.
pub(crate) const BARBICAN_CONF: &str = "barbican.conf";
pub(crate) const PASTE_INI: &str = "barbican-api-paste.ini";
pub(crate) const POLICY_YAML: &str = "policy.yaml";
/// The pod volume of the config Secret.
pub(crate) const CONFIG_VOLUME: &str = "config";
/// The API port.
pub(crate) const API_PORT: i32 = 9311;
/// How many superseded config Secrets are kept.
pub(crate) const RETAIN: usize = 3;

/// Barbican's keystone-authenticated WSGI pipeline.
const PASTE: &str = "[composite:main]\n\
use = egg:Paste#urlmap\n\
/: barbican_version\n\
/v1: barbican-api-keystone\n\
\n\
[pipeline:barbican_version]\n\
pipeline = cors http_proxy_to_wsgi versionapp\n\
\n\
[pipeline:barbican-api-keystone]\n\
pipeline = cors http_proxy_to_wsgi authtoken context apiapp\n\
\n\
[app:apiapp]\n\
paste.app_factory = barbican.api.app:create_main_app\n\
\n\
[app:versionapp]\n\
paste.app_factory = barbican.api.app:create_version_app\n\
\n\
[filter:context]\n\
paste.filter_factory = barbican.api.middleware.context:ContextMiddleware.factory\n\
\n\
[filter:authtoken]\n\
paste.filter_factory = keystonemiddleware.auth_token:filter_factory\n\
\n\
[filter:cors]\n\
paste.filter_factory = oslo_middleware.cors:filter_factory\n\
oslo_config_project = barbican\n\
\n\
[filter:http_proxy_to_wsgi]\n\
paste.filter_factory = oslo_middleware:HTTPProxyToWSGI.factory\n";

/// The config Secret's base name.
pub(crate) fn base_name(barbican: &str) -> String {
    format!("{barbican}-config")
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    if !pass.projection.valid {
        return Ok(None);
    }
    let data = BTreeMap::from([
        (
            BARBICAN_CONF.to_owned(),
            ByteString(render_ini(&sections(pass)).into_bytes()),
        ),
        (PASTE_INI.to_owned(), ByteString(PASTE.as_bytes().to_vec())),
        (POLICY_YAML.to_owned(), ByteString(b"{}\n".to_vec())),
    ]);
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

/// `barbican.conf`'s sections.
pub(crate) fn sections(pass: &Pass<'_>) -> Sections {
    let authtoken = authtoken::section(&pass.service());
    let mut sections = pass.projection.sections.clone();
    sections.insert(
        "DEFAULT".to_owned(),
        BTreeMap::from([("bind_port".to_owned(), API_PORT.to_string())]),
    );
    sections.insert("keystone_authtoken".to_owned(), authtoken);
    sections
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
