//! The fake Keystone's resources: one function per collection or object, answering as
//! Keystone v3 does and checking request bodies against Keystone's schemas.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use wasm_operator_sdk::http::Method;

use super::{Answer, State, answer, only, wrapped};

/// Keystone's IdP create properties (`additionalProperties: false`).
const IDP_CREATE: &[&str] = &[
    "enabled",
    "description",
    "authorization_ttl",
    "remote_ids",
    "domain_id",
];
/// Its update properties: `domain_id` cannot change.
const IDP_UPDATE: &[&str] = &["enabled", "description", "authorization_ttl", "remote_ids"];

fn bad_request() -> Answer {
    (400, None)
}

/// `/domains`: list by name, create.
pub(super) fn domains(
    state: &mut State,
    method: Method,
    query: &BTreeMap<String, String>,
    body: Option<&Value>,
) -> Answer {
    match method {
        Method::Get => {
            let listed: Vec<Value> = state
                .domains
                .values()
                .filter(|d| query.get("name").is_none_or(|n| d["name"] == n.as_str()))
                .cloned()
                .collect();
            answer(200, json!({"domains": listed}))
        }
        Method::Post => {
            let Some(domain) = wrapped(body, "domain") else {
                return bad_request();
            };
            let Some(name) = domain.get("name").and_then(Value::as_str) else {
                return bad_request();
            };
            if state.domains.values().any(|d| d["name"] == name) {
                return (409, None);
            }
            let id = state.new_id("domain");
            let mut stored = json!({"id": id, "name": name, "description": "", "enabled": true});
            for (k, v) in domain {
                stored[k] = v.clone();
            }
            state.domains.insert(id, stored.clone());
            answer(201, json!({"domain": stored}))
        }
        _ => (405, None),
    }
}

/// `/domains/{id}`: patch, delete (only a disabled one).
pub(super) fn domain(state: &mut State, method: Method, id: &str, body: Option<&Value>) -> Answer {
    let Some(stored) = state.domains.get_mut(id) else {
        return (404, None);
    };
    match method {
        Method::Get => answer(200, json!({"domain": stored})),
        Method::Patch => {
            let Some(patch) = wrapped(body, "domain").filter(|p| !p.is_empty()) else {
                return bad_request();
            };
            for (k, v) in patch {
                stored[k] = v.clone();
            }
            answer(200, json!({"domain": stored}))
        }
        Method::Delete if stored["enabled"] != false => (403, None),
        Method::Delete => {
            state.domains.remove(id);
            (204, None)
        }
        _ => (405, None),
    }
}

/// `/OS-FEDERATION/identity_providers/{idp}`.
pub(super) fn idp(state: &mut State, method: Method, id: &str, body: Option<&Value>) -> Answer {
    match method {
        Method::Get => match state.idps.get(id) {
            Some(idp) => answer(200, json!({"identity_provider": idp})),
            None => (404, None),
        },
        Method::Put => {
            let Some(fields) = wrapped(body, "identity_provider") else {
                return bad_request();
            };
            if !only(&Value::Object(fields.clone()), IDP_CREATE) {
                return bad_request();
            }
            if state.idps.contains_key(id) {
                return (409, None);
            }
            let mut stored = json!({"id": id, "enabled": false, "description": null,
                                    "remote_ids": [], "domain_id": null});
            for (k, v) in fields {
                stored[k] = v.clone();
            }
            state.idps.insert(id.to_owned(), stored.clone());
            answer(201, json!({"identity_provider": stored}))
        }
        Method::Patch => {
            let Some(fields) = wrapped(body, "identity_provider").filter(|f| !f.is_empty()) else {
                return bad_request();
            };
            if !only(&Value::Object(fields.clone()), IDP_UPDATE) {
                return bad_request();
            }
            let Some(stored) = state.idps.get_mut(id) else {
                return (404, None);
            };
            for (k, v) in fields {
                stored[k] = v.clone();
            }
            answer(200, json!({"identity_provider": stored}))
        }
        Method::Delete => {
            if state.idps.remove(id).is_none() {
                return (404, None);
            }
            state.protocols.retain(|(idp, _), _| idp != id);
            (204, None)
        }
        _ => (405, None),
    }
}

/// `/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}`.
pub(super) fn protocol(
    state: &mut State,
    method: Method,
    idp: &str,
    protocol: &str,
    body: Option<&Value>,
) -> Answer {
    if !state.idps.contains_key(idp) {
        return (404, None);
    }
    let key = (idp.to_owned(), protocol.to_owned());
    let mapping_id = || {
        let fields = wrapped(body, "protocol")?;
        if !only(
            &Value::Object(fields.clone()),
            &["mapping_id", "remote_id_attribute"],
        ) {
            return None;
        }
        fields.get("mapping_id")?.as_str().map(str::to_owned)
    };
    let shown = |mapping: &str| {
        answer(
            200,
            json!({"protocol": {"id": protocol, "mapping_id": mapping}}),
        )
    };
    match method {
        Method::Get => match state.protocols.get(&key) {
            Some(mapping) => shown(mapping),
            None => (404, None),
        },
        Method::Put | Method::Patch => {
            let Some(mapping) = mapping_id() else {
                return bad_request();
            };
            if !state.mappings.contains_key(&mapping) {
                return (404, None);
            }
            let exists = state.protocols.contains_key(&key);
            match (method, exists) {
                (Method::Put, true) => return (409, None),
                (Method::Patch, false) => return (404, None),
                _ => {}
            }
            state.protocols.insert(key, mapping.clone());
            let (status, body) = shown(&mapping);
            (if method == Method::Put { 201 } else { status }, body)
        }
        Method::Delete => match state.protocols.remove(&key) {
            Some(_) => (204, None),
            None => (404, None),
        },
        _ => (405, None),
    }
}

