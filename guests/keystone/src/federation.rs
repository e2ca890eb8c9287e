//! The federation projection (facts §2.6 step 6, §2.13, §2.16): what the IdentityBackends
//! step hands the later steps when at least one OIDC or SAML KeystoneIdentityBackend is
//! projected, and the names the pods, the NetworkPolicy and the Service share.
//!
//! | Consumer | Reads |
//! |---|---|
//! | Config (keystone.conf `[auth]`, `[federation]`, `[openid]`, `[<samlProtocolID>]`; `sso_callback_template.html`) | [`Federation::config_projection`] |
//! | Deployment (the `federation-proxy` sidecar on [`PROXY_PORT`], uWSGI on 127.0.0.1, the volumes below) | every field |
//! | Service (targetPort [`PROXY_PORT`]) and NetworkPolicy (ingress [`PROXY_PORT`], egress [`Federation::egress_ports`]) | presence, ports |
//! | prune (keeps the 3 newest `{name}-federation-*` besides [`Federation::secret_name`]) | the name |
//! | IdentityBackends' rollout wait (`federation-proxy-config` names this Secret) | the name |

use k8s_openapi::api::core::v1::KeyToPath;

use crate::config::{FederationProjection, OidcProjection, SamlProjection};

/// The sidecar's listen port: the Service and the NetworkPolicy point here when
/// federation is projected, and uWSGI listens on 127.0.0.1:5000 behind it.
pub(crate) const PROXY_PORT: i32 = 5050;
/// The sidecar container's name.
pub(crate) const PROXY_CONTAINER: &str = "federation-proxy";
/// The sidecar's port name.
pub(crate) const PROXY_PORT_NAME: &str = "proxy";

/// The volume of the federation Secret's `proxy.conf` (mode 0400).
pub(crate) const PROXY_CONFIG_VOLUME: &str = "federation-proxy-config";
/// Where the sidecar reads `proxy.conf`.
pub(crate) const PROXY_CONFIG_DIR: &str = "/etc/keystone-federation-proxy/conf.d";
/// The volume of the OIDC items ([`Federation::metadata_items`]).
pub(crate) const METADATA_VOLUME: &str = "federation-metadata";
/// mod_auth_openidc's `OIDCMetadataDir`.
pub(crate) const METADATA_DIR: &str = "/etc/keystone-federation-proxy/metadata";
/// The volume of the SAML items ([`Federation::mellon_items`]).
pub(crate) const MELLON_VOLUME: &str = "federation-mellon";
/// Where mod_auth_mellon reads the SP and IdP files.
pub(crate) const MELLON_DIR: &str = "/etc/keystone-federation-proxy/mellon";
/// The sidecar's scratch volume (emptyDir).
pub(crate) const PROXY_TMP_VOLUME: &str = "federation-proxy-tmp";
/// The data key of the proxy's virtual-host configuration.
pub(crate) const PROXY_CONF: &str = "proxy.conf";

/// `{name}-federation`, the base of the content-hashed federation Secrets.
pub(crate) fn secret_base(keystone: &str) -> String {
    format!("{keystone}-federation")
}

/// `{name}-oidc-crypto-passphrase`: the stable Secret of mod_auth_openidc's
/// `OIDCCryptoPassphrase` (key `passphrase`).
pub(crate) fn passphrase_secret(keystone: &str) -> String {
    format!("{keystone}-oidc-crypto-passphrase")
}

/// `{name}-saml-sp-metadata`: the stable Secret exporting the SP metadata (keys
/// `sp-metadata.xml`, `entityID`) for registration with the IdP.
pub(crate) fn sp_metadata_secret(keystone: &str) -> String {
    format!("{keystone}-saml-sp-metadata")
}

/// `{name}-saml-sp`: the stable `kubernetes.io/tls` Secret of the generated SP keypair,
/// used when the SAML backend names no `sp.certificateSecretRef`.
pub(crate) fn sp_keypair_secret(keystone: &str) -> String {
    format!("{keystone}-saml-sp")
}

/// What the IdentityBackends step projected for federation.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Federation {
    /// `{name}-federation-{hash}`.
    pub(crate) secret_name: String,
    /// The sidecar's image reference (`spec.federation.proxyImage`).
    pub(crate) proxy_image: String,
    /// OIDC data keys → mod_auth_openidc file names (`<basename>.provider|client|conf`);
    /// empty when no OIDC backend is projected.
    pub(crate) metadata_items: Vec<KeyToPath>,
    /// SAML data keys → mod_auth_mellon file names; empty when no SAML backend is
    /// projected.
    pub(crate) mellon_items: Vec<KeyToPath>,
    /// The projected OIDC backends' keystone.conf part; `None` without one.
    pub(crate) oidc: Option<OidcProjection>,
    /// The projected SAML backend's keystone.conf part; `None` without one.
    pub(crate) saml: Option<SamlProjection>,
    /// The identity providers' TCP ports the sidecar dials, deduplicated, in first-seen
    /// order (the NetworkPolicy's egress).
    pub(crate) egress_ports: Vec<i32>,
}

impl Federation {
    /// The Config step's view.
    pub(crate) fn config_projection(&self) -> FederationProjection {
        FederationProjection {
            oidc: self.oidc.clone(),
            saml: self.saml.clone(),
        }
    }
}
