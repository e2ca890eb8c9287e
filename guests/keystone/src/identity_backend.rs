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

use crate::config::keystone_conf::{
    DEFAULT_OIDC_REMOTE_ID_ATTRIBUTE, DEFAULT_SAML_PROTOCOL_ID, DEFAULT_SAML_REMOTE_ID_ATTRIBUTE,
};

/// The `DomainReady` condition the backend's own controller sets.
pub(crate) const DOMAIN_READY: &str = "DomainReady";

/// An OIDC backend's protocol id when it names none.
pub(crate) const DEFAULT_OIDC_PROTOCOL_ID: &str = "openid";
/// The scopes requested when an OIDC backend names none.
pub(crate) const DEFAULT_OIDC_SCOPES: [&str; 3] = ["openid", "email", "profile"];
/// The response type (authorization-code flow) when an OIDC backend names none.
pub(crate) const DEFAULT_OIDC_RESPONSE_TYPE: &str = "code";
/// mod_auth_openidc's session storage when an OIDC backend names none.
pub(crate) const DEFAULT_OIDC_SESSION_TYPE: &str = "client-cookie";
/// The headers folded into the state hash when an OIDC backend names none.
pub(crate) const DEFAULT_OIDC_STATE_INPUT_HEADERS: &str = "none";

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
    pub(crate) oidc: Option<OidcBackend>,
    pub(crate) saml: Option<SamlBackend>,
    /// The federation mapping rules (OIDC, SAML); only their remote types are read here.
    pub(crate) mappings: Vec<MappingRule>,
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

/// `spec.oidc` (OIDCBackendSpec).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct OidcBackend {
    /// The issuer exactly as the IdP asserts it (`iss`).
    pub(crate) issuer: String,
    /// The discovery document's URL; empty means [`OidcBackend::metadata_url`]'s default.
    #[serde(rename = "providerMetadataURL")]
    pub(crate) provider_metadata_url: String,
    /// The provider's endpoints spelled out instead of a discovery document.
    pub(crate) endpoints: Option<OidcEndpoints>,
    #[serde(rename = "clientID")]
    pub(crate) client_id: String,
    /// The Secret holding the client secret under `clientSecret`.
    pub(crate) client_secret_ref: NameRef,
    #[serde(rename = "protocolID")]
    pub(crate) protocol_id: String,
    pub(crate) identity_provider_name: String,
    #[serde(rename = "remoteIDAttribute")]
    pub(crate) remote_id_attribute: String,
    pub(crate) scopes: Vec<String>,
    pub(crate) response_type: String,
    pub(crate) oauth2_introspection: Option<OidcIntrospection>,
    pub(crate) session_type: String,
    pub(crate) state_input_headers: String,
}

/// `spec.oidc.endpoints`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct OidcEndpoints {
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    #[serde(rename = "jwksURI")]
    pub(crate) jwks_uri: String,
    pub(crate) userinfo_endpoint: String,
    pub(crate) end_session_endpoint: String,
    pub(crate) introspection_endpoint: String,
}

/// `spec.oidc.oauth2Introspection`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct OidcIntrospection {
    pub(crate) enabled: bool,
    /// Whether the introspection call verifies TLS; absent means true.
    pub(crate) tls_verify: Option<bool>,
}

/// `spec.saml` (SAMLBackendSpec).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct SamlBackend {
    #[serde(rename = "idpEntityID")]
    pub(crate) idp_entity_id: String,
    pub(crate) idp_metadata: SamlIdpMetadata,
    pub(crate) sp: Option<SamlSp>,
    #[serde(rename = "protocolID")]
    pub(crate) protocol_id: String,
    pub(crate) identity_provider_name: String,
    #[serde(rename = "remoteIDAttribute")]
    pub(crate) remote_id_attribute: String,
    /// Assertion attributes forwarded as `MELLON-<ATTR>` headers.
    pub(crate) forward_attributes: Vec<String>,
}

/// `spec.saml.idpMetadata`: exactly one source.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct SamlIdpMetadata {
    /// The EntityDescriptor XML itself.
    pub(crate) inline: String,
    /// The Secret holding it under `idp-metadata.xml`.
    pub(crate) secret_ref: Option<NameRef>,
    /// Where to fetch it (https).
    pub(crate) url: String,
}

/// `spec.saml.sp`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct SamlSp {
    /// A `kubernetes.io/tls` Secret (`tls.crt`, `tls.key`) holding the SP keypair.
    pub(crate) certificate_secret_ref: Option<NameRef>,
}

/// One `spec.mappings[]` rule, as far as the Keystone side reads it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct MappingRule {
    pub(crate) remote: Vec<MappingRemote>,
}