/// `/OS-FEDERATION/mappings/{id}`.
pub(super) fn mapping(state: &mut State, method: Method, id: &str, body: Option<&Value>) -> Answer {
    let rules = || {
        let fields = wrapped(body, "mapping")?;
        if !only(&Value::Object(fields.clone()), &["rules", "schema_version"]) {
            return None;
        }
        let rules = fields.get("rules")?;
        rules
            .as_array()
            .filter(|r| !r.is_empty())
            .map(|_| rules.clone())
    };
    match method {
        Method::Get => match state.mappings.get(id) {
            Some(rules) => answer(200, json!({"mapping": {"id": id, "rules": rules}})),
            None => (404, None),
        },
        Method::Put | Method::Patch => {
            let Some(rules) = rules() else {
                return bad_request();
            };
            let exists = state.mappings.contains_key(id);
            match (method, exists) {
                (Method::Put, true) => return (409, None),
                (Method::Patch, false) => return (404, None),
                _ => {}
            }
            state.mappings.insert(id.to_owned(), rules.clone());
            let status = if method == Method::Put { 201 } else { 200 };
            answer(status, json!({"mapping": {"id": id, "rules": rules}}))
        }
        Method::Delete => match state.mappings.remove(id) {
            Some(_) => (204, None),
            None => (404, None),
        },
        _ => (405, None),
    }
}

/// `/groups`: list by name and domain, create.
pub(super) fn groups(
    state: &mut State,
    method: Method,
    query: &BTreeMap<String, String>,
    body: Option<&Value>,
) -> Answer {
    match method {
        Method::Get => {
            let listed: Vec<Value> = state
                .groups
                .values()
                .filter(|g| {
                    query.get("name").is_none_or(|n| g["name"] == n.as_str())
                        && query
                            .get("domain_id")
                            .is_none_or(|d| g["domain_id"] == d.as_str())
                })
                .cloned()
                .collect();
            answer(200, json!({"groups": listed}))
        }
        Method::Post => {
            let Some(group) = wrapped(body, "group") else {
                return bad_request();
            };
            let (Some(name), Some(domain_id)) = (group.get("name"), group.get("domain_id")) else {
                return bad_request();
            };
            let taken = state
                .groups
                .values()
                .any(|g| g["name"] == *name && g["domain_id"] == *domain_id);
            if taken {
                return (409, None);
            }
            let id = state.new_id("group");
            let mut stored = Value::Object(group.clone());
            stored["id"] = json!(id);
            state.groups.insert(id, stored.clone());
            answer(201, json!({"group": stored}))
        }
        _ => (405, None),
    }
}

/// `/roles`: the global roles, by name.
pub(super) fn roles(state: &State, method: Method, query: &BTreeMap<String, String>) -> Answer {
    if method != Method::Get {
        return (405, None);
    }
    let roles: Vec<Value> = state
        .roles
        .iter()
        .filter(|(_, name)| query.get("name").is_none_or(|n| n == *name))
        .map(|(id, name)| json!({"id": id, "name": name}))
        .collect();
    answer(200, json!({"roles": roles}))
}

/// `/projects`: by name and domain.
pub(super) fn projects(state: &State, method: Method, query: &BTreeMap<String, String>) -> Answer {
    if method != Method::Get {
        return (405, None);
    }
    let projects: Vec<Value> = state
        .projects
        .iter()
        .filter(|(_, (name, domain))| {
            query.get("name").is_none_or(|n| n == name)
                && query.get("domain_id").is_none_or(|d| d == domain)
        })
        .map(|(id, (name, domain))| json!({"id": id, "name": name, "domain_id": domain}))
        .collect();
    answer(200, json!({"projects": projects}))
}

/// `/{domains,projects}/{id}/groups/{group}/roles/{role}`: check (204/404) and grant.
pub(super) fn grant(
    state: &mut State,
    method: Method,
    (scope, id, group, role): (&str, &str, &str, &str),
    path: &str,
) -> Answer {
    let target = if scope == "domains" {
        state.domains.contains_key(id)
    } else {
        state.projects.contains_key(id)
    };
    if !target || !state.groups.contains_key(group) || !state.roles.contains_key(role) {
        return (404, None);
    }
    match method {
        Method::Get if state.grants.contains(path) => (204, None),
        Method::Get => (404, None),
        Method::Put => {
            state.grants.insert(path.to_owned());
            (204, None)
        }
        _ => (405, None),
    }
}
