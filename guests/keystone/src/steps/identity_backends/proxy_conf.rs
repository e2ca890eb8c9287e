//! The federation sidecar's `proxy.conf`: the virtual host body the image's
//! `httpd-base.conf` includes, for mod_auth_openidc (OIDC) and mod_auth_mellon (SAML) in
//! one file (CobaltCore's `renderProxyConf`, `writeMellonConf`,
//! `writeMellonProtectedLocation`, line for line).
//!
//! | Block, in order | When |
//! |---|---|
//! | the "Rendered by the keystone operator" header | always |
//! | `OIDCCryptoPassphrase`, `OIDCMetadataDir`, `OIDCRedirectURI`, `OIDCClaimPrefix`, `OIDCSessionType` / `OIDCStateInputHeaders` (the first OIDC backend's) | an OIDC backend |
//! | `OIDCXForwardedHeaders X-Forwarded-Host X-Forwarded-Proto` | an OIDC backend and `spec.gateway` (the Gateway is the trust boundary that overwrites them) |
//! | `RequestHeader unset "<h>" early` per claim/attribute header, merged and sorted | always |
//! | `ProxyPreserveHost On`; `ProxyPass "<mellon endpoint>" !` per SAML backend before the catch-all `ProxyPass` / `ProxyPassReverse` to uWSGI on 127.0.0.1:5000 | always |
//! | the `OIDCOAuth*` resource-server directives (+ `OIDCOAuthSSLValidateServer Off` with `tlsVerify: false`) | per OIDC backend with introspection |
//! | the per-IdP `websso` and `auth` Locations (`auth-openidc` on the auth path with introspection) | per OIDC backend |
//! | the `redirect_uri` Location | an OIDC backend |
//! | the mellon `/v3` Location and its protected `websso` and `auth` Locations | per SAML backend |
//! | the global `/v3/auth/OS-FEDERATION/websso/<protocol>` Location | per backend whose protocol id no other backend shares |
//!
//! Both render lists must be sorted by backend name, at least one non-empty. Values that
//! CobaltCore formats with Go's `%q` are quoted the same way ([`go_quote`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::oidc::OidcRender;
use super::saml::{SP_CERT, SP_KEY, SP_METADATA, SamlRender, idp_metadata_key};
use crate::federation::{MELLON_DIR, METADATA_DIR};
use crate::types::Keystone;

/// mod_auth_openidc's `OIDCRedirectURI`, under `/v3/OS-FEDERATION/` so no Keystone route
/// is shadowed.
pub(crate) const REDIRECT_URI_PATH: &str = "/v3/OS-FEDERATION/redirect_uri";

/// The header spellings to unset for WSGI environ keys `env_names`: of each `HTTP_`-named
/// key its suffix with underscores and with dashes (Apache and uWSGI map both to the same
/// key); keys without the prefix cannot come from a header. Deduplicated, sorted.
pub(crate) fn strip_headers<'a>(env_names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut headers: Vec<String> = env_names
        .into_iter()
        .filter_map(|env| env.strip_prefix("HTTP_").filter(|b| !b.is_empty()))
        .flat_map(|base| [base.to_owned(), base.replace('_', "-")])
        .collect();
    headers.sort();
    headers.dedup();
    headers
}

/// The field of the first `(field, value)` whose value holds a CR, LF or `"`: characters
/// that would end an Apache directive, or its quoting, and inject others.
pub(crate) fn first_injected<'a>(
    values: impl IntoIterator<Item = (String, &'a str)>,
) -> Option<String> {
    values
        .into_iter()
        .find(|(_, v)| v.contains(['\r', '\n', '"']))
        .map(|(field, _)| field)
}

/// `s` as Go's `%q` writes it: double-quoted, with `"` and `\` escaped and control
/// characters as escapes, so a value stays one Apache argument on one line.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Collects the lines of proxy.conf.
#[derive(Default)]
struct Lines(String);

impl Lines {
    fn line(&mut self, line: impl AsRef<str>) {
        self.0.push_str(line.as_ref());
        self.0.push('\n');
    }
}

