//! The entityID of inline SAML metadata: the `entityID` attribute of the document's root
//! element, which must be one `EntityDescriptor` (an `EntitiesDescriptor` aggregate names
//! several providers and is refused, so a login flow is never bound to a foreign one).
//!
//! DECISION: only the prolog (declaration, processing instructions, comments, doctype)
//! and the root's start tag are read — what the check needs, without an XML library in
//! the plugin. A document broken past its root's start tag is refused by the Keystone
//! side when it renders the metadata.

use std::fmt;

/// Why no entityID was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum MetadataError {
    /// The document does not read as XML up to its root's start tag.
    Parse(&'static str),
    /// The root element is not an `EntityDescriptor` (its local name).
    NotEntityDescriptor(String),
    /// The `EntityDescriptor` has no (or an empty) `entityID`.
    NoEntityId,
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Parse(cause) => write!(f, "parsing SAML metadata XML: {cause}"),
            Self::NotEntityDescriptor(name) => {
                write!(f, "expected a single EntityDescriptor, got {name:?}")
            }
            Self::NoEntityId => f.write_str("EntityDescriptor carries no entityID attribute"),
        }
    }
}

/// `rest` past the first `end`, or the parse error `unterminated`.
fn skip_past<'a>(
    rest: &'a str,
    end: &str,
    unterminated: &'static str,
) -> Result<&'a str, MetadataError> {
    rest.find(end)
        .map(|at| &rest[at + end.len()..])
        .ok_or(MetadataError::Parse(unterminated))
}

/// The document from its root's `<` on.
fn past_prolog(document: &str) -> Result<&str, MetadataError> {
    let mut rest = document.trim_start_matches('\u{feff}').trim_start();
    loop {
        let past = if rest.starts_with("<?") {
            skip_past(rest, "?>", "unterminated processing instruction")?
        } else if rest.starts_with("<!--") {
            skip_past(rest, "-->", "unterminated comment")?
        } else if rest.starts_with("<!") {
            // A doctype with an internal subset ends at `]>`.
            let subset = rest
                .find('[')
                .is_some_and(|at| rest.find('>').is_some_and(|gt| at < gt));
            skip_past(
                rest,
                if subset { "]>" } else { ">" },
                "unterminated doctype",
            )?
        } else if rest.starts_with('<') {
            return Ok(rest);
        } else if rest.is_empty() {
            return Err(MetadataError::Parse("no root element"));
        } else {
            return Err(MetadataError::Parse("text before the root element"));
        };
        rest = past.trim_start();
    }
}

/// `value` with XML's entity and character references replaced.
fn unescape(value: &str) -> Result<String, MetadataError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let end = rest[at..]
            .find(';')
            .ok_or(MetadataError::Parse("unterminated entity reference"))?;
        let entity = &rest[at + 1..at + end];
        let c = match entity {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => entity
                .strip_prefix("#x")
                .map(|hex| u32::from_str_radix(hex, 16))
                .or_else(|| entity.strip_prefix('#').map(str::parse::<u32>))
                .and_then(Result::ok)
                .and_then(char::from_u32)
                .ok_or(MetadataError::Parse("invalid entity reference"))?,
        };
        out.push(c);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The local part of a qualified name (`md:EntityDescriptor` → `EntityDescriptor`).
fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

