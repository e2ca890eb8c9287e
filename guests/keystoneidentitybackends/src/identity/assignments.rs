//! Groups, roles, projects and the group role grants of `spec.groups`.
//!
//! | Call | Request | Answer |
//! |---|---|---|
//! | [`Client::group_by_name`] | `GET /groups?name=<name>&domain_id=<domain>` | the first listed, `None` for none |
//! | [`Client::create_group`] | `POST /groups` `{"group": {"name", "domain_id", "description"?}}` | the created group |
//! | [`Client::role_by_name`] | `GET /roles?name=<name>` (global roles) | the first listed, `None` for none |
//! | [`Client::project_by_name`] | `GET /projects?name=<name>&domain_id=<domain>` | the first listed, `None` for none |
//! | [`Client::has_group_role`] | `GET /{domains,projects}/{id}/groups/{group}/roles/{role}` | 2xx: true, 404: false |
//! | [`Client::grant_group_role`] | `PUT /{domains,projects}/{id}/groups/{group}/roles/{role}` (no body) | — |

use serde::Deserialize;
use serde_json::{Map, Value, json};
use wasm_operator_sdk::http::Method;

use super::{Client, Result, encode};

/// A group, role or project: its id and name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Named {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) name: String,
}

/// What a role is granted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    /// The domain of this id.
    Domain(&'a str),
    /// The project of this id.
    Project(&'a str),
}

impl Target<'_> {
    fn path(self) -> String {
        match self {
            Target::Domain(id) => format!("/domains/{}", encode(id)),
            Target::Project(id) => format!("/projects/{}", encode(id)),
        }
    }
}

#[derive(Deserialize)]
struct Groups {
    #[serde(default)]
    groups: Vec<Named>,
}

#[derive(Deserialize)]
struct GroupOne {
    group: Named,
}

#[derive(Deserialize)]
struct Roles {
    #[serde(default)]
    roles: Vec<Named>,
}

#[derive(Deserialize)]
struct Projects {
    #[serde(default)]
    projects: Vec<Named>,
}

fn grant_path(target: Target<'_>, group_id: &str, role_id: &str) -> String {
    format!(
        "{}/groups/{}/roles/{}",
        target.path(),
        encode(group_id),
        encode(role_id)
    )
}

impl Client<'_> {
    /// The group `name` of the domain `domain_id`, if any.
    pub(crate) fn group_by_name(&self, name: &str, domain_id: &str) -> Result<Option<Named>> {
        let path = format!(
            "/groups?name={}&domain_id={}",
            encode(name),
            encode(domain_id)
        );
        let list: Groups = self.call(Method::Get, &path, None)?;
        Ok(list.groups.into_iter().next())
    }

    /// Creates the group `name` in the domain `domain_id`.
    pub(crate) fn create_group(
        &self,
        name: &str,
        domain_id: &str,
        description: &str,
    ) -> Result<Named> {
        let mut group = Map::new();
        group.insert("name".into(), json!(name));
        group.insert("domain_id".into(), json!(domain_id));
        if !description.is_empty() {
            group.insert("description".into(), json!(description));
        }
        let body = json!({"group": Value::Object(group)});
        let created: GroupOne = self.call(Method::Post, "/groups", Some(body))?;
        Ok(created.group)
    }

    /// The global role `name`, if any.
    pub(crate) fn role_by_name(&self, name: &str) -> Result<Option<Named>> {
        let list: Roles = self.call(Method::Get, &format!("/roles?name={}", encode(name)), None)?;
        Ok(list.roles.into_iter().next())
    }

    /// The project `name` of the domain `domain_id`, if any.
    pub(crate) fn project_by_name(&self, name: &str, domain_id: &str) -> Result<Option<Named>> {
        let path = format!(
            "/projects?name={}&domain_id={}",
            encode(name),
            encode(domain_id)
        );
        let list: Projects = self.call(Method::Get, &path, None)?;
        Ok(list.projects.into_iter().next())
    }

    /// Whether the group has the role on `target`.
    pub(crate) fn has_group_role(
        &self,
        target: Target<'_>,
        group_id: &str,
        role_id: &str,
    ) -> Result<bool> {
        match self.send(Method::Get, &grant_path(target, group_id, role_id), None) {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Grants the group the role on `target` (idempotent).
    pub(crate) fn grant_group_role(
        &self,
        target: Target<'_>,
        group_id: &str,
        role_id: &str,
    ) -> Result<()> {
        self.send_only(Method::Put, &grant_path(target, group_id, role_id), None)
    }
}
