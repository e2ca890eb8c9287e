//! A SAML backend's IdP metadata (CobaltCore's `resolveSAMLIdPMetadata`) and the entityID
//! of its single EntityDescriptor ([`entity_id`]).
//!
//! | Source (`spec.saml.idpMetadata`) | Document | Fault |
//! |---|---|---|
//! | `inline` | the text | — |
//! | `secretRef` | the Secret's `idp-metadata.xml` | missing Secret or key |
//! | `url` | the GET ([`metadata::fetch`]), whose entityID must already match | `fetching <url> failed` (also when it does not parse), `document entityID does not match spec idpEntityID "<id>"`, outside the declared egress |
//! | none | — | `spec.saml.idpMetadata has no source` |
//!
//! Then any document must parse (`parsing IdP metadata for backend <name>: <why>`) and
//! carry `idpEntityID` (`IdP metadata entityID does not match spec.saml.idpEntityID
//! "<id>"`). A `url` fault falls back to the newest federation Secret's
//! `<backend>.idp-metadata.xml` when its entityID is the spec's, with a
//! `FederationMetadataStale` note.
//!
//! DECISION: no XML crate: [`entity_id`] is a small scanner that reads the root start tag
//! and checks that the document is one balanced element tree (start and end tags match,
//! comments, CDATA and processing instructions skipped, nothing but those and whitespace
//! around the root). A `<!DOCTYPE` is refused: SAML metadata carries none, and it is how
//! entity-expansion attacks reach the sidecar's XML parser.

use super::metadata::{self, Fetch, Obtained};
use super::saml::{Fault, idp_metadata_key, read_secret};
use crate::error::Error;
use crate::identity_backend::{IdentityBackend, SamlBackend};
use crate::pass::Pass;

/// The data key of the IdP metadata in `secretRef`'s Secret.
const SECRET_KEY: &str = "idp-metadata.xml";

/// The verified IdP metadata and, for a last-known-good copy, the stale note.
pub(crate) fn resolve(
    pass: &Pass<'_>,
    backend: &IdentityBackend,
    s: &SamlBackend,
) -> Result<Result<Obtained, Fault>, Error> {
    let m = &s.idp_metadata;
    let obtained = if !m.inline.is_empty() {
        Obtained::fresh(m.inline.clone().into_bytes())
    } else if let Some(reference) = &m.secret_ref {
        match read_secret(pass, backend, &reference.name, SECRET_KEY)? {
            Ok(value) => Obtained::fresh(value.into_bytes()),
            Err(fault) => return Ok(Err(fault)),
        }
    } else if !m.url.is_empty() {
        match fetched(pass, backend, s)? {
            Ok(found) => found,
            Err(fault) => return Ok(Err(fault)),
        }
    } else {
        return Ok(Err(Fault::NoMetadataSource));
    };
    Ok(match entity_id(&obtained.document) {
        Err(why) => Err(Fault::UnparsableMetadata {
            backend: backend.name().to_owned(),
            why,
        }),
        Ok(id) if id != s.idp_entity_id => Err(Fault::EntityIdMismatch {
            entity_id: s.idp_entity_id.clone(),
        }),
        Ok(_) => Ok(obtained),
    })
}

/// The document GET from `idpMetadata.url`, or the last-known-good one.
fn fetched(
    pass: &Pass<'_>,
    backend: &IdentityBackend,
    s: &SamlBackend,
) -> Result<Result<Obtained, Fault>, Error> {
    let url = s.idp_metadata.url.clone();
    let key = idp_metadata_key(backend.name());
    let stamp = metadata::stamp(backend);
    let valid = |doc: &[u8]| entity_id(doc).is_ok_and(|id| id == s.idp_entity_id);
    if let Some(doc) = metadata::cached(pass, backend, &key)?.filter(|d| valid(d)) {
        return Ok(Ok(Obtained::fetched(doc, stamp)));
    }
    let fault = match metadata::fetch(pass.probe, &url) {
        Ok(body) => match entity_id(&body) {
            Ok(id) if id == s.idp_entity_id => return Ok(Ok(Obtained::fetched(body, stamp))),
            Ok(_) => Fault::DocumentEntityIdMismatch {
                entity_id: s.idp_entity_id.clone(),
            },
            Err(why) => {
                metadata::failed(&url, &format!("parsing the response: {why}"));
                Fault::MetadataUnavailable { url }
            }
        },
        Err(Fetch::Refused) => Fault::OutsideEgress { url },
        Err(Fetch::Failed) => Fault::MetadataUnavailable { url },
    };
    let note = || {
        format!(
            "Identity backend {}: IdP metadata unavailable ({fault}); reusing the \
             last-known-good document so federation stays up",
            backend.name()
        )
    };
    Ok(metadata::stand_in(pass, &key, valid, note)?.ok_or(fault))
}

