//! An identity provider's metadata document (the OIDC discovery document, the SAML IdP
//! metadata): fetched through the pass's [`Probe`], or the last-known-good copy an earlier
//! pass projected.
//!
//! | Answer to the GET (10 s) | [`fetch`] |
//! |---|---|
//! | 2xx with at most 256 KiB | the body |
//! | the destination is outside the plugin's declared egress ([`HttpError::Refused`]) | [`Fetch::Refused`] |
//! | anything else: a transport failure, a non-2xx status, a larger body | [`Fetch::Failed`] |
//!
//! Callers turn a failure, and a body whose content does not validate, into a fault
//! message naming only the URL: the tenant picks the URL and the message reaches a
//! tenant-visible Event and condition, so echoing a status, a transport error or anything
//! of the body would make the fetch an SSRF probe oracle (CobaltCore's rule). The detail
//! goes to the plugin's log.
//!
//! Also the URL helpers of the OIDC render: [`egress_port`], [`metadata_basename`],
//! [`query_escape`].
//!
//! DECISION: the SDK follows redirects to declared destinations (a redirect elsewhere is
//! [`HttpError::Refused`]); CobaltCore refuses every redirect. Here the host's egress
//! check, not a dial guard, is the SSRF boundary, and it checks every hop.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use wasm_operator_sdk::blocks::apply::is_controlled_by;
use wasm_operator_sdk::blocks::config::configmap::CONFIG_BASE_LABEL;
use wasm_operator_sdk::http::HttpError;
use wasm_operator_sdk::{ClusterExt, ListOptions, log};

use crate::error::Error;
use crate::federation;
use crate::identity_backend::IdentityBackend;
use crate::pass::Pass;
use crate::steps::health_check::Probe;

/// The Warning event reason of a render that reuses a last-known-good document (the
/// renders carry its note; the caller records it).
pub(crate) const STALE: &str = "FederationMetadataStale";
/// The GET's timeout.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest document taken.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// The annotation of a federation Secret naming, per backend whose document was fetched
/// from a URL, the backend version ([`stamp`]) the document was fetched for: a JSON object
/// `{"<backend>": "<uid>/<generation>"}`.
pub(crate) const SOURCES_ANNOTATION: &str = "keystone.openstack.c5c3.io/metadata-sources";

/// A usable metadata document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Obtained {
    pub(crate) document: Vec<u8>,
    /// The note of a `FederationMetadataStale` Warning, when the document is a
    /// last-known-good copy.
    pub(crate) stale: Option<String>,
    /// The backend's [`stamp`] when the document was fetched from its URL for this very
    /// version of the backend (now, or by an earlier pass).
    pub(crate) fetched_for: Option<String>,
}

impl Obtained {
    /// A document just obtained from its source.
    pub(crate) fn fresh(document: Vec<u8>) -> Self {
        Self {
            document,
            stale: None,
            fetched_for: None,
        }
    }

    /// A document fetched from its URL for the backend version `stamp`.
    pub(crate) fn fetched(document: Vec<u8>, stamp: String) -> Self {
        Self {
            document,
            stale: None,
            fetched_for: Some(stamp),
        }
    }
}

/// `<uid>/<generation>` of `backend`: a fetched document is reused, without a request,
/// while the backend stays at this version.
pub(crate) fn stamp(backend: &IdentityBackend) -> String {
    format!(
        "{}/{}",
        backend.metadata.uid.as_deref().unwrap_or_default(),
        backend.metadata.generation.unwrap_or_default()
    )
}

/// The document `key` of the newest federation Secret when that Secret records it as
/// fetched for this version of `backend` ([`SOURCES_ANNOTATION`]): what an earlier pass
/// fetched, so a converged pass sends the identity provider no request. CobaltCore keeps
/// the same per-generation cache in its process memory.
pub(crate) fn cached(
    pass: &Pass<'_>,
    backend: &IdentityBackend,
    key: &str,
) -> Result<Option<Vec<u8>>, Error> {
    let Some(newest) = newest(pass)? else {
        return Ok(None);
    };
    let recorded = newest
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SOURCES_ANNOTATION))
        .and_then(|v| serde_json::from_str::<BTreeMap<String, String>>(v).ok())
        .and_then(|sources| sources.get(backend.name()).cloned());
    if recorded.as_deref() != Some(stamp(backend).as_str()) {
        return Ok(None);
    }
    Ok(newest
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|v| v.0.clone())
        .filter(|v| !v.is_empty()))
}

/// Why no document was fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// The host refused the destination: the plugin did not declare it.
    Refused,
    /// Anything else; the detail is in the log.
    Failed,
}

