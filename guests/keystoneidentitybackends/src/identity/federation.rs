//! The OS-FEDERATION objects: identity providers, mappings and protocols, by id.
//!
//! | Call | Request |
//! |---|---|
//! | [`Client::identity_provider`] | `GET /OS-FEDERATION/identity_providers/{idp}` (404: `None`) |
//! | [`Client::create_identity_provider`] | `PUT …/identity_providers/{idp}` `{"identity_provider": {"domain_id", "description"?, "enabled": true, "remote_ids": [..]}}` |
//! | [`Client::update_identity_provider`] | `PATCH …/identity_providers/{idp}` `{"identity_provider": {"description"?, "enabled"?, "remote_ids"?}}` (Keystone never changes domain_id) |
//! | [`Client::delete_identity_provider`] | `DELETE …/identity_providers/{idp}` |
//! | [`Client::mapping`] | `GET /OS-FEDERATION/mappings/{id}` (404: `None`) |
//! | [`Client::create_mapping`] / [`Client::update_mapping`] | `PUT` / `PATCH /OS-FEDERATION/mappings/{id}` `{"mapping": {"rules": [..]}}` |
//! | [`Client::delete_mapping`] | `DELETE /OS-FEDERATION/mappings/{id}` |
//! | [`Client::protocol`] | `GET …/identity_providers/{idp}/protocols/{protocol}` (404: `None`) |
//! | [`Client::create_protocol`] / [`Client::update_protocol`] | `PUT` / `PATCH …/protocols/{protocol}` `{"protocol": {"mapping_id"}}` |
//! | [`Client::delete_protocol`] | `DELETE …/protocols/{protocol}` |

use serde::Deserialize;
use serde_json::{Map, Value, json};
use wasm_operator_sdk::http::Method;

use super::{Client, Result, encode};

/// An identity provider as Keystone shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub(crate) struct IdentityProvider {
    #[serde(default)]
    pub(crate) domain_id: Option<String>,
    #[serde(default)]
    pub(crate) description: Option<String>,
    #[serde(default)]
    pub(crate) enabled: Option<bool>,
    #[serde(default)]
    pub(crate) remote_ids: Option<Vec<String>>,
}

/// The fields an identity provider is created or patched with; `None` is not sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IdentityProviderFields {
    /// Only on create: Keystone refuses it in a PATCH.
    pub(crate) domain_id: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) enabled: Option<bool>,
    pub(crate) remote_ids: Option<Vec<String>>,
}

impl IdentityProviderFields {
    /// Whether nothing would be sent.
    pub(crate) fn is_empty(&self) -> bool {
        self.domain_id.is_none()
            && self.description.is_none()
            && self.enabled.is_none()
            && self.remote_ids.is_none()
    }

    fn body(&self) -> Value {
        let mut idp = Map::new();
        if let Some(domain_id) = &self.domain_id {
            idp.insert("domain_id".into(), json!(domain_id));
        }
        if let Some(description) = &self.description {
            idp.insert("description".into(), json!(description));
        }
        if let Some(enabled) = self.enabled {
            idp.insert("enabled".into(), json!(enabled));
        }
        if let Some(remote_ids) = &self.remote_ids {
            idp.insert("remote_ids".into(), json!(remote_ids));
        }
        json!({"identity_provider": Value::Object(idp)})
    }
}

/// A mapping: its rules exactly as Keystone stored them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Mapping {
    #[serde(default)]
    pub(crate) rules: Value,
}

/// A protocol of an identity provider.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Protocol {
    #[serde(default)]
    pub(crate) mapping_id: String,
}

#[derive(Deserialize)]
struct IdentityProviderOne {
    identity_provider: IdentityProvider,
}

#[derive(Deserialize)]
struct MappingOne {
    mapping: Mapping,
}

#[derive(Deserialize)]
struct ProtocolOne {
    protocol: Protocol,
}

