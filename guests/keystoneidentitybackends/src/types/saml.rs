//! `spec.saml`: a SAML 2.0 identity provider, served by mod_auth_mellon in the Keystone's
//! federation proxy. At most one SAML backend per Keystone (its service-provider
//! configuration sits on the proxy's shared `/v3` location).

use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::SecretRefSpec;

/// The default protocol id.
pub const DEFAULT_PROTOCOL_ID: &str = "mapped";
/// The default WSGI environ key of the asserted IdP entityID.
pub const DEFAULT_REMOTE_ID_ATTRIBUTE: &str = "HTTP_MELLON_IDP";
/// The data key of the IdP metadata Secret.
pub const IDP_METADATA_KEY: &str = "idp-metadata.xml";

/// A SAML identity provider and the service provider Keystone is to it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SamlBackendSpec {
    /// The IdP's entityID exactly as it asserts it (a URL or a URN); registered as the
    /// identity provider's remote id and matched against the metadata's entityID.
    #[serde(rename = "idpEntityID", default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 512), extend("x-required" = true)))]
    pub idp_entity_id: String,
    /// The IdP's metadata (an EntityDescriptor): inline, from a Secret or from an https
    /// URL; exactly one.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub idp_metadata: SamlIdpMetadataSpec,
    /// The service provider's key and certificate; the operator generates a self-signed
    /// pair once (never rotated) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sp: Option<SamlSpSpec>,
    /// The federation protocol id in the WebSSO and auth URLs. Defaults to `mapped`.
    #[serde(
        rename = "protocolID",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    #[cfg_attr(
        test,
        schemars(
            length(max = 64),
            regex(pattern = r"^[A-Za-z0-9_-]+$"),
            extend("default" = "mapped")
        )
    )]
    pub protocol_id: String,
    /// The identity provider's id in Keystone, unique per Keystone. Defaults to the
    /// backend's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 64), regex(pattern = r"^[A-Za-z0-9_-]+$")))]
    pub identity_provider_name: String,
    /// The WSGI environ key Keystone reads the asserted entityID from; it crosses the
    /// proxy as a request header, so it keeps the `HTTP_` prefix. Defaults to
    /// `HTTP_MELLON_IDP`.
    #[serde(
        rename = "remoteIDAttribute",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    #[cfg_attr(test, schemars(length(max = 128), extend("default" = "HTTP_MELLON_IDP")))]
    pub remote_id_attribute: String,
    /// Assertion attributes the proxy forwards to Keystone (as `HTTP_MELLON_<ATTR>`) for
    /// the mapping rules to match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(
        test,
        schemars(length(max = 32), inner(regex(pattern = r"^[A-Za-z0-9_]+$")))
    )]
    pub forward_attributes: Vec<String>,
}

/// The IdP's metadata, from exactly one source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
    {"rule": "[has(self.inline), has(self.secretRef), has(self.url)].filter(x, x).size() == 1",
     "message": "exactly one of inline, secretRef, or url must be set"}])))]
pub struct SamlIdpMetadataSpec {
    /// The EntityDescriptor XML; its entityID must be idpEntityID.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 65536)))]
    pub inline: String,
    /// The Secret holding the metadata under `idp-metadata.xml` (a fixed key: `key` stays
    /// empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretRefSpec>,
    /// Where the operator fetches the metadata; https only, since the metadata carries the
    /// certificate assertions are verified with.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 512), regex(pattern = r"^https://")))]
    pub url: String,
}

/// The service provider's key and certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SamlSpSpec {
    /// A `kubernetes.io/tls` Secret (`tls.crt`, `tls.key`; fixed keys: `key` stays empty),
    /// e.g. a cert-manager Certificate's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_secret_ref: Option<SecretRefSpec>,
}
