//! Domains, projects, groups and roles (`POST` to create), identity providers and mappings
//! (`PUT` to an id), protocols of an identity provider; get, list with filters, patch and
//! delete, with Keystone's validation and conflict answers.
//!
//! A domain is deleted only once disabled (403 otherwise); deleting it deletes its projects
//! and groups; deleting a role, group or project deletes its assignments; deleting an
//! identity provider deletes its protocols.

use axum::http::{Method, StatusCode};
use serde_json::{Map, Value, json};

use super::api::{Request, not_found};
use super::identity::{Actor, DEFAULT_DOMAIN, Identity, Kind, Target, new_id};
use super::reply::{KeystoneError, Reply, collection, linked, linked_protocol, member, no_content};

/// Keystone's answer to a create body without a `name`.
fn name_required() -> KeystoneError {
    KeystoneError::bad_request("'name' is a required property")
}

/// The member object of a request body (`{"domain": {...}}` → `{...}`).
fn member_of(request: &Request, kind_name: &str) -> Result<Map<String, Value>, KeystoneError> {
    let body = request.json()?;
    match body.get(kind_name) {
        Some(Value::Object(map)) => Ok(map.clone()),
        _ => Err(KeystoneError::bad_request(format!(
            "'{kind_name}' is a required property"
        ))),
    }
}

/// `GET /v3/{plural}`: filtered by `name`, `domain_id`, `enabled`, `id`.
pub(crate) fn list(request: &Request, identity: &Identity, kind: Kind) -> Reply {
    let items: Vec<Value> = identity
        .all(kind)
        .filter(|o| {
            ["name", "domain_id", "id"].iter().all(|field| {
                request
                    .param(field)
                    .is_none_or(|want| o[*field].as_str() == Some(want))
            })
        })
        .filter(|o| {
            request
                .param("enabled")
                .is_none_or(|want| o["enabled"].as_bool() == Some(!matches!(want, "false" | "0")))
        })
        .map(|o| linked(&request.base, &kind.path(), o.clone()))
        .collect();
    collection(&request.base, &request.path_and_query, kind.plural(), items)
}

/// `POST /v3/{plural}` (domains, projects, groups, roles).
pub(crate) fn create(request: &Request, identity: &mut Identity, kind: Kind) -> Reply {
    let given = member_of(request, kind.singular())?;
    let name = match given.get("name").and_then(Value::as_str) {
        Some(name) if !name.trim().is_empty() => name.to_owned(),
        _ => return Err(name_required()),
    };
    let domain = given
        .get("domain_id")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_DOMAIN)
        .to_owned();
    if kind != Kind::Domain && kind != Kind::Role && identity.get(Kind::Domain, &domain).is_none() {
        return Err(KeystoneError::not_found("domain", &domain));
    }
    let mut object = match kind {
        Kind::Domain => {
            if identity.domain_named(&name).is_some() {
                return Err(KeystoneError::conflict(format!(
                    "Conflict occurred attempting to store project - it is not permitted to have two projects acting as domains with the same name: {name}."
                )));
            }
            json!({"id": new_id(), "name": name, "description": "", "enabled": true, "tags": [], "options": {}})
        }
        Kind::Project => {
            if identity
                .all(Kind::Project)
                .any(|p| p["name"] == name.as_str() && p["domain_id"] == domain.as_str())
            {
                return Err(KeystoneError::conflict(format!(
                    "Conflict occurred attempting to store project - it is not permitted to have two projects with the same name in the same domain : {name}."
                )));
            }
            json!({"id": new_id(), "name": name, "domain_id": domain, "description": "",
                   "enabled": true, "parent_id": domain, "is_domain": false, "tags": [], "options": {}})
        }
        Kind::Group => {
            if identity
                .all(Kind::Group)
                .any(|g| g["name"] == name.as_str() && g["domain_id"] == domain.as_str())
            {
                return Err(KeystoneError::conflict(format!(
                    "Conflict occurred attempting to store group - Duplicate entry found with name {name} at domain ID {domain}."
                )));
            }
            json!({"id": new_id(), "name": name, "domain_id": domain, "description": ""})
        }
        Kind::Role => {
            if identity.all(Kind::Role).any(|r| r["name"] == name.as_str()) {
                return Err(KeystoneError::conflict(format!(
                    "Conflict occurred attempting to store role - Duplicate entry found with name {name}."
                )));
            }
            json!({"id": new_id(), "name": name, "domain_id": null, "description": null, "options": {}})
        }
        Kind::IdentityProvider | Kind::Mapping => return Err(not_found()),
    };
    merge(&mut object, &given);
    identity.insert(kind, object.clone());
    member(
        StatusCode::CREATED,
        kind.singular(),
        linked(&request.base, &kind.path(), object),
    )
}

