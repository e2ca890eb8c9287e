//! The `keystone.openstack.c5c3.io/v1alpha1` KeystoneIdentityBackend resource as Rust types
//! (facts §3.2).
//!
//! The types are the definition:
//! `crds/keystone.openstack.c5c3.io_keystoneidentitybackends.yaml` is generated from them
//! (`crd.rs`). Doc comments become the CRD's field descriptions, so they speak to the
//! resource's users. The backend blocks are apart: [`ldap`], [`oidc`], [`saml`], and the
//! federation vocabulary (`mappings`, `groups`) in [`federation`]; the values a field
//! takes when unset are read through [`effective`]'s helpers.
//!
//! Enumerations are Rust enums. `domain.mode`, `domain.deletionPolicy` and the OIDC
//! session knobs default in serde as in the schema, so a value written before defaulting
//! reads as its default; `type` has no default: an object without one does not decode.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::is_zero;

mod effective;
pub mod federation;
pub mod ldap;
pub mod oidc;
pub mod saml;

pub use federation::{
    FederationGroupSpec, FederationProjectScopeSpec, FederationRoleAssignmentSpec,
    MappingDomainSpec, MappingGroupSpec, MappingLocalRuleSpec, MappingProjectRoleSpec,
    MappingProjectSpec, MappingRemoteRuleSpec, MappingRuleSpec, MappingUserSpec, MappingUserType,
};
pub use ldap::{LdapBackendSpec, LdapGroupSpec, LdapPoolSpec, LdapTlsSpec, LdapUserSpec};
pub use oidc::{
    OidcBackendSpec, OidcEndpointsSpec, OidcIntrospectionSpec, OidcSessionType,
    OidcStateInputHeaders,
};
pub use saml::{SamlBackendSpec, SamlIdpMetadataSpec, SamlSpSpec};

/// The API group.
pub const GROUP: &str = <KeystoneIdentityBackend as k8s_openapi::Resource>::GROUP;
/// The version.
pub const VERSION: &str = <KeystoneIdentityBackend as k8s_openapi::Resource>::VERSION;
/// The kind.
pub const KIND: &str = <KeystoneIdentityBackend as k8s_openapi::Resource>::KIND;
/// The resource (plural).
pub const PLURAL: &str = <KeystoneIdentityBackend as k8s_openapi::Resource>::URL_PATH_SEGMENT;
/// The apiVersion.
pub const API_VERSION: &str = <KeystoneIdentityBackend as k8s_openapi::Resource>::API_VERSION;

/// The Keystone kind a backend attaches to (same group and version).
pub const KEYSTONE_KIND: &str = "Keystone";
/// Its plural.
pub const KEYSTONE_PLURAL: &str = "keystones";

/// The finalizer the backend's controller holds until the domain's deletion policy ran
/// (facts §3.2 step 1).
pub const FINALIZER: &str = "keystone.openstack.c5c3.io/identitybackend";

/// The domain no backend may serve: it hosts the SQL-backed service users and the
/// bootstrap admin (compared case-insensitively).
pub const DEFAULT_DOMAIN: &str = "default";

/// A KeystoneIdentityBackend: one external identity backend (an LDAP directory, an OIDC or
/// a SAML identity provider) serving one Keystone domain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeystoneIdentityBackend {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: KeystoneIdentityBackendSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<KeystoneIdentityBackendStatus>,
}

wasm_operator_sdk::custom_resource!(
    KeystoneIdentityBackend,
    "keystone.openstack.c5c3.io",
    "v1alpha1",
    "KeystoneIdentityBackend",
    "keystoneidentitybackends",
    k8s_openapi::NamespaceResourceScope
);

/// Which Keystone the backend attaches to, the domain it serves, and the backend.
///
/// `keystoneRef` and `type` are fixed at creation. Exactly the block `type` names is set;
/// `mappings` and `groups` belong to the federation types, `extraOptions` to LDAP.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
    {"rule": "self.keystoneRef.name == oldSelf.keystoneRef.name", "message": "keystoneRef is immutable"},
    {"rule": "self.type == oldSelf.type", "message": "type is immutable"},
    {"rule": "(self.type == 'LDAP') == has(self.ldap)",
     "message": "exactly one backend block matching spec.type must be set (type LDAP requires spec.ldap)"},
    {"rule": "(self.type == 'OIDC') == has(self.oidc)",
     "message": "exactly one backend block matching spec.type must be set (type OIDC requires spec.oidc)"},
    {"rule": "(self.type == 'SAML') == has(self.saml)",
     "message": "exactly one backend block matching spec.type must be set (type SAML requires spec.saml)"},
    {"rule": "!has(self.mappings) || self.type != 'LDAP'",
     "message": "mappings are only supported on federation backends (type OIDC or SAML)"},
    {"rule": "!has(self.groups) || self.type != 'LDAP'",
     "message": "groups are only supported on federation backends (type OIDC or SAML)"},
    {"rule": "!has(self.extraOptions) || self.type == 'LDAP'",
     "message": "extraOptions carries [ldap] section options and is only supported on type LDAP"},
])))]
pub struct KeystoneIdentityBackendSpec {
    /// The Keystone in this namespace the backend attaches to. It need not exist yet: a
    /// backend applied first waits for it. Fixed at creation.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub keystone_ref: KeystoneRefSpec,
    /// The Keystone domain the backend serves.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub domain: DomainSpec,
    /// The backend: `LDAP` (a per-domain identity driver), `OIDC` or `SAML` (federation).
    /// Fixed at creation.
    #[serde(rename = "type")]
    pub type_: BackendType,
    /// The LDAP directory (exactly when type is LDAP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ldap: Option<LdapBackendSpec>,
    /// The OpenID Connect provider (exactly when type is OIDC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcBackendSpec>,
    /// The SAML 2.0 identity provider (exactly when type is SAML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saml: Option<SamlBackendSpec>,
    /// Keystone federation mapping rules of the backend's protocol: remote assertion
    /// attributes (full WSGI environ names such as `HTTP_OIDC_ISS`) to local users, groups
    /// and projects (federation types only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(length(max = 32)))]
    pub mappings: Vec<MappingRuleSpec>,
    /// Local groups in the backend's domain the mapping rules target, with the role
    /// assignments their members get (federation types only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(length(max = 32)))]
    pub groups: Vec<FederationGroupSpec>,
    /// `[ldap]` options the typed fields do not cover, by bare option name (`page_size`),
    /// rendered verbatim after them (LDAP only). Options a typed field renders, the driver
    /// wiring and, while readOnly, the write options are refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(test, schemars(extend("maxProperties" = 32, "x-kubernetes-validations" = [
        {"rule": "self.all(k, size(k) <= 256 && size(self[k]) <= 1024)",
         "message": "each extraOptions key must be <=256 characters and each value <=1024 characters"}])))]
    pub extra_options: BTreeMap<String, String>,
}

