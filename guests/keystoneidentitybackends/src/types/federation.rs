//! The federation vocabulary of OIDC and SAML backends: `mappings` (Keystone mapping
//! rules, field for field; camelCase here, snake_case in Keystone's JSON) and `groups` (the
//! local groups the rules target, with their role assignments).

use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::is_false;

/// One mapping rule: remote matchers and the local objects a match maps to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MappingRuleSpec {
    /// The local users, groups and projects the remote user maps to.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 16), extend("x-required" = true)))]
    pub local: Vec<MappingLocalRuleSpec>,
    /// The assertion matchers, by full WSGI environ name (`HTTP_OIDC_ISS`).
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 16), extend("x-required" = true)))]
    pub remote: Vec<MappingRemoteRuleSpec>,
}

/// One remote matcher (Keystone's `remote` object).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MappingRemoteRuleSpec {
    /// The assertion attribute: its full WSGI environ name (`HTTP_OIDC_PREFERRED_USERNAME`).
    #[serde(rename = "type", default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 256), extend("x-required" = true)))]
    pub type_: String,
    /// Reads the strings below as regular expressions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<bool>,
    /// Matches when any of these is among the attribute's values (not with notAnyOf).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(length(max = 32)))]
    pub any_one_of: Vec<String>,
    /// Fails the rule when any of these is among the values (not with anyOneOf).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(length(max = 32)))]
    pub not_any_of: Vec<String>,
    /// Values filtered out (not with whitelist).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(length(max = 32)))]
    pub blacklist: Vec<String>,
    /// The only values passed through (not with blacklist).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(length(max = 32)))]
    pub whitelist: Vec<String>,
}

/// One local object a match maps to (Keystone's `local` object).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MappingLocalRuleSpec {
    /// The domain of the local objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<MappingDomainSpec>,
    /// One group the user joins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<MappingGroupSpec>,
    /// The group ids an assertion value names (Keystone's `group_ids`, usually `{0}`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub group_ids: String,
    /// The semicolon-separated group names an assertion value carries (Keystone's
    /// `groups`, usually `{0}`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub groups: String,
    /// Projects the user gets roles on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(length(max = 16)))]
    pub projects: Vec<MappingProjectSpec>,
    /// The local user the remote identity maps to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<MappingUserSpec>,
}

/// A domain by id or by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MappingDomainSpec {
    /// The domain's id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 64)))]
    pub id: String,
    /// The domain's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 64)))]
    pub name: String,
}

/// A group by id, or by name and domain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MappingGroupSpec {
    /// The group's id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 64)))]
    pub id: String,
    /// The group's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 128)))]
    pub name: String,
    /// The domain of the named group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<MappingDomainSpec>,
}

/// Roles on one project (Keystone's `projects` entry).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MappingProjectSpec {
    /// The project's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 64), extend("x-required" = true)))]
    pub name: String,
    /// The roles granted on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(length(max = 16)))]
    pub roles: Vec<MappingProjectRoleSpec>,
}

/// A role, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MappingProjectRoleSpec {
    /// The role's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 64), extend("x-required" = true)))]
    pub name: String,
}

/// The local user (Keystone's `user` object).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MappingUserSpec {
    /// The local user's id (type local only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 64)))]
    pub id: String,
    /// The user's name, usually an assertion placeholder (`{0}`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub name: String,
    /// The user's email, usually a placeholder.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 256)))]
    pub email: String,
    /// The user's domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<MappingDomainSpec>,
    /// `ephemeral` (a shadow user, federation's default) or `local` (an existing user).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<MappingUserType>,
}

/// Keystone's user type of a mapped user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum MappingUserType {
    /// A shadow user.
    Ephemeral,
    /// An existing local user.
    Local,
}

/// A local group in the backend's domain, created when missing, and its role assignments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FederationGroupSpec {
    /// The group's name in the backend's domain.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 128), extend("x-required" = true)))]
    pub name: String,
    /// The group's description, set when it is created.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 1024)))]
    pub description: String,
    /// Roles the group gets on projects or on the backend's domain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(length(max = 32)))]
    pub role_assignments: Vec<FederationRoleAssignmentSpec>,
}

/// One role for the group, on exactly one of a project or the backend's domain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
    {"rule": "has(self.project) != (has(self.domain) && self.domain)",
     "message": "exactly one of project or domain must be set"}])))]
pub struct FederationRoleAssignmentSpec {
    /// The role's name (`member`).
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 64), extend("x-required" = true)))]
    pub role: String,
    /// The project the role is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<FederationProjectScopeSpec>,
    /// The role is on the backend's domain.
    #[serde(default, skip_serializing_if = "is_false")]
    pub domain: bool,
}

/// The project of a role assignment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FederationProjectScopeSpec {
    /// The project's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1, max = 64), extend("x-required" = true)))]
    pub name: String,
    /// The project's domain; the backend's own when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(test, schemars(length(max = 64)))]
    pub domain_name: String,
}