/// The fields of `given` a client may set, over `object`.
fn merge(object: &mut Value, given: &Map<String, Value>) {
    if let Some(map) = object.as_object_mut() {
        for (key, value) in given {
            if key != "id" && key != "links" {
                map.insert(key.clone(), value.clone());
            }
        }
    }
}

/// `GET`, `PATCH`, `DELETE` (and `PUT` for federation kinds) of `/v3/{plural}/{id}`.
pub(crate) fn one(request: &Request, identity: &mut Identity, kind: Kind, id: &str) -> Reply {
    let path = kind.path();
    let federation = matches!(kind, Kind::IdentityProvider | Kind::Mapping);
    if request.method == Method::PUT && federation {
        return put_federation(request, identity, kind, id);
    }
    let Some(existing) = identity.get(kind, id).cloned() else {
        return Err(KeystoneError::not_found(kind.display(), id));
    };
    match request.method {
        Method::GET => member(
            StatusCode::OK,
            kind.singular(),
            linked(&request.base, &path, existing),
        ),
        Method::PATCH => {
            let given = member_of(request, kind.singular())?;
            if given.get("id").is_some_and(|v| v.as_str() != Some(id)) {
                return Err(KeystoneError::bad_request("Cannot change ID"));
            }
            if kind == Kind::Domain
                && let Some(name) = given.get("name").and_then(Value::as_str)
                && identity
                    .domain_named(name)
                    .is_some_and(|d| d["id"].as_str() != Some(id))
            {
                return Err(KeystoneError::conflict(format!(
                    "Conflict occurred attempting to store project - it is not permitted to have two projects acting as domains with the same name: {name}."
                )));
            }
            let mut updated = existing;
            merge(&mut updated, &given);
            identity.insert(kind, updated.clone());
            member(
                StatusCode::OK,
                kind.singular(),
                linked(&request.base, &path, updated),
            )
        }
        Method::DELETE => {
            if kind == Kind::Domain && existing["enabled"].as_bool() != Some(false) {
                return Err(KeystoneError::forbidden(
                    "Cannot delete a domain that is enabled, please disable it first.",
                ));
            }
            delete(identity, kind, id);
            Ok(no_content())
        }
        _ => Err(KeystoneError {
            code: 405,
            message: "The method is not allowed for the requested URL.".into(),
        }),
    }
}

/// Removes `id` and what hangs off it.
fn delete(identity: &mut Identity, kind: Kind, id: &str) {
    if let Some(objects) = identity.objects.get_mut(&kind) {
        objects.remove(id);
    }
    match kind {
        Kind::Domain => {
            let owned: Vec<(Kind, String)> = [Kind::Project, Kind::Group]
                .into_iter()
                .flat_map(|k| {
                    identity
                        .all(k)
                        .filter(|o| o["domain_id"] == id)
                        .filter_map(|o| o["id"].as_str().map(|i| (k, i.to_owned())))
                        .collect::<Vec<_>>()
                })
                .collect();
            for (k, child) in owned {
                delete(identity, k, &child);
            }
            identity
                .assignments
                .retain(|a| a.target != Target::Domain(id.into()));
        }
        Kind::Project => identity
            .assignments
            .retain(|a| a.target != Target::Project(id.into())),
        Kind::Group => identity
            .assignments
            .retain(|a| a.actor != Actor::Group(id.into())),
        Kind::Role => identity.assignments.retain(|a| a.role != id),
        Kind::IdentityProvider => identity.protocols.retain(|(idp, _), _| idp != id),
        Kind::Mapping => {}
    }
}

