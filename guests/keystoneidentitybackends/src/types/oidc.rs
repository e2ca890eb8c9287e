//! `spec.oidc`: an OpenID Connect provider, served by mod_auth_openidc in the Keystone's
//! federation proxy. Discovery is either the provider's metadata document
//! (`providerMetadataURL`, derived from the issuer by admission) or explicit `endpoints`.

use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::SecretRefSpec;

/// The default protocol id.
pub const DEFAULT_PROTOCOL_ID: &str = "openid";
/// The default WSGI environ key of the asserted issuer.
pub const DEFAULT_REMOTE_ID_ATTRIBUTE: &str = "HTTP_OIDC_ISS";
/// The default response type (the authorization-code flow).
pub const DEFAULT_RESPONSE_TYPE: &str = "code";
/// The default scopes.
pub const DEFAULT_SCOPES: &[&str] = &["openid", "email", "profile"];
/// What admission appends to the issuer (without its trailing `/`) for the metadata URL.
pub const WELL_KNOWN_SUFFIX: &str = "/.well-known/openid-configuration";
/// The data key of the client Secret.
pub const CLIENT_SECRET_KEY: &str = "clientSecret";

/// An OpenID Connect provider and the relying-party client registered at it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
    {"rule": "!(has(self.providerMetadataURL) && has(self.endpoints))",
     "message": "providerMetadataURL and endpoints are mutually exclusive"}])))]
pub struct OidcBackendSpec {
    /// The issuer exactly as the provider asserts it (the `iss` claim); registered as the
    /// identity provider's remote id.
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(
            length(max = 512),
            regex(pattern = r"^https?://"),
            extend("x-required" = true)
        )
    )]
    pub issuer: String,
    /// The provider's discovery document; `<issuer>/.well-known/openid-configuration`
    /// when neither it nor `endpoints` is set.
    #[serde(
        rename = "providerMetadataURL",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    #[cfg_attr(test, schemars(length(max = 512), regex(pattern = r"^https?://")))]
    pub provider_metadata_url: String,
    /// The provider's endpoints, instead of its discovery document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<OidcEndpointsSpec>,
    /// The relying party's client id at the provider.
    #[serde(rename = "clientID", default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 256), extend("x-required" = true)))]
    pub client_id: String,
    /// The Secret holding the client secret under `clientSecret` (a fixed key: `key` stays
    /// empty).
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub client_secret_ref: SecretRefSpec,
    /// The federation protocol id in the WebSSO and auth URLs. Defaults to `openid`.
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
            extend("default" = "openid")
        )
    )]
    pub protocol_id: String,
    /// The identity provider's id in Keystone, unique per Keystone. Defaults to the
    /// backend's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 64), regex(pattern = r"^[A-Za-z0-9_-]+$")))]
    pub identity_provider_name: String,
    /// The WSGI environ key Keystone reads the asserted issuer from (`[openid]
    /// remote_id_attribute`); the same for every OIDC backend of a Keystone. Defaults to
    /// `HTTP_OIDC_ISS`.
    #[serde(
        rename = "remoteIDAttribute",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    #[cfg_attr(test, schemars(length(max = 128), extend("default" = "HTTP_OIDC_ISS")))]
    pub remote_id_attribute: String,
    /// The scopes requested. Defaults to openid, email, profile.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(
        test,
        schemars(length(max = 16), extend("default" = ["openid", "email", "profile"]))
    )]
    pub scopes: Vec<String>,
    /// The response type. Defaults to `code`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 64), extend("default" = "code")))]
    pub response_type: String,
    /// Makes the proxy an OAuth2 resource server for this backend, so CLI clients present
    /// the provider's bearer tokens; at most one OIDC backend per Keystone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth2_introspection: Option<OidcIntrospectionSpec>,
    /// mod_auth_openidc's session storage. Defaults to `client-cookie`.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("default" = "client-cookie")))]
    pub session_type: OidcSessionType,
    /// The request headers folded into the state cookie's hash. Defaults to `none`.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("default" = "none")))]
    pub state_input_headers: OidcStateInputHeaders,
}

