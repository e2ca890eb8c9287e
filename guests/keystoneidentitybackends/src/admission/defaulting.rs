//! The KeystoneIdentityBackend's defaulting (CobaltCore's defaulting webhook).
//!
//! Every default fills a field only when it is unset; a set value is never changed.
//!
//! | Field | Default |
//! |---|---|
//! | `domain.mode`, `domain.deletionPolicy` | `Manage`, `Retain` |
//! | `ldap.readOnly` | true |
//! | `oidc.protocolID`, `.remoteIDAttribute`, `.scopes`, `.responseType` | `openid`, `HTTP_OIDC_ISS`, openid/email/profile, `code` |
//! | `oidc.sessionType`, `.stateInputHeaders` | `client-cookie`, `none` |
//! | `oidc.providerMetadataURL` (neither it nor `endpoints` set, an issuer given) | `<issuer without trailing />/.well-known/openid-configuration` |
//! | `saml.protocolID`, `.remoteIDAttribute` | `mapped`, `HTTP_MELLON_IDP` |
//! | `oidc.identityProviderName`, `saml.identityProviderName` | the backend's name |
//!
//! `domain.mode`, `domain.deletionPolicy` and the OIDC session knobs default through serde
//! (their types' defaults), so they are written whenever the spec is.
//!
//! DECISION: a create by `generateName` reaches defaulting without a name; the identity
//! provider name then stays unset, and every reader takes the backend's name through
//! [`KeystoneIdentityBackend::identity_provider_name`](crate::types::KeystoneIdentityBackend::identity_provider_name).

use wasm_operator_sdk::admission::{self, AdmissionRequest, Defaulted, Denial};

use super::Admitted;
use crate::types::{KeystoneIdentityBackendSpec, oidc, saml};

/// Fills the defaults into `spec` of the backend named `name` (empty when not known yet).
pub(crate) fn default_spec(spec: &mut KeystoneIdentityBackendSpec, name: &str) {
    let fill = |field: &mut String, value: &str| {
        if field.is_empty() {
            value.clone_into(field);
        }
    };
    if let Some(ldap) = spec.ldap.as_mut() {
        ldap.read_only.get_or_insert(true);
    }
    if let Some(o) = spec.oidc.as_mut() {
        fill(&mut o.protocol_id, oidc::DEFAULT_PROTOCOL_ID);
        fill(&mut o.identity_provider_name, name);
        fill(
            &mut o.remote_id_attribute,
            oidc::DEFAULT_REMOTE_ID_ATTRIBUTE,
        );
        if o.scopes.is_empty() {
            o.scopes = oidc::DEFAULT_SCOPES
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
        }
        fill(&mut o.response_type, oidc::DEFAULT_RESPONSE_TYPE);
        if o.provider_metadata_url.is_empty()
            && let Some(url) = o.effective_provider_metadata_url()
        {
            o.provider_metadata_url = url;
        }
    }
    if let Some(s) = spec.saml.as_mut() {
        fill(&mut s.protocol_id, saml::DEFAULT_PROTOCOL_ID);
        fill(&mut s.identity_provider_name, name);
        fill(
            &mut s.remote_id_attribute,
            saml::DEFAULT_REMOTE_ID_ATTRIBUTE,
        );
    }
}

/// The admission entry: the request's backend with its defaults filled, or a denial when
/// it does not read as a backend. Only `spec` is written back, as the typed spec
/// serializes it (`admission::default_typed`).
pub(crate) fn default_object(request: &AdmissionRequest) -> Result<Defaulted, Denial> {
    admission::default_typed::<Admitted>(request, |admitted| {
        let name = admitted
            .metadata
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| request.name.clone());
        default_spec(&mut admitted.spec, &name);
    })
}

#[cfg(test)]
#[path = "defaulting_tests.rs"]
mod tests;
