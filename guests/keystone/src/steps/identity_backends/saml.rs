//! One SAML backend's mod_auth_mellon files and what proxy.conf takes of it (facts §2.6
//! step 6, §3.2; CobaltCore's `renderSAMLBackend`).
//!
//! | Piece | From |
//! |---|---|
//! | `sp-key.pem`, `sp-cert.pem` | [`sp_keypair`]: `sp.certificateSecretRef`'s `tls.key` / `tls.crt`, else the generated `{keystone}-saml-sp` Secret |
//! | `sp-metadata.xml` | [`sp_metadata_xml`]: entityID `<base>/metadata`, base = the Keystone endpoint without `/v3` + the mellon endpoint path |
//! | `<backend>.idp-metadata.xml` | [`idp_metadata`]: `inline`, `secretRef` (`idp-metadata.xml`) or `url`; its single EntityDescriptor's entityID must be `idpEntityID` |
//! | mellon endpoint path | `/v3/OS-FEDERATION/identity_providers/<idp>/protocols/<protocol>/auth/mellon` |
//! | forwarded attributes | `MELLON_IDP`, `MELLON_NAME_ID`, `MELLON_<ATTR>` per `forwardAttributes` (upper-cased) |
//! | strip headers | the remote id attribute, `HTTP_MELLON_IDP`, `HTTP_MELLON_NAME_ID`, the mapping remote types, `HTTP_MELLON_<ATTR>` |
//!
//! Faults (the backend alone is skipped): no `saml` block; a CR, LF or `"` in a value
//! written into Apache's config (by field); a missing Secret or key; an incomplete or
//! unparsable SP keypair; the IdP metadata's faults ([`idp_metadata`]). SAML Web-SSO is
//! browser-mediated: the sidecar never dials the IdP, so a SAML backend adds no egress.
//!
//! DECISION: a keypair Secret without `tls.crt` / `tls.key`, or whose certificate is not
//! PEM, and an `idpMetadata` without a source are faults of the backend (CobaltCore fails
//! the whole pass): one bad backend must not stop the Keystone's rollout.

use wasm_operator_sdk::blocks::secrets;

use super::proxy_conf::{first_injected, strip_headers};
use super::sp_keypair;
use super::{idp_metadata, metadata};
use crate::error::Error;
use crate::identity_backend::IdentityBackend;
use crate::pass::Pass;
use crate::steps::deployment::endpoint;

/// The SP private key's file name (and data key).
pub(crate) const SP_KEY: &str = "sp-key.pem";
/// The SP certificate's file name (and data key).
pub(crate) const SP_CERT: &str = "sp-cert.pem";
/// The SP metadata's file name (and data key).
pub(crate) const SP_METADATA: &str = "sp-metadata.xml";

/// The data key (and file name) of a backend's IdP metadata.
pub(crate) fn idp_metadata_key(backend: &str) -> String {
    format!("{backend}.idp-metadata.xml")
}

/// One rendered SAML backend.
#[derive(Clone, PartialEq)]
pub(crate) struct SamlRender {
    pub(crate) backend_name: String,
    pub(crate) idp_name: String,
    pub(crate) protocol_id: String,
    pub(crate) idp_entity_id: String,
    pub(crate) remote_id_attribute: String,
    pub(crate) idp_metadata: Vec<u8>,
    pub(crate) sp_key: Vec<u8>,
    pub(crate) sp_cert: Vec<u8>,
    pub(crate) sp_metadata: Vec<u8>,
    pub(crate) sp_entity_id: String,
    /// The path mod_auth_mellon owns (SP metadata, ACS, logout).
    pub(crate) endpoint_path: String,
    /// The request headers proxy.conf unsets, sorted.
    pub(crate) strip_headers: Vec<String>,
    /// The environment variables forwarded as request headers (`MELLON_IDP` →
    /// `MELLON-IDP`).
    pub(crate) forward_envs: Vec<String>,
    /// The note of a `FederationMetadataStale` Warning, when the IdP metadata is a
    /// last-known-good copy.
    pub(crate) stale: Option<String>,
    /// The backend version its IdP metadata was fetched for (see
    /// [`metadata::SOURCES_ANNOTATION`]); `None` for inline or Secret metadata or a stale
    /// copy.
    pub(crate) fetched_for: Option<String>,
}

