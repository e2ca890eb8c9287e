//! The keystone option catalogs embedded in the plugin: per release, every option
//! oslo.config accepts in `keystone.conf`, generated from keystone itself
//! (`catalogs/generate.sh`; provenance in `catalogs/README.md`).
//!
//! A catalog is JSON: `sections` maps a section, spelled as oslo.config reads it
//! ([`section_key`]), to its `options` (name → deprecated for removal) and its
//! `deprecated_names` (an old name oslo.config still reads there → the options it stands
//! for, `[section] name`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;

use super::release::Release;

/// The embedded catalogs: release and JSON.
const CATALOGS: &[(&str, &str)] = &[("2022.2", include_str!("../../catalogs/2022.2.json"))];

/// A catalog that does not read (a build defect the embedded-catalog test catches).
#[derive(Debug, thiserror::Error)]
#[error("the keystone {release} option catalog cannot be read: {source}")]
pub(crate) struct CatalogError {
    release: String,
    source: serde_json::Error,
}

/// One release's options.
#[derive(Debug, Deserialize)]
pub(crate) struct Catalog {
    release: String,
    sections: BTreeMap<String, Section>,
}

#[derive(Debug, Deserialize)]
struct Section {
    #[serde(default)]
    options: BTreeMap<String, bool>,
    #[serde(default)]
    deprecated_names: BTreeMap<String, Vec<String>>,
}

/// What a catalog says of one `[section] key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lookup<'a> {
    /// An option.
    Known,
    /// An option deprecated for removal.
    DeprecatedForRemoval,
    /// An old name of the options given (`[section] name`).
    DeprecatedName(&'a [String]),
    /// The section has no such option.
    UnknownOption,
    /// The catalog has no such section.
    UnknownSection,
}

/// `section` as oslo.config reads it: lowercased, except `DEFAULT`.
pub(crate) fn section_key(section: &str) -> Cow<'_, str> {
    if section == "DEFAULT" || !section.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Borrowed(section)
    } else {
        Cow::Owned(section.to_lowercase())
    }
}

/// The catalog embedded for `release`, if any.
pub(crate) fn for_release(release: Release) -> Result<Option<Catalog>, CatalogError> {
    let name = release.to_string();
    CATALOGS
        .iter()
        .find(|(r, _)| *r == name)
        .map(|(r, json)| {
            serde_json::from_str(json).map_err(|source| CatalogError {
                release: (*r).to_owned(),
                source,
            })
        })
        .transpose()
}

impl Catalog {
    /// The release it describes.
    pub(crate) fn release(&self) -> &str {
        &self.release
    }

    /// What the catalog says of `key` in `section` (spelled as the user wrote it).
    pub(crate) fn lookup(&self, section: &str, key: &str) -> Lookup<'_> {
        let Some(found) = self.sections.get(section_key(section).as_ref()) else {
            return Lookup::UnknownSection;
        };
        match found.options.get(key) {
            Some(false) => Lookup::Known,
            Some(true) => Lookup::DeprecatedForRemoval,
            None => match found.deprecated_names.get(key) {
                Some(replacements) => Lookup::DeprecatedName(replacements),
                None => Lookup::UnknownOption,
            },
        }
    }
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