fn idp_path(idp: &str) -> String {
    format!("/OS-FEDERATION/identity_providers/{}", encode(idp))
}

fn mapping_path(id: &str) -> String {
    format!("/OS-FEDERATION/mappings/{}", encode(id))
}

fn protocol_path(idp: &str, protocol: &str) -> String {
    format!("{}/protocols/{}", idp_path(idp), encode(protocol))
}

impl Client<'_> {
    /// The identity provider `idp`, if registered.
    pub(crate) fn identity_provider(&self, idp: &str) -> Result<Option<IdentityProvider>> {
        let one: Option<IdentityProviderOne> = self.get_optional(&idp_path(idp))?;
        Ok(one.map(|o| o.identity_provider))
    }

    /// Registers the identity provider `idp`.
    pub(crate) fn create_identity_provider(
        &self,
        idp: &str,
        fields: &IdentityProviderFields,
    ) -> Result<()> {
        self.send_only(Method::Put, &idp_path(idp), Some(fields.body()))
    }

    /// Patches the identity provider `idp`.
    pub(crate) fn update_identity_provider(
        &self,
        idp: &str,
        fields: &IdentityProviderFields,
    ) -> Result<()> {
        self.send_only(Method::Patch, &idp_path(idp), Some(fields.body()))
    }

    /// Deletes the identity provider `idp` (and with it its protocols).
    pub(crate) fn delete_identity_provider(&self, idp: &str) -> Result<()> {
        self.send_only(Method::Delete, &idp_path(idp), None)
    }

    /// The mapping `id`, if it exists.
    pub(crate) fn mapping(&self, id: &str) -> Result<Option<Mapping>> {
        let one: Option<MappingOne> = self.get_optional(&mapping_path(id))?;
        Ok(one.map(|o| o.mapping))
    }

    /// Creates the mapping `id` with `rules`.
    pub(crate) fn create_mapping(&self, id: &str, rules: &Value) -> Result<()> {
        let body = json!({"mapping": {"rules": rules}});
        self.send_only(Method::Put, &mapping_path(id), Some(body))
    }

    /// Replaces the rules of the mapping `id`.
    pub(crate) fn update_mapping(&self, id: &str, rules: &Value) -> Result<()> {
        let body = json!({"mapping": {"rules": rules}});
        self.send_only(Method::Patch, &mapping_path(id), Some(body))
    }

    /// Deletes the mapping `id`.
    pub(crate) fn delete_mapping(&self, id: &str) -> Result<()> {
        self.send_only(Method::Delete, &mapping_path(id), None)
    }

    /// The protocol `protocol` of `idp`, if it exists.
    pub(crate) fn protocol(&self, idp: &str, protocol: &str) -> Result<Option<Protocol>> {
        let one: Option<ProtocolOne> = self.get_optional(&protocol_path(idp, protocol))?;
        Ok(one.map(|o| o.protocol))
    }

    /// Creates the protocol `protocol` of `idp` bound to `mapping_id`.
    pub(crate) fn create_protocol(
        &self,
        idp: &str,
        protocol: &str,
        mapping_id: &str,
    ) -> Result<()> {
        let body = json!({"protocol": {"mapping_id": mapping_id}});
        self.send_only(Method::Put, &protocol_path(idp, protocol), Some(body))
    }

    /// Binds the protocol `protocol` of `idp` to `mapping_id`.
    pub(crate) fn update_protocol(
        &self,
        idp: &str,
        protocol: &str,
        mapping_id: &str,
    ) -> Result<()> {
        let body = json!({"protocol": {"mapping_id": mapping_id}});
        self.send_only(Method::Patch, &protocol_path(idp, protocol), Some(body))
    }

    /// Deletes the protocol `protocol` of `idp`.
    pub(crate) fn delete_protocol(&self, idp: &str, protocol: &str) -> Result<()> {
        self.send_only(Method::Delete, &protocol_path(idp, protocol), None)
    }
}
