//! `spec.ldap`: Keystone's LDAP identity driver for the backend's domain. Optional fields
//! are rendered only when set, so Keystone's own defaults apply otherwise.

use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::SecretRefSpec;

/// The data keys of the bind Secret: the bind DN and its password.
pub const BIND_USERNAME_KEY: &str = "username";
/// See [`BIND_USERNAME_KEY`].
pub const BIND_PASSWORD_KEY: &str = "password";
/// The data key of the CA bundle Secret.
pub const CA_BUNDLE_KEY: &str = "ca.crt";

/// The `[ldap]` options the operator forces to false while `readOnly` (the default).
pub const READ_ONLY_FORCED_OPTIONS: &[&str] = &[
    "user_allow_create",
    "user_allow_update",
    "user_allow_delete",
    "group_allow_create",
    "group_allow_update",
    "group_allow_delete",
];

/// The LDAP directory: connection, tree layout and attribute mapping.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LdapBackendSpec {
    /// The server (`ldap://` or `ldaps://`).
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(
            length(max = 512),
            regex(pattern = r"^ldaps?://"),
            extend("x-required" = true)
        )
    )]
    pub url: String,
    /// The Secret holding the bind DN under `username` and its password under `password`
    /// (fixed keys: `key` stays empty).
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub bind_credentials_secret_ref: SecretRefSpec,
    /// The base DN (`dc=example,dc=com`).
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 512), extend("x-required" = true)))]
    pub suffix: String,
    /// The user tree and attributes.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub users: LdapUserSpec,
    /// The group tree and attributes (Keystone's defaults when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<LdapGroupSpec>,
    /// Keeps Keystone from writing into the directory (the six `*_allow_*` options forced
    /// to false); false opts into a writable backend. Defaults to true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(extend("default" = true)))]
    pub read_only: Option<bool>,
    /// Certificate verification of `ldaps://` and STARTTLS connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<LdapTlsSpec>,
    /// Keystone's LDAP connection pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<LdapPoolSpec>,
}

impl LdapBackendSpec {
    /// Whether Keystone may not write into the directory: `readOnly`, true when unset.
    pub fn read_only(&self) -> bool {
        self.read_only.unwrap_or(true)
    }
}

/// The user tree and attribute mapping.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LdapUserSpec {
    /// The users' search base (`ou=people,dc=example,dc=com`).
    #[serde(rename = "treeDN", default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 512), extend("x-required" = true)))]
    pub tree_dn: String,
    /// An LDAP filter added to user searches.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 1024)))]
    pub filter: String,
    /// The users' objectClass (Keystone's default: inetOrgPerson).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub object_class: String,
    /// The attribute of the user id (Keystone's default: cn).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub id_attribute: String,
    /// The attribute of the user name (Keystone's default: sn).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub name_attribute: String,
    /// The attribute of the user's email (Keystone's default: mail).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub mail_attribute: String,
}

/// The group tree and attribute mapping.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LdapGroupSpec {
    /// The groups' search base.
    #[serde(rename = "treeDN", default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 512), extend("x-required" = true)))]
    pub tree_dn: String,
    /// An LDAP filter added to group searches.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 1024)))]
    pub filter: String,
    /// The groups' objectClass (Keystone's default: groupOfNames).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub object_class: String,
    /// The attribute of the group id (Keystone's default: cn).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub id_attribute: String,
    /// The attribute of the group name (Keystone's default: ou).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub name_attribute: String,
    /// The attribute of group membership (Keystone's default: member).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub member_attribute: String,
}

/// Certificate verification of the LDAP connection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LdapTlsSpec {
    /// The Secret holding the CA bundle under `ca.crt` (a fixed key: `key` stays empty).
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub ca_bundle_secret_ref: SecretRefSpec,
}

/// Keystone's LDAP connection pool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LdapPoolSpec {
    /// Turns the pool on (`use_pool = true`).
    #[serde(
        default,
        skip_serializing_if = "wasm_operator_sdk::blocks::types::is_false"
    )]
    pub enabled: bool,
    /// The pool's size (`pool_size`), rendered only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub size: Option<i32>,
}
