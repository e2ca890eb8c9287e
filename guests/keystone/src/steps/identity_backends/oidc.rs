//! One OIDC backend's mod_auth_openidc files and what proxy.conf and the NetworkPolicy take
//! of it (facts §2.6 step 6, §3.2; CobaltCore's `renderOIDCBackend`).
//!
//! | Piece | From |
//! |---|---|
//! | `.provider` | with `endpoints`: `issuer`, `authorization_endpoint`, `token_endpoint`, `jwks_uri` and the set ones of `userinfo_endpoint`, `end_session_endpoint`, `introspection_endpoint`, keys sorted, 2-space indented; else the discovery document GET from `providerMetadataURL` (default `<issuer>/.well-known/openid-configuration`), see [`metadata`] |
//! | `.client` | `{"client_id","client_secret"}`; the secret is `clientSecretRef`'s `clientSecret`, trailing CR/LF trimmed |
//! | `.conf` | `{"response_type","scope"}`, the scopes space-joined |
//! | file basename | [`metadata_basename`] of the issuer |
//! | introspection | with `oauth2Introspection.enabled`: the explicit or discovered `introspection_endpoint`, https only |
//! | claim strip headers | the remote id attribute and every mapping remote type, both spellings ([`strip_headers`]) |
//! | egress ports | the issuer, a set `providerMetadataURL`, with `endpoints` the token, jwks (and set userinfo, end-session, introspection) ones, else every endpoint of the document; explicit port, else 443 (80 for http) |
//!
//! | Fault (the backend alone is skipped) | Message |
//! |---|---|
//! | no `oidc` block | `backend has type "OIDC" but no oidc block` |
//! | CR, LF or `"` in a value written into Apache's config | `<field> contains a newline, carriage-return or double-quote character` |
//! | client Secret or its key missing, or not text | the Secret error |
//! | the document cannot be fetched, or is not JSON | `provider metadata unavailable: fetching <url> failed` |
//! | the document's issuer differs | `provider metadata unavailable: document issuer does not match spec issuer "<issuer>"` |
//! | the URL is outside the plugin's declared egress | `provider metadata unavailable: <url> is outside the operator's declared egress; set spec.oidc.endpoints instead` |
//! | introspection without an endpoint, or an http one | `provider metadata unavailable: oauth2Introspection is enabled but ...` / `introspection endpoint "<ep>" is not https ...` |
//!
//! A metadata fault falls back to [`metadata::last_known_good`]: the newest federation
//! Secret's `<backend>.provider`, when its issuer is the spec's; the render then carries
//! the `FederationMetadataStale` note for the caller to record.
//!
//! DECISION: the injection check names the field, not the value, and covers the explicit
//! endpoints too (CobaltCore echoes the value and skips the endpoints).

use std::collections::BTreeMap;

use serde::Deserialize;
use wasm_operator_sdk::blocks::secrets::{self, get_secret_value};

use super::metadata::{self, Fetch, Obtained, egress_port, metadata_basename, query_escape};
use super::proxy_conf::{REDIRECT_URI_PATH, first_injected, strip_headers};
use crate::error::Error;
use crate::identity_backend::{IdentityBackend, OidcBackend};
use crate::pass::Pass;
use crate::steps::deployment::endpoint;

/// Bearer-token introspection (the OAuth2 resource server role) of one backend.
#[derive(Clone, PartialEq)]
pub(crate) struct Introspection {
    pub(crate) endpoint: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
    /// `OIDCOAuthSSLValidateServer`: off only with `tlsVerify: false`.
    pub(crate) tls_verify: bool,
}

