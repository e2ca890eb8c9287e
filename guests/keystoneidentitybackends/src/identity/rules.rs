//! `spec.mappings` as Keystone's mapping rules: a field-for-field copy, camelCase to
//! Keystone's snake_case, nothing derived or defaulted (CobaltCore's
//! `federation_mapping_convert`).
//!
//! | Spec | Keystone | Sent |
//! |---|---|---|
//! | `remote[].type` | `type` | always |
//! | `remote[].regex` | `regex` | when set (false included) |
//! | `remote[].anyOneOf`, `notAnyOf`, `blacklist`, `whitelist` | `any_one_of`, `not_any_of`, `blacklist`, `whitelist` | when not empty |
//! | `local[].domain`, `group`, `user` | `domain`, `group`, `user` | when set; their `id`, `name`, `email`, `type` when not empty |
//! | `local[].groupIds`, `groups` | `group_ids`, `groups` | when not empty |
//! | `local[].projects[]` | `projects[]` `{"name", "roles": [{"name"}]}` | when not empty |
//!
//! DECISION: a project's `roles` is sent even when empty: Keystone's mapping schema
//! requires it on every project, so an empty list is sent as `[]` rather than left out
//! (CobaltCore's client leaves it out, which Keystone refuses).
//!
//! The result is compared with the rules Keystone returns, so it is exactly what Keystone
//! stores: Keystone keeps the rules as sent.

use serde_json::{Map, Value, json};

use crate::types::{
    MappingDomainSpec, MappingGroupSpec, MappingLocalRuleSpec, MappingRemoteRuleSpec,
    MappingRuleSpec, MappingUserSpec, MappingUserType,
};

/// The rules of `specs`, in order.
pub(crate) fn rules(specs: &[MappingRuleSpec]) -> Value {
    Value::Array(
        specs
            .iter()
            .map(|rule| {
                json!({
                    "local": rule.local.iter().map(local).collect::<Vec<_>>(),
                    "remote": rule.remote.iter().map(remote).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// Inserts `value` under `key` when it is not empty.
fn text(object: &mut Map<String, Value>, key: &str, value: &str) {
    if !value.is_empty() {
        object.insert(key.into(), json!(value));
    }
}

/// Inserts `values` under `key` when there are any.
fn list(object: &mut Map<String, Value>, key: &str, values: &[String]) {
    if !values.is_empty() {
        object.insert(key.into(), json!(values));
    }
}

fn remote(spec: &MappingRemoteRuleSpec) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), json!(spec.type_));
    if let Some(regex) = spec.regex {
        out.insert("regex".into(), json!(regex));
    }
    list(&mut out, "any_one_of", &spec.any_one_of);
    list(&mut out, "not_any_of", &spec.not_any_of);
    list(&mut out, "blacklist", &spec.blacklist);
    list(&mut out, "whitelist", &spec.whitelist);
    Value::Object(out)
}

fn domain(spec: &MappingDomainSpec) -> Value {
    let mut out = Map::new();
    text(&mut out, "id", &spec.id);
    text(&mut out, "name", &spec.name);
    Value::Object(out)
}

fn group(spec: &MappingGroupSpec) -> Value {
    let mut out = Map::new();
    text(&mut out, "id", &spec.id);
    text(&mut out, "name", &spec.name);
    if let Some(d) = &spec.domain {
        out.insert("domain".into(), domain(d));
    }
    Value::Object(out)
}

fn user(spec: &MappingUserSpec) -> Value {
    let mut out = Map::new();
    if let Some(d) = &spec.domain {
        out.insert("domain".into(), domain(d));
    }
    text(&mut out, "email", &spec.email);
    text(&mut out, "id", &spec.id);
    text(&mut out, "name", &spec.name);
    if let Some(type_) = spec.type_ {
        let type_ = match type_ {
            MappingUserType::Ephemeral => "ephemeral",
            MappingUserType::Local => "local",
        };
        out.insert("type".into(), json!(type_));
    }
    Value::Object(out)
}

fn local(spec: &MappingLocalRuleSpec) -> Value {
    let mut out = Map::new();
    if let Some(d) = &spec.domain {
        out.insert("domain".into(), domain(d));
    }
    if let Some(g) = &spec.group {
        out.insert("group".into(), group(g));
    }
    text(&mut out, "group_ids", &spec.group_ids);
    text(&mut out, "groups", &spec.groups);
    if !spec.projects.is_empty() {
        let projects: Vec<Value> = spec
            .projects
            .iter()
            .map(|p| {
                let roles: Vec<Value> = p.roles.iter().map(|r| json!({"name": r.name})).collect();
                json!({"name": p.name, "roles": roles})
            })
            .collect();
        out.insert("projects".into(), Value::Array(projects));
    }
    if let Some(u) = &spec.user {
        out.insert("user".into(), user(u));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(value: Value) -> MappingRuleSpec {
        serde_json::from_value(value).expect("a mapping rule")
    }

    #[test]
    fn every_field_of_a_rule_is_copied_under_keystones_snake_case_name() {
        let spec = rule(json!({
            "remote": [
                {"type": "HTTP_OIDC_PREFERRED_USERNAME"},
                {"type": "HTTP_OIDC_ISS", "anyOneOf": ["https://idp"], "regex": false},
                {"type": "HTTP_OIDC_GROUPS", "notAnyOf": ["x"]},
                {"type": "A", "blacklist": ["b"]},
                {"type": "W", "whitelist": ["w"]},
            ],
            "local": [
                {"user": {"name": "{0}", "email": "{1}", "type": "ephemeral",
                          "domain": {"name": "corp"}}},
                {"group": {"name": "admins", "domain": {"id": "d1"}}},
                {"groupIds": "{2}", "groups": "{3}", "domain": {"id": "d1"}},
                {"projects": [{"name": "p", "roles": [{"name": "member"}]},
                              {"name": "q"}]},
            ],
        }));
        assert_eq!(
            rules(&[spec]),
            json!([{
                "local": [
                    {"user": {"domain": {"name": "corp"}, "email": "{1}", "name": "{0}",
                              "type": "ephemeral"}},
                    {"group": {"name": "admins", "domain": {"id": "d1"}}},
                    {"domain": {"id": "d1"}, "group_ids": "{2}", "groups": "{3}"},
                    {"projects": [{"name": "p", "roles": [{"name": "member"}]},
                                  {"name": "q", "roles": []}]},
                ],
                "remote": [
                    {"type": "HTTP_OIDC_PREFERRED_USERNAME"},
                    {"type": "HTTP_OIDC_ISS", "regex": false, "any_one_of": ["https://idp"]},
                    {"type": "HTTP_OIDC_GROUPS", "not_any_of": ["x"]},
                    {"type": "A", "blacklist": ["b"]},
                    {"type": "W", "whitelist": ["w"]},
                ],
            }])
        );
    }

    #[test]
    fn no_rules_are_an_empty_list() {
        assert_eq!(rules(&[]), json!([]));
    }
}
