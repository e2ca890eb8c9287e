//! The KeystoneIdentityBackend fields the Keystone's IdentityBackends step reads (facts
//! §3.2): a typed view, not the kind's definition (its CRD and controller are another
//! piece of work).
//!
//! The view is lenient: unknown fields are ignored and every field defaults, so a backend
//! written by a newer version of the kind, or one that bypassed admission, still decodes
//! as far as the step needs it; what is missing is the step's to judge.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;

/// The `DomainReady` condition the backend's own controller sets.
pub(crate) const DOMAIN_READY: &str = "DomainReady";

/// A KeystoneIdentityBackend as the Keystone side reads it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct IdentityBackend {
    pub(crate) metadata: ObjectMeta,
    pub(crate) spec: IdentityBackendSpec,
    pub(crate) status: IdentityBackendStatus,
}

/// The spec fields the Keystone side reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct IdentityBackendSpec {
    pub(crate) keystone_ref: NameRef,
    pub(crate) domain: Domain,
    /// `LDAP`, `OIDC` or `SAML`.
    #[serde(rename = "type")]
    pub(crate) type_: String,
    pub(crate) ldap: Option<LdapBackend>,
    /// `[ldap]` options rendered verbatim after the typed ones (LDAP only).
    pub(crate) extra_options: BTreeMap<String, String>,
}

/// A reference by name, in the backend's namespace.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NameRef {
    pub(crate) name: String,
}

/// The Keystone domain the backend serves.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Domain {
    pub(crate) name: String,
}

/// `spec.ldap` (LDAPBackendSpec).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LdapBackend {
    pub(crate) url: String,
    /// The Secret holding the bind `username` and `password`.
    pub(crate) bind_credentials_secret_ref: NameRef,
    pub(crate) suffix: String,
    pub(crate) users: LdapUsers,
    pub(crate) groups: Option<LdapGroups>,
    /// Whether Keystone may not write into the directory; absent means true.
    pub(crate) read_only: Option<bool>,
    pub(crate) tls: Option<LdapTls>,
    pub(crate) pool: Option<LdapPool>,
}

/// `spec.ldap.users`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LdapUsers {
    #[serde(rename = "treeDN")]
    pub(crate) tree_dn: String,
    pub(crate) filter: String,
    pub(crate) object_class: String,
    pub(crate) id_attribute: String,
    pub(crate) name_attribute: String,
    pub(crate) mail_attribute: String,
}

/// `spec.ldap.groups`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LdapGroups {
    #[serde(rename = "treeDN")]
    pub(crate) tree_dn: String,
    pub(crate) filter: String,
    pub(crate) object_class: String,
    pub(crate) id_attribute: String,
    pub(crate) name_attribute: String,
    pub(crate) member_attribute: String,
}

/// `spec.ldap.tls`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LdapTls {
    /// The Secret holding the CA bundle under `ca.crt`.
    pub(crate) ca_bundle_secret_ref: NameRef,
}

/// `spec.ldap.pool`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LdapPool {
    pub(crate) enabled: bool,
    pub(crate) size: Option<i32>,
}

/// The status fields the Keystone side reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct IdentityBackendStatus {
    pub(crate) conditions: Vec<BackendCondition>,
}

/// A condition, as far as the Keystone side reads it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct BackendCondition {
    #[serde(rename = "type")]
    pub(crate) type_: String,
    pub(crate) status: String,
}

impl IdentityBackend {
    /// The backend's name.
    pub(crate) fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Whether its `DomainReady` condition is True.
    pub(crate) fn domain_ready(&self) -> bool {
        self.status
            .conditions
            .iter()
            .any(|c| c.type_ == DOMAIN_READY && c.status == "True")
    }

    /// Whether it is a federation backend (`OIDC`, `SAML`).
    pub(crate) fn federation(&self) -> bool {
        matches!(self.spec.type_.as_str(), "OIDC" | "SAML")
    }
}