/// The entityID of the metadata `document`.
pub(super) fn entity_id(document: &str) -> Result<String, MetadataError> {
    let root = &past_prolog(document)?[1..];
    let name_end = root
        .find(|c: char| c.is_whitespace() || c == '/' || c == '>')
        .ok_or(MetadataError::Parse("unterminated start tag"))?;
    let name = &root[..name_end];
    if name.is_empty() {
        return Err(MetadataError::Parse("an element without a name"));
    }
    let mut rest = &root[name_end..];
    let mut entity_id = None;
    loop {
        rest = rest.trim_start();
        if rest.starts_with('>') || rest.starts_with("/>") {
            break;
        }
        let eq = rest
            .find('=')
            .ok_or(MetadataError::Parse("unterminated start tag"))?;
        let attribute = rest[..eq].trim_end();
        if attribute.is_empty() || attribute.contains(|c: char| c.is_whitespace() || c == '>') {
            return Err(MetadataError::Parse("an attribute without a value"));
        }
        rest = rest[eq + 1..].trim_start();
        let quote = rest
            .chars()
            .next()
            .filter(|q| *q == '"' || *q == '\'')
            .ok_or(MetadataError::Parse("an unquoted attribute value"))?;
        let end = rest[1..]
            .find(quote)
            .ok_or(MetadataError::Parse("unterminated attribute value"))?;
        let value = &rest[1..1 + end];
        if local(attribute) == "entityID" && entity_id.is_none() {
            entity_id = Some(unescape(value)?);
        }
        rest = &rest[1 + end + 1..];
    }
    let local_name = local(name);
    if local_name != "EntityDescriptor" {
        return Err(MetadataError::NotEntityDescriptor(local_name.to_owned()));
    }
    entity_id
        .filter(|id| !id.is_empty())
        .ok_or(MetadataError::NoEntityId)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entity_id_is_the_root_entity_descriptor_s_attribute() {
        let prolog = "\u{feff}<?xml version=\"1.0\"?>\n<!-- exported -->\n\
                      <!DOCTYPE md [<!ENTITY x \"y\">]>\n";
        // (document, entity id or error)
        let table: &[(String, Result<&str, MetadataError>)] = &[
            (
                format!(
                    "{prolog}<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" entityID=\"https://idp.example.com/saml?a=1&amp;b=2\"><md:IDPSSODescriptor/></md:EntityDescriptor>"
                ),
                Ok("https://idp.example.com/saml?a=1&b=2"),
            ),
            (
                "<EntityDescriptor entityID='urn:idp'/>".into(),
                Ok("urn:idp"),
            ),
            (
                "<EntitiesDescriptor><EntityDescriptor entityID=\"a\"/></EntitiesDescriptor>"
                    .into(),
                Err(MetadataError::NotEntityDescriptor(
                    "EntitiesDescriptor".into(),
                )),
            ),
            (
                "<EntityDescriptor ID=\"x\">".into(),
                Err(MetadataError::NoEntityId),
            ),
            (
                "<EntityDescriptor entityID=\"\">".into(),
                Err(MetadataError::NoEntityId),
            ),
            ("".into(), Err(MetadataError::Parse("no root element"))),
            (
                "entityID".into(),
                Err(MetadataError::Parse("text before the root element")),
            ),
            (
                "<!-- open".into(),
                Err(MetadataError::Parse("unterminated comment")),
            ),
            (
                "<EntityDescriptor entityID=\"a".into(),
                Err(MetadataError::Parse("unterminated attribute value")),
            ),
            (
                "<EntityDescriptor entityID=a>".into(),
                Err(MetadataError::Parse("an unquoted attribute value")),
            ),
            (
                "<EntityDescriptor entityID=\"&bogus;\">".into(),
                Err(MetadataError::Parse("invalid entity reference")),
            ),
        ];
        for (document, expected) in table {
            assert_eq!(
                entity_id(document).as_deref().map_err(Clone::clone),
                expected.clone(),
                "{document}"
            );
        }
    }

    #[test]
    fn errors_are_worded_as_cobaltcore_words_them() {
        assert_eq!(
            MetadataError::NotEntityDescriptor("EntitiesDescriptor".into()).to_string(),
            "expected a single EntityDescriptor, got \"EntitiesDescriptor\""
        );
        assert_eq!(
            MetadataError::NoEntityId.to_string(),
            "EntityDescriptor carries no entityID attribute"
        );
        assert_eq!(
            MetadataError::Parse("no root element").to_string(),
            "parsing SAML metadata XML: no root element"
        );
    }
}