/// The provider's endpoints, spelled out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OidcEndpointsSpec {
    /// The OAuth2 authorization endpoint.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(max = 512), regex(pattern = r"^https?://"), extend("x-required" = true)))]
    pub authorization_endpoint: String,
    /// The OAuth2 token endpoint.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(max = 512), regex(pattern = r"^https?://"), extend("x-required" = true)))]
    pub token_endpoint: String,
    /// The provider's JSON Web Key Set.
    #[serde(rename = "jwksURI", default)]
    #[cfg_attr(test, schemars(length(max = 512), regex(pattern = r"^https?://"), extend("x-required" = true)))]
    pub jwks_uri: String,
    /// The userinfo endpoint.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 512), regex(pattern = r"^https?://")))]
    pub userinfo_endpoint: String,
    /// The RP-initiated logout endpoint.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 512), regex(pattern = r"^https?://")))]
    pub end_session_endpoint: String,
    /// The token introspection endpoint (https; required with oauth2Introspection).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 512), regex(pattern = r"^https?://")))]
    pub introspection_endpoint: String,
}

/// Bearer-token introspection for CLI clients.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OidcIntrospectionSpec {
    /// Turns introspection on.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub enabled: bool,
    /// Verifies the introspection endpoint's certificate; false (for labs) skips it.
    /// Defaults to true.
    #[serde(rename = "tlsVerify", default, skip_serializing_if = "Option::is_none")]
    pub tls_verify: Option<bool>,
}

/// mod_auth_openidc's session storage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum OidcSessionType {
    /// The whole session in the browser cookie (no state shared between replicas).
    #[default]
    #[serde(rename = "client-cookie")]
    ClientCookie,
    /// The same, with a cookie that survives browser restarts.
    #[serde(rename = "client-cookie-persistent")]
    ClientCookiePersistent,
}

/// The request headers folded into the state cookie's hash.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum OidcStateInputHeaders {
    /// None (replicas behind one Service must not bind state to a connection).
    #[default]
    #[serde(rename = "none")]
    None,
    /// The User-Agent header.
    #[serde(rename = "user-agent")]
    UserAgent,
    /// The X-Forwarded-For header.
    #[serde(rename = "x-forwarded-for")]
    XForwardedFor,
    /// Both.
    #[serde(rename = "both")]
    Both,
}

impl OidcBackendSpec {
    /// The discovery document's URL: `providerMetadataURL`, else (without `endpoints`)
    /// the issuer without its trailing `/` plus [`WELL_KNOWN_SUFFIX`]; `None` with
    /// explicit endpoints.
    pub fn effective_provider_metadata_url(&self) -> Option<String> {
        if !self.provider_metadata_url.is_empty() {
            return Some(self.provider_metadata_url.clone());
        }
        if self.endpoints.is_some() || self.issuer.is_empty() {
            return None;
        }
        Some(format!(
            "{}{WELL_KNOWN_SUFFIX}",
            self.issuer.trim_end_matches('/')
        ))
    }

    /// The scopes requested: `scopes`, or [`DEFAULT_SCOPES`] when empty.
    pub fn effective_scopes(&self) -> Vec<&str> {
        if self.scopes.is_empty() {
            DEFAULT_SCOPES.to_vec()
        } else {
            self.scopes.iter().map(String::as_str).collect()
        }
    }

    /// The response type: `responseType`, or [`DEFAULT_RESPONSE_TYPE`].
    pub fn effective_response_type(&self) -> &str {
        non_empty_or(&self.response_type, DEFAULT_RESPONSE_TYPE)
    }

    /// Whether bearer-token introspection is on.
    pub fn introspection_enabled(&self) -> bool {
        self.oauth2_introspection
            .as_ref()
            .is_some_and(|i| i.enabled)
    }
}

impl OidcIntrospectionSpec {
    /// Whether the introspection endpoint's certificate is verified (`tlsVerify`, true
    /// when unset).
    pub fn tls_verify(&self) -> bool {
        self.tls_verify.unwrap_or(true)
    }
}

/// `value`, or `default` when it is empty.
pub(crate) fn non_empty_or<'a>(value: &'a str, default: &'a str) -> &'a str {
    if value.is_empty() { default } else { value }
}