/// One rendered OIDC backend.
#[derive(Clone, PartialEq)]
pub(crate) struct OidcRender {
    pub(crate) backend_name: String,
    pub(crate) idp_name: String,
    pub(crate) protocol_id: String,
    pub(crate) remote_id_attribute: String,
    /// mod_auth_openidc's file basename of the issuer.
    pub(crate) metadata_basename: String,
    pub(crate) provider: Vec<u8>,
    pub(crate) client: Vec<u8>,
    pub(crate) conf: Vec<u8>,
    /// `OIDCDiscoverURL`: the redirect URI with `?iss=<issuer>`.
    pub(crate) discover_url: String,
    pub(crate) introspection: Option<Introspection>,
    pub(crate) session_type: String,
    pub(crate) state_input_headers: String,
    /// The request headers proxy.conf unsets, sorted.
    pub(crate) strip_headers: Vec<String>,
    /// The TCP ports the sidecar dials, deduplicated, in first-seen order.
    pub(crate) egress_ports: Vec<i32>,
    /// The note of a `FederationMetadataStale` Warning, when the document is a last-known-
    /// good copy.
    pub(crate) stale: Option<String>,
    /// The backend version its discovery document was fetched for (see
    /// [`metadata::SOURCES_ANNOTATION`]); `None` for explicit endpoints or a stale copy.
    pub(crate) fetched_for: Option<String>,
}

impl OidcRender {
    /// The bytes the backend adds to the federation Secret (`.provider`, `.client`,
    /// `.conf`).
    pub(crate) fn size(&self) -> usize {
        self.provider.len() + self.client.len() + self.conf.len()
    }
}

impl std::fmt::Debug for OidcRender {
    /// Names the backend; never shows the client secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcRender")
            .field("backend_name", &self.backend_name)
            .finish_non_exhaustive()
    }
}

/// Why one OIDC backend cannot be rendered; it alone is skipped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Fault {
    #[error("backend has type {type_:?} but no oidc block")]
    NoOidcBlock { type_: String },
    #[error("{field} contains a newline, carriage-return or double-quote character")]
    ControlCharacter { field: String },
    #[error(transparent)]
    Secret(secrets::Error),
    #[error("provider metadata unavailable: fetching {url} failed")]
    MetadataUnavailable { url: String },
    #[error(
        "provider metadata unavailable: {url} is outside the operator's declared egress; set \
         spec.oidc.endpoints instead"
    )]
    OutsideEgress { url: String },
    #[error("provider metadata unavailable: document issuer does not match spec issuer {issuer:?}")]
    IssuerMismatch { issuer: String },
    #[error(
        "provider metadata unavailable: oauth2Introspection is enabled but the provider \
         metadata carries no introspection_endpoint"
    )]
    NoIntrospectionEndpoint,
    #[error(
        "provider metadata unavailable: introspection endpoint {endpoint:?} is not https \
         (mod_auth_openidc rejects http introspection endpoints)"
    )]
    IntrospectionNotHttps { endpoint: String },
}

/// The discovery document's fields read here.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Document {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
    userinfo_endpoint: String,
    end_session_endpoint: String,
    introspection_endpoint: String,
}

