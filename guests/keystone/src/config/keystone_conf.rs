//! `keystone.conf` (facts §2.7), merged in this order:
//!
//! 1. the operator's defaults ([`operator_defaults`]), which depend on the spec and on the
//!    domains and federation projections;
//! 2. the plugins' sections (`spec.plugins`, one per `configSection`) merged *under* the
//!    defaults: a default wins a collision;
//! 3. `spec.extraConfig` merged *over* everything;
//! 4. `[oslo_policy] policy_file` forced to the shipped `policy.yaml` when one is rendered;
//! 5. `[federation] trusted_dashboard` repeated once per `spec.federation.trustedDashboards`
//!    entry (oslo's MultiStrOpt), when there are any.
//!
//! Sections and keys render sorted, `key = value`, a blank line between sections.

use std::collections::BTreeMap;

use wasm_operator_sdk::blocks::config::ini::lift;
use wasm_operator_sdk::blocks::config::ini::render_sorted_pairs;
use wasm_operator_sdk::blocks::config::{Sections, merge_defaults, render_ini_multi};
use wasm_operator_sdk::blocks::types::PluginSpec;

use super::{ConfigError, ConfigInputs, KEYSTONE_CONF, lines, logging_conf};
use crate::types::Keystone;

/// `[oslo_policy] policy_file` when a policy is shipped.
pub const POLICY_FILE: &str = "/etc/keystone/keystone.conf.d/policy.yaml";
/// `[DEFAULT] log_config_append` with JSON logging.
pub const LOGGING_CONF_FILE: &str = "/etc/keystone/keystone.conf.d/logging.conf";
/// `[paste_deploy] config_file`.
pub const API_PASTE_FILE: &str = "/etc/keystone/keystone.conf.d/api-paste.ini";
/// `[federation] sso_callback_template` with federation.
pub const SSO_CALLBACK_TEMPLATE_FILE: &str =
    "/etc/keystone/keystone.conf.d/sso_callback_template.html";
/// Where the fernet token keys are mounted.
pub const FERNET_KEY_REPOSITORY: &str = "/etc/keystone/fernet-keys";
/// Where the credential keys are mounted.
pub const CREDENTIAL_KEY_REPOSITORY: &str = "/etc/keystone/credential-keys";
/// Where the domains Secret is mounted.
pub const DOMAIN_CONFIG_DIR: &str = "/etc/keystone/domains";
/// `[database] connection`: a parseable placeholder; the real URL comes from the env
/// `OS_DATABASE__CONNECTION`.
pub const DB_CONNECTION_PLACEHOLDER: &str = "mysql+pymysql://placeholder";
/// `[auth] methods` with federation: keystone's default methods plus `openid`.
pub const FEDERATION_AUTH_METHODS: &str =
    "external,password,token,oauth1,mapped,application_credential,openid";
/// `[openid] remote_id_attribute` when the OIDC backend names none.
pub const DEFAULT_OIDC_REMOTE_ID_ATTRIBUTE: &str = "HTTP_OIDC_ISS";
/// The SAML backend's protocol id when it names none.
pub const DEFAULT_SAML_PROTOCOL_ID: &str = "mapped";
/// The SAML section's `remote_id_attribute` when the backend names none.
pub const DEFAULT_SAML_REMOTE_ID_ATTRIBUTE: &str = "HTTP_MELLON_IDP";

/// The rendered keystone.conf; `policy_rendered` says whether `policy.yaml` is shipped.
pub fn render(
    keystone: &Keystone,
    inputs: &ConfigInputs,
    policy_rendered: bool,
) -> Result<String, ConfigError> {
    let defaults = operator_defaults(keystone, inputs)?;
    let plugins = plugin_sections(&keystone.spec.plugins)?;
    let under_defaults = merge_defaults(&defaults, &plugins);
    let mut merged = merge_defaults(&keystone.spec.extra_config, &under_defaults);
    if policy_rendered {
        merged
            .entry("oslo_policy".into())
            .or_default()
            .insert("policy_file".into(), POLICY_FILE.into());
    }
    let mut multi = lift(&merged);
    let dashboards = keystone
        .spec
        .federation
        .as_ref()
        .map(|f| f.trusted_dashboards.clone())
        .unwrap_or_default();
    if !dashboards.is_empty() {
        multi
            .entry("federation".into())
            .or_default()
            .insert("trusted_dashboard".into(), dashboards);
    }
    lines::check(KEYSTONE_CONF, &multi)?;
    Ok(render_ini_multi(&multi))
}