/// `PUT /v3/OS-FEDERATION/{identity_providers|mappings}/{id}`: create (409 when it exists).
fn put_federation(request: &Request, identity: &mut Identity, kind: Kind, id: &str) -> Reply {
    let given = member_of(request, kind.singular())?;
    if identity.get(kind, id).is_some() {
        return Err(KeystoneError::conflict(format!(
            "Conflict occurred attempting to store {} - Duplicate entry: None.",
            kind.singular()
        )));
    }
    let mut object = if kind == Kind::Mapping {
        if !given.get("rules").is_some_and(Value::is_array) {
            return Err(KeystoneError::bad_request("'rules' is a required property"));
        }
        json!({"id": id})
    } else {
        let domain = match given.get("domain_id").and_then(Value::as_str) {
            Some(domain) if identity.get(Kind::Domain, domain).is_none() => {
                return Err(KeystoneError::not_found("domain", domain));
            }
            Some(domain) => domain.to_owned(),
            None => {
                // Keystone creates a domain for an identity provider that names none.
                let domain = new_id();
                identity.insert(
                    Kind::Domain,
                    json!({"id": domain, "name": domain, "description": format!("Auto generated federated domain for Identity Provider: {id}"),
                           "enabled": true, "tags": [], "options": {}}),
                );
                domain
            }
        };
        json!({"id": id, "domain_id": domain, "enabled": false, "description": null,
               "remote_ids": [], "authorization_ttl": null})
    };
    merge(&mut object, &given);
    identity.insert(kind, object.clone());
    member(
        StatusCode::CREATED,
        kind.singular(),
        linked(&request.base, &kind.path(), object),
    )
}

/// `GET /v3/OS-FEDERATION/identity_providers/{idp}/protocols`.
pub(crate) fn list_protocols(request: &Request, identity: &Identity, idp: &str) -> Reply {
    if identity.get(Kind::IdentityProvider, idp).is_none() {
        return Err(KeystoneError::not_found("Identity Provider", idp));
    }
    let items = identity
        .protocols
        .iter()
        .filter(|((owner, _), _)| owner == idp)
        .map(|(_, p)| {
            // A listed protocol also names its identity provider and remote id attribute.
            let mut listed = p.clone();
            if let Some(map) = listed.as_object_mut() {
                map.insert("idp_id".into(), json!(idp));
                map.entry("remote_id_attribute").or_insert(Value::Null);
            }
            linked_protocol(&request.base, idp, listed)
        })
        .collect();
    collection(&request.base, &request.path_and_query, "protocols", items)
}

/// `PUT`, `GET`, `PATCH`, `DELETE` of a protocol.
pub(crate) fn protocol(request: &Request, identity: &mut Identity, idp: &str, id: &str) -> Reply {
    let key = (idp.to_owned(), id.to_owned());
    let check_mapping = |identity: &Identity, given: &Map<String, Value>| match given
        .get("mapping_id")
        .and_then(Value::as_str)
    {
        Some(mapping) if identity.get(Kind::Mapping, mapping).is_none() => Err(
            KeystoneError::bad_request(format!("Invalid mapping id: {mapping}")),
        ),
        _ => Ok(()),
    };
    match request.method {
        Method::PUT => {
            let given = member_of(request, "protocol")?;
            if !given.contains_key("mapping_id") {
                return Err(KeystoneError::bad_request(
                    "'mapping_id' is a required property",
                ));
            }
            check_mapping(identity, &given)?;
            if identity.get(Kind::IdentityProvider, idp).is_none() {
                return Err(KeystoneError::not_found("Identity Provider", idp));
            }
            if identity.protocols.contains_key(&key) {
                return Err(KeystoneError::conflict(
                    "Conflict occurred attempting to store federation_protocol - Duplicate entry: None.",
                ));
            }
            let mut object = json!({"id": id});
            merge(&mut object, &given);
            identity.protocols.insert(key, object.clone());
            member(
                StatusCode::CREATED,
                "protocol",
                linked_protocol(&request.base, idp, object),
            )
        }
        _ => {
            let Some(existing) = identity.protocols.get(&key).cloned() else {
                return Err(KeystoneError::not_found(
                    "federated protocol",
                    &format!("{id} for Identity Provider: {idp}"),
                ));
            };
            match request.method {
                Method::GET => member(
                    StatusCode::OK,
                    "protocol",
                    linked_protocol(&request.base, idp, existing),
                ),
                Method::PATCH => {
                    let given = member_of(request, "protocol")?;
                    check_mapping(identity, &given)?;
                    let mut updated = existing;
                    merge(&mut updated, &given);
                    identity.protocols.insert(key, updated.clone());
                    member(
                        StatusCode::OK,
                        "protocol",
                        linked_protocol(&request.base, idp, updated),
                    )
                }
                Method::DELETE => {
                    identity.protocols.remove(&key);
                    Ok(no_content())
                }
                _ => Err(not_found()),
            }
        }
    }
}