/// Renders `backend`: a [`Fault`] skips it, an `Err` (a failed read) fails the pass.
pub(crate) fn render(
    pass: &Pass<'_>,
    backend: &IdentityBackend,
) -> Result<Result<OidcRender, Fault>, Error> {
    let Some(o) = &backend.spec.oidc else {
        return Ok(Err(Fault::NoOidcBlock {
            type_: backend.spec.type_.clone(),
        }));
    };
    if let Some(field) = injected(backend, o) {
        return Ok(Err(Fault::ControlCharacter { field }));
    }
    let secret = &o.client_secret_ref.name;
    let client_secret = match get_secret_value(
        pass.primary_cluster,
        pass.namespace(),
        secret,
        "clientSecret",
    ) {
        Ok(value) => value.trim_end_matches(['\r', '\n']).to_owned(),
        Err(e @ secrets::Error::Get { .. }) => {
            return Err(Error::Secrets {
                what: format!(
                    "rendering the federation config of backend {}",
                    backend.name()
                ),
                source: e,
            });
        }
        Err(e) => return Ok(Err(Fault::Secret(e))),
    };
    let Obtained {
        document: provider,
        stale,
        fetched_for,
    } = match &o.endpoints {
        Some(_) => Obtained::fresh(explicit_document(o)),
        None => match discovered(pass, backend, o)? {
            Ok(found) => found,
            Err(fault) => return Ok(Err(fault)),
        },
    };
    let document: Document = serde_json::from_slice(&provider).unwrap_or_default();
    let introspection = match introspection(o, &document, &client_secret) {
        Ok(i) => i,
        Err(fault) => return Ok(Err(fault)),
    };
    let json = |map: BTreeMap<&str, &str>| serde_json::to_vec(&map).unwrap_or_default();
    let scope = o.scopes().join(" ");
    let mut env_names = vec![backend.remote_id_attribute()];
    env_names.extend(backend.mapping_remote_types());
    let public = endpoint(pass);
    let redirect_uri = format!(
        "{}{REDIRECT_URI_PATH}",
        public.strip_suffix("/v3").unwrap_or(&public)
    );
    Ok(Ok(OidcRender {
        backend_name: backend.name().to_owned(),
        idp_name: backend.identity_provider_name().to_owned(),
        protocol_id: backend.protocol_id().to_owned(),
        remote_id_attribute: backend.remote_id_attribute().to_owned(),
        metadata_basename: metadata_basename(&o.issuer),
        client: json(BTreeMap::from([
            ("client_id", o.client_id.as_str()),
            ("client_secret", client_secret.as_str()),
        ])),
        conf: json(BTreeMap::from([
            ("scope", scope.as_str()),
            ("response_type", o.response_type()),
        ])),
        discover_url: format!("{redirect_uri}?iss={}", query_escape(&o.issuer)),
        introspection,
        session_type: o.session_type().to_owned(),
        state_input_headers: o.state_input_headers().to_owned(),
        strip_headers: strip_headers(env_names),
        egress_ports: egress_ports(o, &document),
        provider,
        stale,
        fetched_for,
    }))
}

/// The field of the first value written into Apache's config that holds a CR, LF or `"`.
fn injected(backend: &IdentityBackend, o: &OidcBackend) -> Option<String> {
    let named = [
        ("issuer", o.issuer.as_str()),
        ("providerMetadataURL", &o.provider_metadata_url),
        ("clientID", &o.client_id),
        ("identityProviderName", backend.identity_provider_name()),
        ("protocolID", backend.protocol_id()),
        ("remoteIDAttribute", backend.remote_id_attribute()),
        ("responseType", o.response_type()),
        ("sessionType", o.session_type()),
        ("stateInputHeaders", o.state_input_headers()),
    ];
    let endpoints = o.endpoints.iter().flat_map(|e| {
        [
            (
                "endpoints.authorizationEndpoint",
                e.authorization_endpoint.as_str(),
            ),
            ("endpoints.tokenEndpoint", &e.token_endpoint),
            ("endpoints.jwksURI", &e.jwks_uri),
            ("endpoints.userinfoEndpoint", &e.userinfo_endpoint),
            ("endpoints.endSessionEndpoint", &e.end_session_endpoint),
            ("endpoints.introspectionEndpoint", &e.introspection_endpoint),
        ]
    });
    let scopes = o.scopes().into_iter().enumerate();
    first_injected(
        named
            .into_iter()
            .chain(endpoints)
            .map(|(field, v)| (format!("spec.oidc.{field}"), v))
            .chain(scopes.map(|(i, v)| (format!("spec.oidc.scopes[{i}]"), v)))
            .chain(backend.mapping_remote_type_fields()),
    )
}

/// The document of `spec.oidc.endpoints`.
fn explicit_document(o: &OidcBackend) -> Vec<u8> {
    let Some(e) = &o.endpoints else {
        return Vec::new();
    };
    let mut doc = BTreeMap::from([
        ("issuer", &o.issuer),
        ("authorization_endpoint", &e.authorization_endpoint),
        ("token_endpoint", &e.token_endpoint),
        ("jwks_uri", &e.jwks_uri),
    ]);
    for (key, value) in [
        ("userinfo_endpoint", &e.userinfo_endpoint),
        ("end_session_endpoint", &e.end_session_endpoint),
        ("introspection_endpoint", &e.introspection_endpoint),
    ] {
        if !value.is_empty() {
            doc.insert(key, value);
        }
    }
    serde_json::to_vec_pretty(&doc).unwrap_or_default()
}

