//! The values a backend's fields take when unset: admission writes the defaults, and these
//! helpers give the same answers for a backend written past admission.
//!
//! | Helper | LDAP | OIDC | SAML |
//! |---|---|---|---|
//! | [`KeystoneIdentityBackend::identity_provider_name`] | the name | `identityProviderName`, else the name | same |
//! | [`KeystoneIdentityBackend::protocol_id`] | `""` | `protocolID`, else `openid` | `protocolID`, else `mapped` |
//! | [`KeystoneIdentityBackend::remote_id_attribute`] | `HTTP_OIDC_ISS` | `remoteIDAttribute`, else `HTTP_OIDC_ISS` | `remoteIDAttribute`, else `HTTP_MELLON_IDP` |
//! | [`KeystoneIdentityBackend::federation_remote_id`] | `""` | `issuer` | `idpEntityID` |
//!
//! The protocol id follows `type` (so a federation backend whose block is missing still
//! has one); the others follow the block that is set.

use super::oidc::non_empty_or;
use super::{BackendType, KeystoneIdentityBackend, oidc, saml};

impl KeystoneIdentityBackend {
    /// The backend's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The backend's namespace.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }

    /// Whether it is being deleted.
    pub fn is_deleting(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }

    /// Whether it is a federation backend (OIDC, SAML).
    pub fn is_federation(&self) -> bool {
        self.spec.type_.is_federation()
    }

    /// The Keystone identity provider's id.
    pub fn identity_provider_name(&self) -> &str {
        let set = match (&self.spec.oidc, &self.spec.saml) {
            (Some(oidc), _) => oidc.identity_provider_name.as_str(),
            (None, Some(saml)) => saml.identity_provider_name.as_str(),
            (None, None) => "",
        };
        non_empty_or(set, self.name())
    }

    /// The federation protocol id; empty for LDAP.
    pub fn protocol_id(&self) -> &str {
        match self.spec.type_ {
            BackendType::Ldap => "",
            BackendType::Oidc => non_empty_or(
                self.spec.oidc.as_ref().map_or("", |o| &o.protocol_id),
                oidc::DEFAULT_PROTOCOL_ID,
            ),
            BackendType::Saml => non_empty_or(
                self.spec.saml.as_ref().map_or("", |s| &s.protocol_id),
                saml::DEFAULT_PROTOCOL_ID,
            ),
        }
    }

    /// The WSGI environ key Keystone reads the asserted remote id from.
    pub fn remote_id_attribute(&self) -> &str {
        match (&self.spec.oidc, &self.spec.saml) {
            (Some(oidc), _) => {
                non_empty_or(&oidc.remote_id_attribute, oidc::DEFAULT_REMOTE_ID_ATTRIBUTE)
            }
            (None, Some(saml)) => {
                non_empty_or(&saml.remote_id_attribute, saml::DEFAULT_REMOTE_ID_ATTRIBUTE)
            }
            (None, None) => oidc::DEFAULT_REMOTE_ID_ATTRIBUTE,
        }
    }

    /// The remote id registered on the identity provider: the OIDC issuer or the SAML
    /// IdP's entityID; empty for LDAP.
    pub fn federation_remote_id(&self) -> &str {
        match (&self.spec.oidc, &self.spec.saml) {
            (Some(oidc), _) => &oidc.issuer,
            (None, Some(saml)) => &saml.idp_entity_id,
            (None, None) => "",
        }
    }

    /// The id of the federation mapping: `<identity provider>-mapping`.
    pub fn mapping_id(&self) -> String {
        format!("{}-mapping", self.identity_provider_name())
    }
}

#[cfg(test)]
#[path = "effective_tests.rs"]
mod tests;
