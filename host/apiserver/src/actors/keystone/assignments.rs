//! Role assignments: `PUT`/`HEAD`/`GET`/`DELETE`
//! `/v3/{projects|domains}/{target}/{groups|users}/{actor}/roles/{role}` (204, 404 for a
//! missing target, actor, role or assignment) and `GET /v3/role_assignments` filtered by
//! `group.id`, `user.id`, `role.id`, `scope.project.id`, `scope.domain.id`.

use axum::http::Method;
use serde_json::{Value, json};

use super::api::Request;
use super::identity::{Actor, Assignment, Identity, Kind, Target};
use super::reply::{KeystoneError, Reply, collection, no_content};

/// One assignment path.
pub(crate) fn one(
    request: &Request,
    identity: &mut Identity,
    scope: &str,
    target: &str,
    who: &str,
    actor: &str,
    role: &str,
) -> Reply {
    let (target_kind, target) = if scope == "projects" {
        (Kind::Project, Target::Project(target.to_owned()))
    } else {
        (Kind::Domain, Target::Domain(target.to_owned()))
    };
    let target_id = match &target {
        Target::Project(id) | Target::Domain(id) => id.clone(),
    };
    if identity.get(target_kind, &target_id).is_none() {
        return Err(KeystoneError::not_found(target_kind.singular(), &target_id));
    }
    let actor = if who == "groups" {
        if identity.get(Kind::Group, actor).is_none() {
            return Err(KeystoneError::not_found("group", actor));
        }
        Actor::Group(actor.to_owned())
    } else {
        if !identity.users.iter().any(|u| u.id == actor) {
            return Err(KeystoneError::not_found("user", actor));
        }
        Actor::User(actor.to_owned())
    };
    if identity.get(Kind::Role, role).is_none() {
        return Err(KeystoneError::not_found("role", role));
    }
    let assignment = Assignment {
        actor,
        target,
        role: role.to_owned(),
    };
    let missing = |a: &Assignment| {
        let actor = match &a.actor {
            Actor::User(id) | Actor::Group(id) => id.as_str(),
        };
        KeystoneError::not_found(
            "role assignment with role",
            &format!(
                "{}, user or group: {actor}, project, domain, or system: {target_id}",
                a.role
            ),
        )
    };
    match request.method {
        Method::PUT => {
            identity.assignments.insert(assignment);
            Ok(no_content())
        }
        Method::GET | Method::HEAD => {
            if identity.assignments.contains(&assignment) {
                Ok(no_content())
            } else {
                Err(missing(&assignment))
            }
        }
        Method::DELETE => {
            if identity.assignments.remove(&assignment) {
                Ok(no_content())
            } else {
                Err(missing(&assignment))
            }
        }
        _ => Err(KeystoneError {
            code: 405,
            message: "The method is not allowed for the requested URL.".into(),
        }),
    }
}

/// `GET /v3/role_assignments`.
pub(crate) fn list(request: &Request, identity: &Identity) -> Reply {
    let base = &request.base;
    let want = |name: &str, value: Option<&str>| {
        request
            .param(name)
            .is_none_or(|w| value.is_some_and(|v| v == w))
    };
    let items: Vec<Value> = identity
        .assignments
        .iter()
        .filter(|a| {
            let (user, group) = match &a.actor {
                Actor::User(id) => (Some(id.as_str()), None),
                Actor::Group(id) => (None, Some(id.as_str())),
            };
            let (project, domain) = match &a.target {
                Target::Project(id) => (Some(id.as_str()), None),
                Target::Domain(id) => (None, Some(id.as_str())),
            };
            want("user.id", user)
                && want("group.id", group)
                && want("role.id", Some(&a.role))
                && want("scope.project.id", project)
                && want("scope.domain.id", domain)
        })
        .map(|a| {
            let (who, actor) = match &a.actor {
                Actor::User(id) => ("user", id),
                Actor::Group(id) => ("group", id),
            };
            let (scope, target) = match &a.target {
                Target::Project(id) => ("project", id),
                Target::Domain(id) => ("domain", id),
            };
            json!({
                "links": {"assignment": format!("{base}/v3/{scope}s/{target}/{who}s/{actor}/roles/{}", a.role)},
                "scope": { scope: {"id": target} },
                who: {"id": actor},
                "role": {"id": a.role},
            })
        })
        .collect();
    collection(base, &request.path_and_query, "role_assignments", items)
}