/// The `entityID` of the document's root element, which must be one `EntityDescriptor`
/// (any namespace prefix) in a balanced element tree; why not, as text.
pub(crate) fn entity_id(document: &[u8]) -> Result<String, String> {
    let why = |s: &str| format!("parsing SAML metadata XML: {s}");
    let text = std::str::from_utf8(document).map_err(|_| why("the document is not UTF-8"))?;
    let mut rest = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut open: Vec<&str> = Vec::new();
    let mut root: Option<(&str, Option<String>)> = None;
    loop {
        let Some(at) = rest.find('<') else {
            let text = !rest.trim().is_empty();
            match (root.is_some(), open.is_empty()) {
                (true, true) if text => return Err(why("content after the root element")),
                (true, true) => break,
                (false, _) if text => return Err(why("text outside the root element")),
                (false, _) => return Err(why("no root element")),
                (true, false) => return Err(why("unexpected end of the document")),
            }
        };
        if (root.is_none() || open.is_empty()) && !rest[..at].trim().is_empty() {
            return Err(why("text outside the root element"));
        }
        rest = &rest[at..];
        let skip = |rest: &str, end: &str| -> Result<usize, String> {
            rest.find(end)
                .map(|i| i + end.len())
                .ok_or_else(|| why("unexpected end of the document"))
        };
        if rest.starts_with("<!--") {
            rest = &rest[skip(rest, "-->")?..];
        } else if rest.starts_with("<?") {
            rest = &rest[skip(rest, "?>")?..];
        } else if rest.starts_with("<![CDATA[") && !open.is_empty() {
            rest = &rest[skip(rest, "]]>")?..];
        } else if rest.starts_with("<!") {
            return Err(why("a DOCTYPE or declaration is not allowed"));
        } else if let Some(after) = rest.strip_prefix("</") {
            let end = after
                .find('>')
                .ok_or_else(|| why("unexpected end of the document"))?;
            let name = after[..end].trim_end();
            if open.pop() != Some(name) {
                return Err(why(&format!("unexpected end tag </{name}>")));
            }
            rest = &after[end + 1..];
        } else {
            if root.is_some() && open.is_empty() {
                return Err(why("more than one root element"));
            }
            let (name, entity, self_closing, after) = start_tag(&rest[1..]).map_err(|e| why(&e))?;
            if root.is_none() {
                root = Some((name, entity));
            }
            if !self_closing {
                open.push(name);
            }
            rest = after;
        }
    }
    let (name, entity) = root.ok_or_else(|| why("no root element"))?;
    let local = name.rsplit_once(':').map_or(name, |(_, l)| l);
    if local != "EntityDescriptor" {
        return Err(format!("expected a single EntityDescriptor, got {local:?}"));
    }
    entity
        .filter(|e| !e.is_empty())
        .ok_or_else(|| "EntityDescriptor carries no entityID attribute".to_owned())
}

/// A start tag after its `<`: the element's name, its `entityID` attribute (any prefix),
/// whether it closes itself, and what follows the tag.
fn start_tag(tag: &str) -> Result<(&str, Option<String>, bool, &str), String> {
    let is_name = |c: char| !c.is_whitespace() && !"/>=<\"'".contains(c);
    let name_end = tag.find(|c| !is_name(c)).unwrap_or(tag.len());
    let name = &tag[..name_end];
    if name.is_empty() {
        return Err("a tag without a name".into());
    }
    let mut rest = &tag[name_end..];
    let mut entity = None;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("/>") {
            return Ok((name, entity, true, after));
        }
        if let Some(after) = rest.strip_prefix('>') {
            return Ok((name, entity, false, after));
        }
        let attr_end = rest.find(|c| !is_name(c)).unwrap_or(rest.len());
        let attribute = &rest[..attr_end];
        let value_part = rest[attr_end..].trim_start();
        let quoted = value_part.strip_prefix('=').map(str::trim_start);
        let (Some(quoted), false) = (quoted, attribute.is_empty()) else {
            return Err(format!("a malformed attribute in <{name}>"));
        };
        let quote = quoted.chars().next().filter(|q| *q == '"' || *q == '\'');
        let Some(quote) = quote else {
            return Err(format!("an unquoted attribute value in <{name}>"));
        };
        let body = &quoted[1..];
        let close = body
            .find(quote)
            .ok_or_else(|| "unexpected end of the document".to_owned())?;
        let value = &body[..close];
        if value.contains('<') {
            return Err(format!("a '<' in an attribute value of <{name}>"));
        }
        let local = attribute.rsplit_once(':').map_or(attribute, |(_, l)| l);
        if local == "entityID" && entity.is_none() {
            entity = Some(unescape(value)?);
        }
        rest = &body[close + 1..];
    }
}

/// An attribute value with its character and predefined entity references replaced.
fn unescape(value: &str) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let end = rest[at..]
            .find(';')
            .ok_or_else(|| "an unterminated entity reference".to_owned())?;
        let entity = &rest[at + 1..at + end];
        let c = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .map(|h| u32::from_str_radix(h, 16))
                .or_else(|| entity.strip_prefix('#').map(str::parse))
                .and_then(Result::ok)
                .and_then(char::from_u32),
        };
        out.push(c.ok_or_else(|| format!("an unknown entity reference &{entity};"))?);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
#[path = "idp_metadata_tests.rs"]
mod tests;