/// The sections the operator renders from the spec and the projections.
pub fn operator_defaults(
    keystone: &Keystone,
    inputs: &ConfigInputs,
) -> Result<Sections, ConfigError> {
    let spec = &keystone.spec;
    let logging = logging_conf::effective(spec.logging.as_ref());
    let servers = spec.cache.resolved_servers();
    let mut defaults = Sections::new();
    let mut section = |name: &str, pairs: &[(&str, String)]| {
        defaults.insert(
            name.to_owned(),
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
        );
    };

    let mut default = vec![
        ("keystone_user", String::new()),
        ("keystone_group", String::new()),
        ("use_stderr", "true".into()),
        ("debug", logging.debug.unwrap_or_default().to_string()),
    ];
    if !logging.per_logger_levels.is_empty() {
        let levels = render_sorted_pairs(&logging.per_logger_levels, "=");
        default.push(("default_log_levels", levels));
    }
    if logging.format == logging_conf::JSON {
        default.push(("log_config_append", LOGGING_CONF_FILE.into()));
    }
    section("DEFAULT", &default);
    section("token", &[("provider", "fernet".into())]);
    section(
        "fernet_tokens",
        &[
            ("key_repository", FERNET_KEY_REPOSITORY.into()),
            ("max_active_keys", spec.fernet.active_keys().to_string()),
        ],
    );
    section(
        "credential",
        &[
            ("key_repository", CREDENTIAL_KEY_REPOSITORY.into()),
            (
                "max_active_keys",
                spec.credential_keys.active_keys().to_string(),
            ),
        ],
    );
    section(
        "cache",
        &[
            ("enabled", "true".into()),
            ("backend", spec.cache.backend.clone()),
            ("memcache_servers", servers.clone()),
        ],
    );
    section("memcache", &[("servers", servers)]);
    section("paste_deploy", &[("config_file", API_PASTE_FILE.into())]);
    section(
        "oslo_middleware",
        &[("enable_proxy_headers_parsing", "true".into())],
    );
    section(
        "oslo_policy",
        &[
            ("enforce_scope", "true".into()),
            ("enforce_new_defaults", "true".into()),
        ],
    );
    let mut identity = vec![("default_domain_id", "default".to_owned())];
    if inputs.domains_projected {
        identity.push(("domain_specific_drivers_enabled", "true".into()));
        identity.push(("domain_config_dir", DOMAIN_CONFIG_DIR.into()));
    }
    section("identity", &identity);
    section(
        "database",
        &[
            ("max_retries", "-1".into()),
            ("connection_recycle_time", "600".into()),
            ("connection", DB_CONNECTION_PLACEHOLDER.into()),
        ],
    );

    if let Some(federation) = &inputs.federation {
        section("auth", &[("methods", FEDERATION_AUTH_METHODS.into())]);
        section(
            "federation",
            &[("sso_callback_template", SSO_CALLBACK_TEMPLATE_FILE.into())],
        );
        if let Some(oidc) = &federation.oidc {
            let attribute = or_default(&oidc.remote_id_attribute, DEFAULT_OIDC_REMOTE_ID_ATTRIBUTE);
            section("openid", &[("remote_id_attribute", attribute)]);
        }
        if let Some(saml) = &federation.saml {
            let protocol = or_default(&saml.protocol_id, DEFAULT_SAML_PROTOCOL_ID);
            if defaults.contains_key(&protocol) {
                return Err(ConfigError::SamlProtocolCollides {
                    protocol_id: protocol,
                });
            }
            let attribute = or_default(&saml.remote_id_attribute, DEFAULT_SAML_REMOTE_ID_ATTRIBUTE);
            defaults.insert(
                protocol,
                BTreeMap::from([("remote_id_attribute".to_owned(), attribute)]),
            );
        }
    }
    Ok(defaults)
}

/// One section per plugin: its `configSection` with its `config`.
pub fn plugin_sections(plugins: &[PluginSpec]) -> Result<Sections, ConfigError> {
    let mut sections = Sections::new();
    let mut owners: BTreeMap<&str, &str> = BTreeMap::new();
    for (index, plugin) in plugins.iter().enumerate() {
        if plugin.name.is_empty() {
            return Err(ConfigError::PluginNameEmpty { index });
        }
        if plugin.config_section.is_empty() {
            return Err(ConfigError::PluginSectionEmpty {
                plugin: plugin.name.clone(),
            });
        }
        if let Some(first) = owners.insert(&plugin.config_section, &plugin.name) {
            return Err(ConfigError::PluginSectionDuplicate {
                plugin: plugin.name.clone(),
                section: plugin.config_section.clone(),
                first: first.to_owned(),
            });
        }
        sections.insert(plugin.config_section.clone(), plugin.config.clone());
    }
    Ok(sections)
}

fn or_default(value: &str, default: &str) -> String {
    if value.is_empty() { default } else { value }.to_owned()
}

#[cfg(test)]
mod tests;