/// GETs `url` through `probe`.
pub(crate) fn fetch(probe: &dyn Probe, url: &str) -> Result<Vec<u8>, Fetch> {
    match probe.get(url, FETCH_TIMEOUT) {
        Err(e @ HttpError::Refused { .. }) => {
            log::info(&format!("fetching federation metadata: {e}"));
            Err(Fetch::Refused)
        }
        Err(e) => Err(failed(url, &e.to_string())),
        Ok(response) if !(200..300).contains(&response.status) => {
            Err(failed(url, &format!("HTTP {}", response.status)))
        }
        Ok(response) if response.body.len() > MAX_DOCUMENT_BYTES => Err(failed(
            url,
            &format!("the response exceeds the {MAX_DOCUMENT_BYTES}-byte budget"),
        )),
        Ok(response) => Ok(response.body),
    }
}

/// Logs why the document of `url` is not usable and returns [`Fetch::Failed`].
pub(crate) fn failed(url: &str, detail: &str) -> Fetch {
    log::info(&format!(
        "fetching federation metadata from {url} failed: {detail}"
    ));
    Fetch::Failed
}

/// The value of `key` in the newest `{keystone}-federation-*` Secret this Keystone
/// controls (by creation time, then name), when it holds a non-empty one: the document a
/// previous pass projected.
///
/// DECISION: a failed list fails the pass (CobaltCore treats it as "no copy" and skips the
/// backend): tearing federation down because one read failed is worse than retrying.
pub(crate) fn last_known_good(pass: &Pass<'_>, key: &str) -> Result<Option<Vec<u8>>, Error> {
    Ok(newest(pass)?
        .and_then(|s| s.data?.remove(key))
        .map(|v| v.0)
        .filter(|v| !v.is_empty()))
}

/// The last-known-good copy of `key` when it passes `valid`, as a stale document whose
/// `FederationMetadataStale` note is `note()`; `None` when there is none to stand in.
pub(crate) fn stand_in(
    pass: &Pass<'_>,
    key: &str,
    valid: impl Fn(&[u8]) -> bool,
    note: impl FnOnce() -> String,
) -> Result<Option<Obtained>, Error> {
    Ok(last_known_good(pass, key)?
        .filter(|doc| valid(doc))
        .map(|document| Obtained {
            document,
            stale: Some(note()),
            fetched_for: None,
        }))
}

/// The newest `{keystone}-federation-*` Secret this Keystone controls (by creation time,
/// then name).
fn newest(pass: &Pass<'_>) -> Result<Option<Secret>, Error> {
    let base = federation::secret_base(pass.name());
    let options = ListOptions {
        label_selector: Some(format!("{CONFIG_BASE_LABEL}={base}")),
        ..ListOptions::default()
    };
    let secrets = pass
        .cluster
        .list_typed::<Secret>(Some(pass.namespace()), &options)
        .map_err(Error::cluster(format!(
            "listing the federation Secrets {}",
            pass.key(&format!("{base}-*"))
        )))?;
    let prefix = format!("{base}-");
    Ok(secrets
        .into_iter()
        .filter(|s| {
            s.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with(&prefix))
                && is_controlled_by(&s.metadata, &pass.owner.uid)
        })
        .max_by(|a, b| {
            let created = |s: &Secret| s.metadata.creation_timestamp.clone().map(|t| t.0);
            created(a)
                .cmp(&created(b))
                .then_with(|| a.metadata.name.cmp(&b.metadata.name))
        }))
}

/// The TCP port of `url`: its explicit one (1-65535), else 80 for `http`, else 443.
pub(crate) fn egress_port(url: &str) -> i32 {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let explicit = match host_port.rsplit_once(':') {
        Some((_, port)) if !port.contains(']') => port.parse::<i32>().ok(),
        _ => None,
    };
    match explicit.filter(|p| (1..=65535).contains(p)) {
        Some(port) => port,
        None if scheme.eq_ignore_ascii_case("http") => 80,
        None => 443,
    }
}

/// mod_auth_openidc's `OIDCMetadataDir` file basename of `issuer`: the scheme and
/// trailing slashes dropped, every byte but `A-Za-z0-9-._~` as `%XX` (upper-case hex).
pub(crate) fn metadata_basename(issuer: &str) -> String {
    let rest = issuer.split_once("://").map_or(issuer, |(_, r)| r);
    percent_escape(rest.trim_end_matches('/'), false)
}

/// `s` escaped for a query component as Go's `url.QueryEscape` does (space as `+`).
pub(crate) fn query_escape(s: &str) -> String {
    percent_escape(s, true)
}

fn percent_escape(s: &str, space_as_plus: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b));
            }
            b' ' if space_as_plus => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// What the federation renderers' tests share: an identity provider with canned answers.
