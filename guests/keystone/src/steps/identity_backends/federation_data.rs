//! The federation Secret's content and the projection handed to the later steps, from the
//! rendered backends (CobaltCore's `buildFederationProjection` without its writes: the
//! caller creates the immutable Secret, the passphrase and SP metadata Secrets).
//!
//! | Data key | Mounted as |
//! |---|---|
//! | `proxy.conf` ([`proxy_conf::render`]) | `proxy.conf` (the `federation-proxy-config` volume) |
//! | per OIDC backend `<backend>.provider`, `<backend>.client`, `<backend>.conf` | `<issuer basename>.provider` / `.client` / `.conf` (`federation-metadata`: the basename holds `%`, which a data key may not) |
//! | per SAML backend `sp-key.pem`, `sp-cert.pem`, `sp-metadata.xml`, `<backend>.idp-metadata.xml` | the same names (`federation-mellon`) |
//!
//! The egress ports are the OIDC backends', deduplicated in first-seen order (the sidecar
//! never dials a SAML IdP). keystone.conf's `[openid] remote_id_attribute` is the first
//! OIDC backend's (uniform across them, webhook-enforced); the SAML section is the last
//! SAML backend's (at most one is projected).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::KeyToPath;

use super::oidc::OidcRender;
use super::proxy_conf;
use super::saml::{SP_CERT, SP_KEY, SP_METADATA, SamlRender, idp_metadata_key};
use crate::config::{OidcProjection, SamlProjection};
use crate::federation::{Federation, PROXY_CONF};
use crate::types::Keystone;

/// The federation Secret's data and what the later steps read of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FederationData {
    /// The Secret's data.
    pub(crate) data: BTreeMap<String, ByteString>,
    pub(crate) metadata_items: Vec<KeyToPath>,
    pub(crate) mellon_items: Vec<KeyToPath>,
    pub(crate) oidc: Option<OidcProjection>,
    pub(crate) saml: Option<SamlProjection>,
    pub(crate) egress_ports: Vec<i32>,
}

impl FederationData {
    /// The projection once the Secret `secret_name` holds [`data`](Self::data) and the
    /// sidecar runs `proxy_image`.
    pub(crate) fn into_federation(self, secret_name: String, proxy_image: String) -> Federation {
        Federation {
            secret_name,
            proxy_image,
            metadata_items: self.metadata_items,
            mellon_items: self.mellon_items,
            oidc: self.oidc,
            saml: self.saml,
            egress_ports: self.egress_ports,
        }
    }
}

/// A mount item of data key `key` at `path`.
fn item(key: &str, path: &str) -> KeyToPath {
    KeyToPath {
        key: key.to_owned(),
        path: path.to_owned(),
        ..KeyToPath::default()
    }
}

/// Assembles the federation Secret of the rendered backends (each sorted by name, at least
/// one) with proxy.conf for `keystone` and the OIDC crypto `passphrase`.
pub(crate) fn assemble(
    keystone: &Keystone,
    oidc: &[OidcRender],
    saml: &[SamlRender],
    passphrase: &str,
) -> FederationData {
    let bytes = |b: &[u8]| ByteString(b.to_vec());
    let proxy_conf = proxy_conf::render(keystone, oidc, saml, passphrase);
    let mut out = FederationData {
        data: BTreeMap::from([(PROXY_CONF.to_owned(), bytes(proxy_conf.as_bytes()))]),
        ..FederationData::default()
    };
    for r in oidc {
        for port in &r.egress_ports {
            if !out.egress_ports.contains(port) {
                out.egress_ports.push(*port);
            }
        }
        for (suffix, content) in [
            ("provider", &r.provider),
            ("client", &r.client),
            ("conf", &r.conf),
        ] {
            let key = format!("{}.{suffix}", r.backend_name);
            let path = format!("{}.{suffix}", r.metadata_basename);
            out.metadata_items.push(item(&key, &path));
            out.data.insert(key, bytes(content));
        }
    }
    for r in saml {
        let idp_key = idp_metadata_key(&r.backend_name);
        for (key, content) in [
            (SP_KEY, &r.sp_key),
            (SP_CERT, &r.sp_cert),
            (SP_METADATA, &r.sp_metadata),
            (idp_key.as_str(), &r.idp_metadata),
        ] {
            out.mellon_items.push(item(key, key));
            out.data.insert(key.to_owned(), bytes(content));
        }
        out.saml = Some(SamlProjection {
            protocol_id: r.protocol_id.clone(),
            remote_id_attribute: r.remote_id_attribute.clone(),
        });
    }
    out.oidc = oidc.first().map(|r| OidcProjection {
        remote_id_attribute: r.remote_id_attribute.clone(),
    });
    out
}

#[cfg(test)]
#[path = "federation_data_tests.rs"]
mod tests;
