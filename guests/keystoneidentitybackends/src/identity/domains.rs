//! Domains: looked up by name, created, patched (description and enabled only), deleted.
//!
//! | Call | Request | Answer |
//! |---|---|---|
//! | [`Client::domain_by_name`] | `GET /domains?name=<name>` | the first listed, `None` for an empty list |
//! | [`Client::create_domain`] | `POST /domains` `{"domain": {"name", "description"?, "enabled": true}}` | the created domain |
//! | [`Client::update_domain`] | `PATCH /domains/{id}` `{"domain": {"description"?, "enabled"?}}` | — |
//! | [`Client::delete_domain`] | `DELETE /domains/{id}` (Keystone refuses an enabled one) | — |

use serde::Deserialize;
use serde_json::{Map, Value, json};
use wasm_operator_sdk::http::Method;

use super::{Client, Result, encode};

/// A domain as Keystone lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Domain {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) name: String,
    /// `null` and absent read as empty.
    #[serde(default)]
    pub(crate) description: Option<String>,
    /// Absent reads as enabled.
    #[serde(default)]
    pub(crate) enabled: Option<bool>,
}

impl Domain {
    /// The description, empty when unset.
    pub(crate) fn description(&self) -> &str {
        self.description.as_deref().unwrap_or_default()
    }

    /// Whether the domain is enabled (absent: yes).
    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }
}

/// The changes a PATCH sends; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DomainPatch {
    pub(crate) enabled: Option<bool>,
    pub(crate) description: Option<String>,
}

impl DomainPatch {
    /// Whether the patch changes nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.enabled.is_none() && self.description.is_none()
    }
}

#[derive(Deserialize)]
struct DomainList {
    #[serde(default)]
    domains: Vec<Domain>,
}

#[derive(Deserialize)]
struct DomainOne {
    domain: Domain,
}

impl Client<'_> {
    /// The domain named `name`, if any.
    pub(crate) fn domain_by_name(&self, name: &str) -> Result<Option<Domain>> {
        let list: DomainList = self.call(
            Method::Get,
            &format!("/domains?name={}", encode(name)),
            None,
        )?;
        Ok(list.domains.into_iter().next())
    }

    /// Creates the enabled domain `name` (with `description` when not empty).
    pub(crate) fn create_domain(&self, name: &str, description: &str) -> Result<Domain> {
        let mut domain = Map::new();
        domain.insert("name".into(), json!(name));
        if !description.is_empty() {
            domain.insert("description".into(), json!(description));
        }
        domain.insert("enabled".into(), json!(true));
        let body = json!({"domain": Value::Object(domain)});
        let created: DomainOne = self.call(Method::Post, "/domains", Some(body))?;
        Ok(created.domain)
    }

    /// Patches the domain `id`.
    pub(crate) fn update_domain(&self, id: &str, patch: &DomainPatch) -> Result<()> {
        let mut domain = Map::new();
        if let Some(description) = &patch.description {
            domain.insert("description".into(), json!(description));
        }
        if let Some(enabled) = patch.enabled {
            domain.insert("enabled".into(), json!(enabled));
        }
        let body = json!({"domain": Value::Object(domain)});
        self.send_only(
            Method::Patch,
            &format!("/domains/{}", encode(id)),
            Some(body),
        )
    }

    /// Deletes the domain `id`.
    pub(crate) fn delete_domain(&self, id: &str) -> Result<()> {
        self.send_only(Method::Delete, &format!("/domains/{}", encode(id)), None)
    }
}