impl SamlRender {
    /// The bytes the backend adds to the federation Secret.
    pub(crate) fn size(&self) -> usize {
        self.idp_metadata.len() + self.sp_metadata.len() + self.sp_key.len() + self.sp_cert.len()
    }
}

impl std::fmt::Debug for SamlRender {
    /// Names the backend; never shows the SP key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamlRender")
            .field("backend_name", &self.backend_name)
            .finish_non_exhaustive()
    }
}

/// Why one SAML backend cannot be rendered; it alone is skipped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Fault {
    #[error("backend has type {type_:?} but no saml block")]
    NoSamlBlock { type_: String },
    #[error("{field} contains a newline, carriage-return or double-quote character")]
    ControlCharacter { field: String },
    #[error(transparent)]
    Secret(secrets::Error),
    #[error("SP keypair Secret {secret} carries no tls.crt/tls.key")]
    SpKeypairIncomplete { secret: String },
    #[error("parsing SP certificate from Secret {secret}: no CERTIFICATE PEM block found")]
    SpCertificate { secret: String },
    #[error("parsing SP key from Secret {secret}: no PRIVATE KEY PEM block found")]
    SpKey { secret: String },
    #[error("spec.saml.idpMetadata has no source")]
    NoMetadataSource,
    #[error("provider metadata unavailable: fetching {url} failed")]
    MetadataUnavailable { url: String },
    #[error(
        "provider metadata unavailable: {url} is outside the operator's declared egress; set \
         spec.saml.idpMetadata.inline or spec.saml.idpMetadata.secretRef instead"
    )]
    OutsideEgress { url: String },
    #[error(
        "provider metadata unavailable: document entityID does not match spec idpEntityID \
         {entity_id:?}"
    )]
    DocumentEntityIdMismatch { entity_id: String },
    #[error("provider metadata unavailable: parsing IdP metadata for backend {backend}: {why}")]
    UnparsableMetadata { backend: String, why: String },
    #[error(
        "provider metadata unavailable: IdP metadata entityID does not match \
         spec.saml.idpEntityID {entity_id:?}"
    )]
    EntityIdMismatch { entity_id: String },
}

/// A Secret read of the render: a missing Secret or key is a [`Fault`], a failed read an
/// `Err` naming the backend.
pub(crate) fn read_secret(
    pass: &Pass<'_>,
    backend: &IdentityBackend,
    secret: &str,
    key: &str,
) -> Result<Result<String, Fault>, Error> {
    match secrets::get_secret_value(pass.primary_cluster, pass.namespace(), secret, key) {
        Ok(value) => Ok(Ok(value)),
        Err(e @ secrets::Error::Get { .. }) => Err(Error::Secrets {
            what: format!("rendering the SAML config of backend {}", backend.name()),
            source: e,
        }),
        Err(e) => Ok(Err(Fault::Secret(e))),
    }
}

/// Renders `backend`: a [`Fault`] skips it, an `Err` (a failed read or write) fails the
/// pass. The generated SP keypair is written once, before the IdP metadata is resolved,
/// so the SP can be registered with the IdP first.
pub(crate) fn render(
    pass: &Pass<'_>,
    backend: &IdentityBackend,
) -> Result<Result<SamlRender, Fault>, Error> {
    let Some(s) = &backend.spec.saml else {
        return Ok(Err(Fault::NoSamlBlock {
            type_: backend.spec.type_.clone(),
        }));
    };
    if let Some(field) = injected(backend) {
        return Ok(Err(Fault::ControlCharacter { field }));
    }
    let keypair = match sp_keypair::ensure(pass, backend)? {
        Ok(keypair) => keypair,
        Err(fault) => return Ok(Err(fault)),
    };
    let (idp, protocol) = (backend.identity_provider_name(), backend.protocol_id());
    let endpoint_path =
        format!("/v3/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}/auth/mellon");
    let public = endpoint(pass);
    let base = format!(
        "{}{endpoint_path}",
        public.strip_suffix("/v3").unwrap_or(&public)
    );
    let sp_entity_id = format!("{base}/metadata");
    let sp_metadata = sp_metadata_xml(&sp_entity_id, &base, &keypair.cert_der);
    let metadata::Obtained {
        document: idp_metadata,
        stale,
        fetched_for,
    } = match idp_metadata::resolve(pass, backend, s)? {
        Ok(resolved) => resolved,
        Err(fault) => return Ok(Err(fault)),
    };
    let upper: Vec<String> = s
        .forward_attributes
        .iter()
        .map(|a| a.to_uppercase())
        .collect();
    let mut forward_envs = vec!["MELLON_IDP".to_owned(), "MELLON_NAME_ID".to_owned()];
    forward_envs.extend(upper.iter().map(|a| format!("MELLON_{a}")));
    let headers: Vec<String> = upper.iter().map(|a| format!("HTTP_MELLON_{a}")).collect();
    let mut env_names = vec![
        backend.remote_id_attribute(),
        "HTTP_MELLON_IDP",
        "HTTP_MELLON_NAME_ID",
    ];
    env_names.extend(backend.mapping_remote_types());
    env_names.extend(headers.iter().map(String::as_str));
    Ok(Ok(SamlRender {
        backend_name: backend.name().to_owned(),
        idp_name: idp.to_owned(),
        protocol_id: protocol.to_owned(),
        idp_entity_id: s.idp_entity_id.clone(),
        remote_id_attribute: backend.remote_id_attribute().to_owned(),
        idp_metadata,
        sp_key: keypair.key,
        sp_cert: keypair.cert_pem.into_bytes(),
        sp_metadata: sp_metadata.into_bytes(),
        sp_entity_id,
        endpoint_path,
        strip_headers: strip_headers(env_names),
        forward_envs,
        stale,
        fetched_for,
    }))
}