/// Renders proxy.conf for `keystone` with the rendered backends (each sorted by name) and
/// the OIDC crypto passphrase (unused without an OIDC backend).
pub(crate) fn render(
    keystone: &Keystone,
    oidc: &[OidcRender],
    saml: &[SamlRender],
    passphrase: &str,
) -> String {
    let mut w = Lines::default();
    w.line("# Rendered by the keystone operator — do not edit; changes are overwritten.");
    if let Some(first) = oidc.first() {
        w.line(format!("OIDCCryptoPassphrase {}", go_quote(passphrase)));
        w.line(format!("OIDCMetadataDir {METADATA_DIR}"));
        w.line(format!("OIDCRedirectURI {REDIRECT_URI_PATH}"));
        w.line("OIDCClaimPrefix \"OIDC-\"");
        w.line(format!("OIDCSessionType {}", first.session_type));
        w.line(format!(
            "OIDCStateInputHeaders {}",
            first.state_input_headers
        ));
        if keystone.spec.gateway.is_some() {
            w.line("OIDCXForwardedHeaders X-Forwarded-Host X-Forwarded-Proto");
        }
        w.line("");
    }
    w.line("# Strip spoofable claim/attribute headers before authentication: the");
    w.line("# modules only scrub them on module-protected paths, and underscore");
    w.line("# spellings normalize to the same WSGI keys (validated by the federation");
    w.line("# spike). mellon attribute headers are stripped in both spellings too.");
    let mut headers: Vec<&String> = oidc
        .iter()
        .flat_map(|r| &r.strip_headers)
        .chain(saml.iter().flat_map(|r| &r.strip_headers))
        .collect();
    headers.sort();
    headers.dedup();
    for header in headers {
        w.line(format!("RequestHeader unset {} early", go_quote(header)));
    }
    w.line("");
    w.line("ProxyPreserveHost On");
    for r in saml {
        w.line(format!("ProxyPass {} !", go_quote(&r.endpoint_path)));
    }
    w.line("ProxyPass \"/\" \"http://127.0.0.1:5000/\"");
    w.line("ProxyPassReverse \"/\" \"http://127.0.0.1:5000/\"");
    for (r, i) in oidc
        .iter()
        .filter_map(|r| Some((r, r.introspection.as_ref()?)))
    {
        w.line("");
        w.line(format!(
            "# OAuth2 resource server: bearer-token introspection for {}",
            r.idp_name
        ));
        w.line(format!(
            "OIDCOAuthIntrospectionEndpoint {}",
            go_quote(&i.endpoint)
        ));
        w.line(format!("OIDCOAuthClientID {}", go_quote(&i.client_id)));
        w.line(format!(
            "OIDCOAuthClientSecret {}",
            go_quote(&i.client_secret)
        ));
        if !i.tls_verify {
            w.line("OIDCOAuthSSLValidateServer Off");
        }
    }
    for r in oidc {
        let (idp, protocol) = (&r.idp_name, &r.protocol_id);
        w.line("");
        w.line(format!(
            "<Location \"/v3/auth/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}/websso\">"
        ));
        w.line("    AuthType openid-connect");
        w.line("    Require valid-user");
        w.line(format!("    OIDCDiscoverURL {}", r.discover_url));
        w.line("</Location>");
        w.line(format!(
            "<Location \"/v3/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}/auth\">"
        ));
        if r.introspection.is_some() {
            // Accepts the session cookie and IdP-issued bearer tokens on the CLI path.
            w.line("    AuthType auth-openidc");
            w.line("    Require valid-user");
        } else {
            w.line("    AuthType openid-connect");
            w.line("    Require valid-user");
            w.line(format!("    OIDCDiscoverURL {}", r.discover_url));
        }
        w.line("</Location>");
    }
    if !oidc.is_empty() {
        w.line("");
        w.line(format!("<Location {}>", go_quote(REDIRECT_URI_PATH)));
        w.line("    AuthType openid-connect");
        w.line("    Require valid-user");
        w.line("</Location>");
    }
    for r in saml {
        mellon(&mut w, r);
    }
    // The global websso path pins a provider only when no other backend shares its
    // protocol id.
    let mut protocols: BTreeMap<&str, usize> = BTreeMap::new();
    let ids = oidc.iter().map(|r| &r.protocol_id);
    for id in ids.chain(saml.iter().map(|r| &r.protocol_id)) {
        *protocols.entry(id).or_default() += 1;
    }
    let unique = |id: &str| protocols.get(id) == Some(&1);
    for r in oidc.iter().filter(|r| unique(&r.protocol_id)) {
        w.line("");
        w.line(format!(
            "<Location \"/v3/auth/OS-FEDERATION/websso/{}\">",
            r.protocol_id
        ));
        w.line("    AuthType openid-connect");
        w.line("    Require valid-user");
        w.line(format!("    OIDCDiscoverURL {}", r.discover_url));
        w.line("</Location>");
    }
    for r in saml.iter().filter(|r| unique(&r.protocol_id)) {
        w.line("");
        let location = format!("/v3/auth/OS-FEDERATION/websso/{}", r.protocol_id);
        mellon_protected(&mut w, &location, r);
    }
    w.0
}

/// One SAML backend's mod_auth_mellon configuration: the `/v3` Location enabling mellon
/// in info mode with the mounted SP and IdP files, then its protected websso and auth
/// Locations.
fn mellon(w: &mut Lines, r: &SamlRender) {
    w.line("");
    w.line(format!(
        "# mod_auth_mellon SP for identity provider {} (protocol {}).",
        r.idp_name, r.protocol_id
    ));
    w.line("<Location \"/v3\">");
    w.line("    MellonEnable \"info\"");
    w.line("    MellonMergeEnvVars On");
    w.line(format!("    MellonSPPrivateKeyFile {MELLON_DIR}/{SP_KEY}"));
    w.line(format!("    MellonSPCertFile {MELLON_DIR}/{SP_CERT}"));
    w.line(format!(
        "    MellonSPMetadataFile {MELLON_DIR}/{SP_METADATA}"
    ));
    w.line(format!(
        "    MellonIdPMetadataFile {MELLON_DIR}/{}",
        idp_metadata_key(&r.backend_name)
    ));
    w.line(format!("    MellonEndpointPath {}", r.endpoint_path));
    w.line("    MellonSubjectConfirmationDataAddressCheck Off");
    w.line("</Location>");
    let (idp, protocol) = (&r.idp_name, &r.protocol_id);
    for location in [
        format!("/v3/auth/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}/websso"),
        format!("/v3/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}/auth"),
    ] {
        mellon_protected(w, &location, r);
    }
}

/// A mellon-protected Location: auth mode, a valid user, and each forwarded attribute set
/// as a request header after the early unsets (which doubles as spoofing defence).
fn mellon_protected(w: &mut Lines, location: &str, r: &SamlRender) {
    w.line(format!("<Location {}>", go_quote(location)));
    w.line("    AuthType Mellon");
    w.line("    MellonEnable auth");
    w.line("    Require valid-user");
    for env in &r.forward_envs {
        w.line(format!(
            "    RequestHeader set {} \"expr=%{{reqenv:{env}}}\"",
            go_quote(&env.replace('_', "-"))
        ));
    }
    w.line("</Location>");
}

#[cfg(test)]
#[path = "proxy_conf_tests.rs"]
mod tests;
