//! Validation of what the Keystone writes into its INI files verbatim (facts §1.6):
//! `spec.extraConfig` against the option catalog of the image's release, the keys a typed
//! field owns, and the text of every section, key and value the spec hands the renderer.
//!
//! - **INI text.** Section and option names must be ones `keystone.conf` can hold, and no
//!   value may carry a line break: otherwise one entry would smuggle further sections or
//!   options past every check here (an `[federation] remote_id_attribute` whose value goes
//!   on with a line `trusted_dashboard = …`). Checked on every write, for extraConfig,
//!   plugins and middleware. Values are never quoted back: they may be secrets.
//! - **Rejected keys** (`owned_keys::REJECTED_KEYS`) are refused in extraConfig.
//! - **The catalog.** With a catalog for the release `image.tag` names, an unknown section
//!   or option is an error and a deprecated one a warning; a plugin's section (declared in
//!   `spec.plugins`) and the operator-owned keys (reported by the Config step instead) are
//!   not looked up. Without a release or a catalog for it there is one warning. On update
//!   the catalog is consulted again only when extraConfig, the image tag or the plugin
//!   sections changed, so a regenerated catalog never refuses an unrelated edit.
//!
//! Sections are compared as oslo.config reads them ([`section_key`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use super::catalog::{self, Lookup, section_key};
use super::owned_keys::{is_owned, rejected_by};
use super::release;
use crate::types::KeystoneSpec;

/// What an error shows for a value it refuses.
const REDACTED: &str = "<value redacted>";

const SECTION_RULE: &str = "must be a section name an INI file can hold: not empty, and \
    no line break, '[', ']', or leading or trailing space";
const KEY_RULE: &str = "must be an option name an INI file can hold: not empty, no line \
    break, '=' or ':', no leading or trailing space, and not starting with '#', ';' or '['";
const VALUE_RULE: &str = "must not contain a newline or carriage return: the value is \
    rendered verbatim, where a line break starts a new option";

/// Checks the INI text and rejected keys of `spec`, and its extraConfig against the
/// catalog unless this is an update (`old`) that left the catalog's inputs as they were.
pub(super) fn check(
    spec: &KeystoneSpec,
    old: Option<&KeystoneSpec>,
    errors: &mut FieldErrors,
    warnings: &mut Vec<String>,
) {
    check_ini_text(spec, errors);
    for (section, keys) in &spec.extra_config {
        for key in keys.keys() {
            if let Some(owner) = rejected_by(section, key) {
                errors.forbidden(
                    &format!("spec.extraConfig[{section}][{key}]"),
                    &format!(
                        "is set by {owner}; extraConfig wins the merge and would silently \
                         replace it"
                    ),
                );
            }
        }
    }
    if old.is_none_or(|old| catalog_inputs_changed(old, spec)) {
        check_catalog(spec, errors, warnings);
    }
}

fn section_ok(name: &str) -> bool {
    !name.is_empty() && name.trim() == name && !name.contains(['\n', '\r', '[', ']'])
}

fn key_ok(name: &str) -> bool {
    !name.is_empty()
        && name.trim() == name
        && !name.contains(['\n', '\r', '=', ':'])
        && !name.starts_with(['#', ';', '['])
}

fn value_ok(value: &str) -> bool {
    !value.contains(['\n', '\r'])
}

/// Checks one section's options at `path` (`spec.extraConfig[x]`).
fn check_options(path: &str, options: &BTreeMap<String, String>, errors: &mut FieldErrors) {
    for (key, value) in options {
        let field = format!("{path}[{key}]");
        if !key_ok(key) {
            errors.invalid(&field, &json!(key), KEY_RULE);
        }
        if !value_ok(value) {
            errors.invalid(&field, &json!(REDACTED), VALUE_RULE);
        }
    }
}

fn check_ini_text(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    for (section, options) in &spec.extra_config {
        let path = format!("spec.extraConfig[{section}]");
        if !section_ok(section) {
            errors.invalid(&path, &json!(section), SECTION_RULE);
        }
        check_options(&path, options, errors);
    }
    for (i, plugin) in spec.plugins.iter().enumerate() {
        if !section_ok(&plugin.config_section) {
            let field = format!("spec.plugins[{i}].configSection");
            errors.invalid(&field, &json!(plugin.config_section), SECTION_RULE);
        }
        check_options(&format!("spec.plugins[{i}].config"), &plugin.config, errors);
    }
    for (i, filter) in spec.middleware.iter().enumerate() {
        for (field, text) in [
            ("name", &filter.name),
            ("filterFactory", &filter.filter_factory),
        ] {
            if !value_ok(text) {
                let field = format!("spec.middleware[{i}].{field}");
                errors.invalid(&field, &json!(text), VALUE_RULE);
            }
        }
        check_options(
            &format!("spec.middleware[{i}].config"),
            &filter.config,
            errors,
        );
    }
}

/// The plugins' sections, as oslo.config reads them.
fn plugin_sections(spec: &KeystoneSpec) -> BTreeSet<String> {
    spec.plugins
        .iter()
        .map(|p| section_key(&p.config_section).into_owned())
        .collect()
}

/// Whether anything the catalog check reads differs between `old` and `new`.
fn catalog_inputs_changed(old: &KeystoneSpec, new: &KeystoneSpec) -> bool {
    old.extra_config != new.extra_config
        || old.image.tag != new.image.tag
        || plugin_sections(old) != plugin_sections(new)
}

fn check_catalog(spec: &KeystoneSpec, errors: &mut FieldErrors, warnings: &mut Vec<String>) {
    if spec.extra_config.is_empty() {
        return;
    }
    let unchecked = "spec.extraConfig was not checked against an option catalog";
    let Some(release) = release::parse(&spec.image.tag) else {
        warnings.push(format!(
            "{unchecked}: spec.image does not name an OpenStack release (a tag YYYY.N)"
        ));
        return;
    };
    let catalog = match catalog::for_release(release) {
        Ok(Some(catalog)) => catalog,
        Ok(None) => {
            warnings.push(format!(
                "{unchecked}: none is embedded for release {release}"
            ));
            return;
        }
        Err(e) => {
            errors.forbidden("spec.extraConfig", &format!("cannot be checked: {e}"));
            return;
        }
    };
    let release = catalog.release();
    let plugins = plugin_sections(spec);
    for (section, keys) in &spec.extra_config {
        if plugins.contains(section_key(section).as_ref()) {
            continue;
        }
        for key in keys.keys() {
            if is_owned(section, key) || rejected_by(section, key).is_some() {
                continue;
            }
            let field = format!("spec.extraConfig[{section}][{key}]");
            match catalog.lookup(section, key) {
                Lookup::Known => {}
                Lookup::DeprecatedForRemoval => warnings.push(format!(
                    "{field}: deprecated for removal in keystone {release}"
                )),
                Lookup::DeprecatedName(current) => warnings.push(format!(
                    "{field}: a deprecated name in keystone {release}, read as {}",
                    current.join(" and ")
                )),
                Lookup::UnknownOption => {
                    errors.invalid(
                        &field,
                        &json!(key),
                        &format!("no such option in the keystone {release} option catalog"),
                    );
                }
                Lookup::UnknownSection => {
                    errors.invalid(
                        &field,
                        &json!(key),
                        &format!(
                            "no such section in the keystone {release} option catalog (a \
                             plugin's section must be declared in spec.plugins)"
                        ),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "extra_config_tests.rs"]
mod tests;