/// The field of the first value written into Apache's config that holds a CR, LF or `"`.
fn injected(backend: &IdentityBackend) -> Option<String> {
    let s = backend.spec.saml.as_ref()?;
    let named = [
        ("idpEntityID", s.idp_entity_id.as_str()),
        ("identityProviderName", backend.identity_provider_name()),
        ("protocolID", backend.protocol_id()),
        ("remoteIDAttribute", backend.remote_id_attribute()),
    ];
    let attributes = s.forward_attributes.iter().enumerate();
    first_injected(
        named
            .into_iter()
            .map(|(field, v)| (format!("spec.saml.{field}"), v))
            .chain(
                attributes.map(|(i, v)| (format!("spec.saml.forwardAttributes[{i}]"), v.as_str())),
            )
            .chain(backend.mapping_remote_type_fields()),
    )
}

/// The SP's EntityDescriptor (mellon_create_metadata.sh's shape): unsigned requests,
/// signed assertions, the certificate for signing and encryption, HTTP-Redirect logout at
/// `<base>/logout` and the HTTP-POST assertion consumer at `<base>/postResponse`.
///
/// DECISION: the entityID and base are XML-escaped (CobaltCore writes them raw), so a
/// public endpoint with `&` in it still yields well-formed metadata.
pub(crate) fn sp_metadata_xml(entity_id: &str, base: &str, cert_der: &[u8]) -> String {
    use base64::Engine as _;
    let cert = base64::engine::general_purpose::STANDARD.encode(cert_der);
    let (entity_id, base) = (xml_escape(entity_id), xml_escape(base));
    let key_descriptor = |usage: &str| {
        format!(
            "    <KeyDescriptor use=\"{usage}\">\n      \
             <ds:KeyInfo xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\">\n        \
             <ds:X509Data>\n          \
             <ds:X509Certificate>{cert}</ds:X509Certificate>\n        \
             </ds:X509Data>\n      \
             </ds:KeyInfo>\n    \
             </KeyDescriptor>"
        )
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <EntityDescriptor xmlns=\"urn:oasis:names:tc:SAML:2.0:metadata\" entityID=\"{entity_id}\">\n  \
         <SPSSODescriptor AuthnRequestsSigned=\"false\" WantAssertionsSigned=\"true\" \
         protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\">\n\
         {}\n{}\n    \
         <SingleLogoutService Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect\" \
         Location=\"{base}/logout\"/>\n    \
         <AssertionConsumerService index=\"0\" isDefault=\"true\" \
         Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST\" \
         Location=\"{base}/postResponse\"/>\n  \
         </SPSSODescriptor>\n\
         </EntityDescriptor>\n",
        key_descriptor("signing"),
        key_descriptor("encryption"),
    )
}

/// `s` with `&`, `<`, `>` and `"` as entity references.
fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
#[path = "saml_tests.rs"]
mod tests;