/// A Keystone in the backend's namespace, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct KeystoneRefSpec {
    /// The Keystone's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), extend("x-required" = true)))]
    pub name: String,
}

/// The backend's type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum BackendType {
    /// Keystone's LDAP identity driver for the domain (the default of `Default::default`
    /// only: the field itself has none).
    #[default]
    #[serde(rename = "LDAP")]
    Ldap,
    /// OpenID Connect federation (mod_auth_openidc in the Keystone's proxy).
    #[serde(rename = "OIDC")]
    Oidc,
    /// SAML 2.0 federation (mod_auth_mellon in the Keystone's proxy).
    #[serde(rename = "SAML")]
    Saml,
}

impl BackendType {
    /// The type as the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ldap => "LDAP",
            Self::Oidc => "OIDC",
            Self::Saml => "SAML",
        }
    }

    /// Whether it is a federation type (OIDC, SAML).
    pub fn is_federation(self) -> bool {
        matches!(self, Self::Oidc | Self::Saml)
    }
}

/// The Keystone domain a backend serves.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DomainSpec {
    /// The domain's name, also the name of its config file (`keystone.<name>.conf`); fixed
    /// at creation. `default` (in any case) is refused: the Default domain holds the
    /// service users and the bootstrap admin.
    #[serde(default)]
    #[cfg_attr(test, schemars(
        length(min = 1, max = 64),
        regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"),
        extend("x-required" = true, "x-kubernetes-validations" = [
            {"rule": "self == oldSelf", "message": "domain.name is immutable"},
            {"rule": "self.lowerAscii() != 'default'",
             "message": "the Default domain hosts the SQL-backed service users and the bootstrap admin and must never be backed by an external identity backend"}])
    ))]
    pub name: String,
    /// `Manage`: the controller creates the domain (and deletes it under deletionPolicy
    /// Delete). `Adopt`: it resolves an existing domain by name and never changes it.
    /// Fixed at creation.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("default" = "Manage", "x-kubernetes-validations" = [
        {"rule": "self == oldSelf", "message": "domain.mode is immutable"}])))]
    pub mode: DomainMode,
    /// What deleting the backend does to a managed domain: `Retain` leaves it, `Delete`
    /// disables and deletes it. Adopted domains are always retained.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("default" = "Retain")))]
    pub deletion_policy: DeletionPolicy,
    /// The managed domain's description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 1024)))]
    pub description: String,
}

/// How the domain comes into being.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum DomainMode {
    /// The controller creates the domain.
    #[default]
    Manage,
    /// The controller resolves an existing domain and never modifies it.
    Adopt,
}

/// What deleting the backend does to a managed domain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum DeletionPolicy {
    /// The domain stays.
    #[default]
    Retain,
    /// The domain is disabled, then deleted.
    Delete,
}

/// What the backend's controller found and did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct KeystoneIdentityBackendStatus {
    /// DomainReady, ConfigProjected, for federation types FederationObjectsReady and
    /// MappingsReady, and the aggregate Ready, each for `observedGeneration`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(schema_with = "wasm_operator_sdk::crd::conditions"))]
    pub conditions: Vec<Condition>,
    /// The metadata.generation last reconciled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// The id of the domain the backend created (Manage) or resolved (Adopt); empty until
    /// DomainReady first turns True. Deletion acts on exactly this domain.
    #[serde(rename = "domainID", default, skip_serializing_if = "String::is_empty")]
    pub domain_id: String,
    /// The Secret holding the generated SAML service-provider metadata (keys
    /// `sp-metadata.xml`, `entityID`) to register with the identity provider; SAML only.
    #[serde(
        rename = "samlSPMetadataSecretName",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub saml_sp_metadata_secret_name: String,
}