#[cfg(test)]
pub(crate) mod testing {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::time::Duration;

    use wasm_operator_sdk::http::{HttpError, Response};

    use crate::steps::health_check::Probe;
    use crate::steps::identity_backends::oidc::OidcRender;
    use crate::steps::identity_backends::saml::SamlRender;

    /// A [`Probe`] answering each URL as set, and recording the URLs asked; any other URL
    /// fails to connect.
    #[derive(Default)]
    pub(crate) struct Idp {
        answers: BTreeMap<String, Result<Response, HttpError>>,
        asked: RefCell<Vec<String>>,
    }

    impl Idp {
        /// `url` answers `status` with `body`.
        pub(crate) fn answering(mut self, url: &str, status: u16, body: &[u8]) -> Self {
            let response = Response {
                status,
                headers: Vec::new(),
                body: body.to_vec(),
                url: url.to_owned(),
            };
            self.answers.insert(url.to_owned(), Ok(response));
            self
        }

        /// `url` fails with `error`.
        pub(crate) fn failing(mut self, url: &str, error: HttpError) -> Self {
            self.answers.insert(url.to_owned(), Err(error));
            self
        }

        /// The URLs asked, in order.
        pub(crate) fn asked(&self) -> Vec<String> {
            self.asked.borrow().clone()
        }
    }

    impl Probe for Idp {
        fn get(&self, url: &str, timeout: Duration) -> Result<Response, HttpError> {
            assert_eq!(timeout, super::FETCH_TIMEOUT, "the metadata GET's timeout");
            self.asked.borrow_mut().push(url.to_owned());
            self.answers.get(url).cloned().unwrap_or_else(|| {
                Err(HttpError::Connection {
                    url: url.to_owned(),
                    message: "connection refused".to_owned(),
                })
            })
        }
    }

    /// A rendered OIDC backend `name` of identity provider `idp` over `protocol`,
    /// discovering at `D-<idp>`, stripping the OIDC issuer and email headers, dialing 443.
    pub(crate) fn oidc_render(name: &str, idp: &str, protocol: &str) -> OidcRender {
        OidcRender {
            backend_name: name.to_owned(),
            idp_name: idp.to_owned(),
            protocol_id: protocol.to_owned(),
            remote_id_attribute: "HTTP_OIDC_ISS".to_owned(),
            metadata_basename: format!("{idp}.example.com%2Frealms%2Fx"),
            provider: format!("{{\"issuer\":\"https://{idp}.example.com/realms/x\"}}").into_bytes(),
            client: br#"{"client_id":"keystone","client_secret":"s3cret"}"#.to_vec(),
            conf: br#"{"response_type":"code","scope":"openid email profile"}"#.to_vec(),
            discover_url: format!("D-{idp}"),
            introspection: None,
            session_type: "client-cookie".to_owned(),
            state_input_headers: "none".to_owned(),
            strip_headers: ["OIDC-EMAIL", "OIDC-ISS", "OIDC_EMAIL", "OIDC_ISS"]
                .map(String::from)
                .to_vec(),
            egress_ports: vec![443],
            stale: None,
            fetched_for: None,
        }
    }

    /// A rendered SAML backend `name` of identity provider `idp` over `protocol`,
    /// forwarding the IdP and NameID.
    pub(crate) fn saml_render(name: &str, idp: &str, protocol: &str) -> SamlRender {
        SamlRender {
            backend_name: name.to_owned(),
            idp_name: idp.to_owned(),
            protocol_id: protocol.to_owned(),
            idp_entity_id: "urn:idp".to_owned(),
            remote_id_attribute: "HTTP_MELLON_IDP".to_owned(),
            idp_metadata: b"<EntityDescriptor entityID=\"urn:idp\"/>".to_vec(),
            sp_key: b"KEY".to_vec(),
            sp_cert: b"CERT".to_vec(),
            sp_metadata: b"SP".to_vec(),
            sp_entity_id: "SPID".to_owned(),
            endpoint_path: format!(
                "/v3/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}/auth/mellon"
            ),
            strip_headers: [
                "MELLON-IDP",
                "MELLON-NAME-ID",
                "MELLON_IDP",
                "MELLON_NAME_ID",
            ]
            .map(String::from)
            .to_vec(),
            forward_envs: vec!["MELLON_IDP".to_owned(), "MELLON_NAME_ID".to_owned()],
            stale: None,
            fetched_for: None,
        }
    }

    /// The host's refusal of `url`.
    pub(crate) fn refused(url: &str) -> HttpError {
        HttpError::Refused {
            url: url.to_owned(),
            destination: "idp.example.com:443".to_owned(),
        }
    }
}

#[cfg(test)]
#[path = "metadata_tests.rs"]
mod tests;