/// One remote matcher of a mapping rule.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct MappingRemote {
    /// The WSGI environ key matched (`HTTP_OIDC_EMAIL`).
    #[serde(rename = "type")]
    pub(crate) type_: String,
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

    /// The Keystone identity provider's id: the federation block's
    /// `identityProviderName`, else the backend's name.
    pub(crate) fn identity_provider_name(&self) -> &str {
        let oidc = self
            .spec
            .oidc
            .as_ref()
            .map(|o| o.identity_provider_name.as_str());
        let saml = self
            .spec
            .saml
            .as_ref()
            .map(|s| s.identity_provider_name.as_str());
        [oidc, saml]
            .into_iter()
            .flatten()
            .find(|n| !n.is_empty())
            .unwrap_or(self.name())
    }

    /// The federation protocol id by `spec.type`: the block's `protocolID`, else `openid`
    /// (OIDC) or `mapped` (SAML); empty for any other type.
    pub(crate) fn protocol_id(&self) -> &str {
        let spec = &self.spec;
        match spec.type_.as_str() {
            "OIDC" => or_default(
                spec.oidc.as_ref().map_or("", |o| &o.protocol_id),
                DEFAULT_OIDC_PROTOCOL_ID,
            ),
            "SAML" => or_default(
                spec.saml.as_ref().map_or("", |s| &s.protocol_id),
                DEFAULT_SAML_PROTOCOL_ID,
            ),
            _ => "",
        }
    }

    /// The WSGI environ key Keystone reads the asserted remote id from: the block's
    /// `remoteIDAttribute`, else `HTTP_OIDC_ISS` (OIDC, or no block) or `HTTP_MELLON_IDP`
    /// (SAML).
    pub(crate) fn remote_id_attribute(&self) -> &str {
        match (&self.spec.oidc, &self.spec.saml) {
            (Some(o), _) => or_default(&o.remote_id_attribute, DEFAULT_OIDC_REMOTE_ID_ATTRIBUTE),
            (None, Some(s)) => or_default(&s.remote_id_attribute, DEFAULT_SAML_REMOTE_ID_ATTRIBUTE),
            (None, None) => DEFAULT_OIDC_REMOTE_ID_ATTRIBUTE,
        }
    }

    /// Every mapping rule's remote types, in order.
    pub(crate) fn mapping_remote_types(&self) -> impl Iterator<Item = &str> {
        self.mapping_remote_type_fields().map(|(_, t)| t)
    }

    /// Every mapping rule's remote types with their fields
    /// (`spec.mappings[i].remote[j].type`), in order.
    pub(crate) fn mapping_remote_type_fields(&self) -> impl Iterator<Item = (String, &str)> {
        self.spec.mappings.iter().enumerate().flat_map(|(i, m)| {
            m.remote.iter().enumerate().map(move |(j, r)| {
                (
                    format!("spec.mappings[{i}].remote[{j}].type"),
                    r.type_.as_str(),
                )
            })
        })
    }
}

impl OidcBackend {
    /// The discovery document's URL: `providerMetadataURL`, else
    /// `<issuer without trailing />/.well-known/openid-configuration`.
    pub(crate) fn metadata_url(&self) -> String {
        if self.provider_metadata_url.is_empty() {
            format!(
                "{}/.well-known/openid-configuration",
                self.issuer.trim_end_matches('/')
            )
        } else {
            self.provider_metadata_url.clone()
        }
    }

    /// The scopes requested: `scopes`, else `openid email profile`.
    pub(crate) fn scopes(&self) -> Vec<&str> {
        if self.scopes.is_empty() {
            DEFAULT_OIDC_SCOPES.to_vec()
        } else {
            self.scopes.iter().map(String::as_str).collect()
        }
    }

    /// `responseType`, else `code`.
    pub(crate) fn response_type(&self) -> &str {
        or_default(&self.response_type, DEFAULT_OIDC_RESPONSE_TYPE)
    }

    /// `sessionType`, else `client-cookie`.
    pub(crate) fn session_type(&self) -> &str {
        or_default(&self.session_type, DEFAULT_OIDC_SESSION_TYPE)
    }

    /// `stateInputHeaders`, else `none`.
    pub(crate) fn state_input_headers(&self) -> &str {
        or_default(&self.state_input_headers, DEFAULT_OIDC_STATE_INPUT_HEADERS)
    }

    /// Whether bearer-token introspection is on.
    pub(crate) fn introspection(&self) -> bool {
        self.oauth2_introspection
            .as_ref()
            .is_some_and(|i| i.enabled)
    }
}

fn or_default<'a>(value: &'a str, default: &'a str) -> &'a str {
    if value.is_empty() { default } else { value }
}

#[cfg(test)]
#[path = "identity_backend_tests.rs"]
mod tests;
