//! The Keystone's rendered configuration: the files of the immutable ConfigMap
//! `{name}-config-{hash}` the Config step creates (facts §2.7).
//!
//! [`render`] is pure: it takes the Keystone and what earlier steps contribute
//! ([`ConfigInputs`]) and returns the data keys and the content-hashed name. One module per
//! rendered file:
//!
//! | Data key | Module | When |
//! |---|---|---|
//! | `keystone.conf` | [`keystone_conf`] | always |
//! | `api-paste.ini` | [`api_paste`] | always |
//! | `policy.yaml` | [`policy`] | `spec.policyOverrides` is set |
//! | `logging.conf` | [`logging_conf`] | `spec.logging.format` is `json` |
//! | `sso_callback_template.html` | [`sso_template`] | a federation projection exists |
//!
//! Every INI line is checked by [`lines`] before it is rendered, so no value of the
//! Keystone, of its plugins or of an identity backend can add a line of its own.

pub mod api_paste;
pub mod keystone_conf;
pub(crate) mod lines;
pub mod logging_conf;
pub mod policy;
pub mod sso_template;

use std::collections::BTreeMap;

use wasm_operator_sdk::blocks::config::configmap::immutable_name;
use wasm_operator_sdk::blocks::policy::Rules;

use crate::types::Keystone;

pub use api_paste::ApiPasteError;

/// Where the ConfigMap is mounted in the Keystone's pods.
pub const CONFIG_DIR: &str = "/etc/keystone/keystone.conf.d";
/// The data key of keystone.conf.
pub const KEYSTONE_CONF: &str = "keystone.conf";
/// The data key of the PasteDeploy pipeline.
pub const API_PASTE_INI: &str = "api-paste.ini";
/// The data key of the oslo.policy overrides.
pub const POLICY_YAML: &str = "policy.yaml";
/// The data key of the JSON logging configuration.
pub const LOGGING_CONF: &str = "logging.conf";
/// The data key of the WebSSO callback template.
pub const SSO_CALLBACK_TEMPLATE: &str = "sso_callback_template.html";

/// The configuration files of one Keystone and the ConfigMap they go into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// Data key → file content.
    pub data: BTreeMap<String, String>,
    /// The ConfigMap's base name, `{name}-config` (the value of its config-base label).
    pub base_name: String,
    /// The ConfigMap's name, `{name}-config-{hash}`: the SDK's content hash of `data`.
    pub config_map_name: String,
}

/// What other steps of the pass contribute to the configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigInputs {
    /// The rules of the ConfigMap `spec.policyOverrides.configMapRef` names, as the step
    /// loaded them (`LoadPolicyFromConfigMap`); `None` when no ConfigMap is referenced.
    pub config_map_policy: Option<Rules>,
    /// Whether the IdentityBackends step projected a domains Secret (LDAP backends).
    pub domains_projected: bool,
    /// The federation projection of the IdentityBackends step; `None` when no OIDC or
    /// SAML backend is projected.
    pub federation: Option<FederationProjection>,
}

/// The federation backends the IdentityBackends step projected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FederationProjection {
    /// The OIDC backend, when one is projected.
    pub oidc: Option<OidcProjection>,
    /// The SAML backend, when one is projected.
    pub saml: Option<SamlProjection>,
}

/// An OIDC backend's part of keystone.conf.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OidcProjection {
    /// The WSGI environ key the proxy asserts the issuer in; empty means
    /// [`keystone_conf::DEFAULT_OIDC_REMOTE_ID_ATTRIBUTE`].
    pub remote_id_attribute: String,
}

/// A SAML backend's part of keystone.conf.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SamlProjection {
    /// The federation protocol id, which names its keystone.conf section; empty means
    /// [`keystone_conf::DEFAULT_SAML_PROTOCOL_ID`].
    pub protocol_id: String,
    /// The WSGI environ key the proxy asserts the IdP's entityID in; empty means
    /// [`keystone_conf::DEFAULT_SAML_REMOTE_ID_ATTRIBUTE`].
    pub remote_id_attribute: String,
}

/// Why the configuration could not be rendered (the Config step's `ConfigError`).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The Keystone has no name to derive the ConfigMap's from.
    #[error("the Keystone has no metadata.name")]
    Unnamed,
    /// A plugin without a name.
    #[error("spec.plugins[{index}]: the plugin's name must not be empty")]
    PluginNameEmpty { index: usize },
    /// A plugin without a config section.
    #[error("plugin {plugin:?}: configSection must not be empty")]
    PluginSectionEmpty { plugin: String },
    /// Two plugins configuring the same section.
    #[error(
        "plugin {plugin:?}: configSection {section:?} is already configured by plugin {first:?}"
    )]
    PluginSectionDuplicate {
        plugin: String,
        section: String,
        first: String,
    },
    /// A SAML protocol id naming a section the operator renders itself.
    #[error("SAML protocol id {protocol_id:?} names a keystone.conf section the operator renders")]
    SamlProtocolCollides { protocol_id: String },
    /// A section, key or value that would not stay one INI line.
    #[error("{file}: {location}: {problem}")]
    Line {
        file: &'static str,
        location: String,
        problem: &'static str,
    },
    /// A logging level Python's logging does not know.
    #[error("spec.logging.level {level:?} is not one of DEBUG, INFO, WARNING, ERROR, CRITICAL")]
    LoggingLevel { level: String },
    /// The step did not hand over the rules of the referenced policy ConfigMap.
    #[error("spec.policyOverrides.configMapRef {config_map:?}: its rules were not loaded")]
    PolicyNotLoaded { config_map: String },
    /// Serializing the policy failed.
    #[error("rendering policy.yaml: {source}")]
    PolicyYaml {
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An invalid middleware of api-paste.ini.
    #[error("api-paste.ini: {0}")]
    ApiPaste(#[from] ApiPasteError),
}

/// Renders every configuration file of `keystone` and names the ConfigMap holding them.
pub fn render(keystone: &Keystone, inputs: &ConfigInputs) -> Result<Rendered, ConfigError> {
    let name = keystone
        .metadata
        .name
        .as_deref()
        .filter(|name| !name.is_empty())
        .ok_or(ConfigError::Unnamed)?;
    let policy = policy::render(
        keystone.spec.policy_overrides.as_ref(),
        inputs.config_map_policy.as_ref(),
    )?;
    let logging = logging_conf::effective(keystone.spec.logging.as_ref());

    let mut data = BTreeMap::new();
    data.insert(
        KEYSTONE_CONF.to_owned(),
        keystone_conf::render(keystone, inputs, policy.is_some())?,
    );
    data.insert(
        API_PASTE_INI.to_owned(),
        api_paste::render(&keystone.spec.middleware)?,
    );
    if let Some(policy) = policy {
        data.insert(POLICY_YAML.to_owned(), policy);
    }
    if logging.format == logging_conf::JSON {
        data.insert(
            LOGGING_CONF.to_owned(),
            logging_conf::render(&logging.level)?,
        );
    }
    if inputs.federation.is_some() {
        data.insert(
            SSO_CALLBACK_TEMPLATE.to_owned(),
            sso_template::SSO_CALLBACK_TEMPLATE_HTML.to_owned(),
        );
    }

    let base_name = format!("{name}-config");
    let config_map_name = immutable_name(&base_name, &data);
    Ok(Rendered {
        data,
        base_name,
        config_map_name,
    })
}

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests;