/// The fetched discovery document, or the last-known-good one with the stale note.
fn discovered(
    pass: &Pass<'_>,
    backend: &IdentityBackend,
    o: &OidcBackend,
) -> Result<Result<Obtained, Fault>, Error> {
    let url = o.metadata_url();
    let key = format!("{}.provider", backend.name());
    let stamp = metadata::stamp(backend);
    let valid =
        |doc: &[u8]| serde_json::from_slice::<Document>(doc).is_ok_and(|d| d.issuer == o.issuer);
    if let Some(doc) = metadata::cached(pass, backend, &key)?.filter(|d| valid(d)) {
        return Ok(Ok(Obtained::fetched(doc, stamp)));
    }
    let fault = match metadata::fetch(pass.probe, &url) {
        Ok(body) => match serde_json::from_slice::<Document>(&body) {
            Ok(doc) if doc.issuer == o.issuer => return Ok(Ok(Obtained::fetched(body, stamp))),
            Ok(_) => Fault::IssuerMismatch {
                issuer: o.issuer.clone(),
            },
            Err(e) => {
                metadata::failed(&url, &format!("decoding the response: {e}"));
                Fault::MetadataUnavailable { url }
            }
        },
        Err(Fetch::Refused) => Fault::OutsideEgress { url },
        Err(Fetch::Failed) => Fault::MetadataUnavailable { url },
    };
    let note = || {
        format!(
            "Identity backend {}: provider metadata unavailable ({fault}); reusing the \
             last-known-good discovery document so federation stays up",
            backend.name()
        )
    };
    Ok(metadata::stand_in(pass, &key, valid, note)?.ok_or(fault))
}

/// The introspection settings, when enabled.
fn introspection(
    o: &OidcBackend,
    document: &Document,
    client_secret: &str,
) -> Result<Option<Introspection>, Fault> {
    if !o.introspection() {
        return Ok(None);
    }
    let endpoint = match &o.endpoints {
        Some(e) => e.introspection_endpoint.clone(),
        None => document.introspection_endpoint.clone(),
    };
    if endpoint.is_empty() {
        return Err(Fault::NoIntrospectionEndpoint);
    }
    if !endpoint.starts_with("https://") {
        return Err(Fault::IntrospectionNotHttps { endpoint });
    }
    let tls_verify = o
        .oauth2_introspection
        .as_ref()
        .and_then(|i| i.tls_verify)
        .unwrap_or(true);
    Ok(Some(Introspection {
        endpoint,
        client_id: o.client_id.clone(),
        client_secret: client_secret.to_owned(),
        tls_verify,
    }))
}

/// The ports of the issuer, a set `providerMetadataURL` and the endpoints the sidecar
/// dials, deduplicated in first-seen order.
fn egress_ports(o: &OidcBackend, document: &Document) -> Vec<i32> {
    let mut urls = vec![o.issuer.as_str()];
    if !o.provider_metadata_url.is_empty() {
        urls.push(&o.provider_metadata_url);
    }
    match &o.endpoints {
        Some(e) => {
            urls.extend([e.token_endpoint.as_str(), &e.jwks_uri]);
            let optional = [
                &e.userinfo_endpoint,
                &e.end_session_endpoint,
                &e.introspection_endpoint,
            ];
            urls.extend(
                optional
                    .into_iter()
                    .filter(|u| !u.is_empty())
                    .map(String::as_str),
            );
        }
        None => {
            let d = document;
            let all = [
                &d.authorization_endpoint,
                &d.token_endpoint,
                &d.jwks_uri,
                &d.userinfo_endpoint,
                &d.end_session_endpoint,
                &d.introspection_endpoint,
            ];
            urls.extend(
                all.into_iter()
                    .filter(|u| !u.is_empty())
                    .map(String::as_str),
            );
        }
    }
    let mut ports = Vec::new();
    for port in urls.into_iter().map(egress_port) {
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    ports
}

#[cfg(test)]
#[path = "oidc_tests.rs"]
mod tests;
