//! `api-paste.ini`: the PasteDeploy pipeline of keystone's v3 API, with the Keystone's
//! middleware placed before or after keystone's own filters (facts §2.7).
//!
//! The pipeline `public_api` runs the `before` middleware, then `cors sizelimit
//! http_proxy_to_wsgi url_normalize request_id`, then the `after` middleware, then the
//! application `admin_service`; `[composite:main]` maps `/v3` to it. Each middleware gets
//! a `[filter:<name>]` section with its factory and config (a config key
//! `paste.filter_factory` is ignored: the factory field wins). Sections and keys render
//! sorted, as in keystone.conf.

use std::collections::BTreeMap;

use wasm_operator_sdk::blocks::config::ini::lift;
use wasm_operator_sdk::blocks::config::{Sections, render_ini};
use wasm_operator_sdk::blocks::types::{MiddlewareSpec, PipelinePosition};

use super::{API_PASTE_INI, ConfigError, lines};

/// The pipeline's name.
const PIPELINE: &str = "public_api";
/// The application at the end of the pipeline.
const APP: &str = "admin_service";
/// Keystone's own filters, in pipeline order, with their entry points.
const BASE_FILTERS: [(&str, &str); 5] = [
    ("cors", "egg:oslo.middleware#cors"),
    ("sizelimit", "egg:oslo.middleware#sizelimit"),
    (
        "http_proxy_to_wsgi",
        "egg:oslo.middleware#http_proxy_to_wsgi",
    ),
    ("url_normalize", "egg:keystone#url_normalize"),
    ("request_id", "egg:oslo.middleware#request_id"),
];
/// The config key a middleware's `filterFactory` sets.
const FILTER_FACTORY: &str = "paste.filter_factory";

/// Why a middleware cannot go into the pipeline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiPasteError {
    /// A middleware without a name.
    #[error("spec.middleware[{index}]: the middleware's name must not be empty")]
    EmptyName { index: usize },
    /// A middleware without a filter factory.
    #[error("middleware {name:?}: filterFactory must not be empty")]
    EmptyFactory { name: String },
    /// Two middleware of the same name.
    #[error("middleware {name:?}: the name is taken by an earlier middleware")]
    DuplicateName { name: String },
    /// A middleware named like one of keystone's own filters or its application.
    #[error("middleware {name:?}: the name is taken by keystone's own pipeline")]
    ReservedName { name: String },
    /// A name the space-separated pipeline would read as several.
    #[error("middleware {name:?}: the name must be one word (no whitespace)")]
    NotOneWord { name: String },
}

/// The `api-paste.ini` of `middleware`.
pub fn render(middleware: &[MiddlewareSpec]) -> Result<String, ConfigError> {
    let mut sections = Sections::new();
    let mut before = Vec::new();
    let mut after = Vec::new();
    for (index, mw) in middleware.iter().enumerate() {
        check(index, mw, &sections)?;
        match mw.position {
            PipelinePosition::Before => before.push(mw.name.as_str()),
            PipelinePosition::After => after.push(mw.name.as_str()),
        }
        let mut filter = mw.config.clone();
        filter.insert(FILTER_FACTORY.to_owned(), mw.filter_factory.clone());
        sections.insert(format!("filter:{}", mw.name), filter);
    }

    let pipeline: Vec<&str> = before
        .into_iter()
        .chain(BASE_FILTERS.iter().map(|(name, _)| *name))
        .chain(after)
        .chain([APP])
        .collect();
    sections.insert(
        format!("pipeline:{PIPELINE}"),
        entries(&[("pipeline", &pipeline.join(" "))]),
    );
    sections.insert(
        format!("app:{APP}"),
        entries(&[("use", "egg:keystone#service_v3")]),
    );
    for (name, factory) in BASE_FILTERS {
        let mut filter = entries(&[("use", factory)]);
        if name == "cors" {
            filter.insert("oslo_config_project".into(), "keystone".into());
        }
        sections.insert(format!("filter:{name}"), filter);
    }
    sections.insert(
        "composite:main".into(),
        entries(&[("use", "egg:Paste#urlmap"), ("/v3", PIPELINE)]),
    );

    lines::check(API_PASTE_INI, &lift(&sections))?;
    Ok(render_ini(&sections))
}

/// Checks middleware `index` against the ones before it (whose filter sections
/// `sections` holds).
fn check(index: usize, mw: &MiddlewareSpec, sections: &Sections) -> Result<(), ApiPasteError> {
    let name = || mw.name.clone();
    if mw.name.is_empty() {
        return Err(ApiPasteError::EmptyName { index });
    }
    if mw.name.chars().any(char::is_whitespace) {
        return Err(ApiPasteError::NotOneWord { name: name() });
    }
    if mw.filter_factory.is_empty() {
        return Err(ApiPasteError::EmptyFactory { name: name() });
    }
    if mw.name == APP || BASE_FILTERS.iter().any(|(base, _)| *base == mw.name) {
        return Err(ApiPasteError::ReservedName { name: name() });
    }
    if sections.contains_key(&format!("filter:{}", mw.name)) {
        return Err(ApiPasteError::DuplicateName { name: name() });
    }
    Ok(())
}

fn entries(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests;
