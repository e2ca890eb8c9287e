//! Step 6, continued — the declarative groups of `spec.groups` and their role
//! assignments (facts §3.2 step 6), in spec order. A group is created when missing and
//! never changed afterwards (it goes with its domain); a grant is checked before it is
//! made, so a converged pass sends only GETs.
//!
//! | Case | MappingsReady | Pass |
//! |---|---|---|
//! | group `g` absent in the backend's domain | — | `POST /groups`; event `FederationGroupCreated` "Created group \"g\" in domain d" |
//! | role `r` absent | False `RoleOrProjectNotFound` "role \"r\" not found" | ends, 30 s |
//! | project's `domainName` names no domain | False `RoleOrProjectNotFound` "domain \"pd\" of project \"p\" not found" | ends, 30 s |
//! | project `p` absent in its domain (the backend's own when no domainName) | False `RoleOrProjectNotFound` "project \"p\" not found in domain d" | ends, 30 s |
//! | grant missing | — | `PUT` of the grant (on the backend's domain, or on the project) |
//! | a call fails | False `IdentityAPIError` "ensuring group …" / "looking up role …" / "looking up domain …" / "looking up project …" / "checking role … of group … on domain/project …" / "assigning role … to group … on domain/project …" (a True MappingsReady stays) | fails |

use std::ops::ControlFlow;

use wasm_operator_sdk::EventType;

use crate::conditions::{MAPPINGS_READY, ROLE_OR_PROJECT_NOT_FOUND};
use crate::domain::api_error;
use crate::identity::Client;
use crate::identity::assignments::{Named, Target};
use crate::pass::{Flow, IDENTITY_WAIT, Pass};
use crate::types::FederationRoleAssignmentSpec;

/// Sets MappingsReady False `RoleOrProjectNotFound` and ends the pass for 30 s.
fn not_found(pass: &mut Pass<'_>, message: &str) -> Flow {
    pass.condition(MAPPINGS_READY, false, ROLE_OR_PROJECT_NOT_FOUND, message);
    Ok(ControlFlow::Break(Some(IDENTITY_WAIT)))
}

/// MappingsReady False `IdentityAPIError` "`what`: `e`", as the pass's error.
macro_rules! fail {
    ($pass:expr, $e:expr, $($what:tt)*) => {
        return Err(api_error($pass, MAPPINGS_READY, format!($($what)*), $e))
    };
}

/// Ensures every group and its role assignments.
pub(crate) fn run(pass: &mut Pass<'_>, client: &Client<'_>) -> Flow {
    let domain_id = pass.domain_id().to_owned();
    for spec in pass.backend.spec.groups.clone() {
        let name = &spec.name;
        let group = match client.group_by_name(name, &domain_id) {
            Ok(Some(group)) => group,
            Ok(None) => match client.create_group(name, &domain_id, &spec.description) {
                Ok(group) => {
                    let note = format!("Created group {name:?} in domain {domain_id}");
                    pass.event(EventType::Normal, "FederationGroupCreated", &note);
                    group
                }
                Err(e) => fail!(pass, e, "ensuring group {name:?}"),
            },
            Err(e) => fail!(pass, e, "ensuring group {name:?}"),
        };
        for assignment in &spec.role_assignments {
            if let ControlFlow::Break(after) = assign(pass, client, &group, assignment)? {
                return Ok(ControlFlow::Break(after));
            }
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// Grants one role to `group` on the backend's domain or on the named project.
///
/// DECISION: an assignment on neither a project nor the domain (admission refuses it)
/// grants nothing.
fn assign(
    pass: &mut Pass<'_>,
    client: &Client<'_>,
    group: &Named,
    spec: &FederationRoleAssignmentSpec,
) -> Flow {
    let role_name = &spec.role;
    let role = match client.role_by_name(role_name) {
        // Named as the spec names it in messages.
        Ok(Some(role)) => Named {
            name: role_name.clone(),
            ..role
        },
        Ok(None) => return not_found(pass, &format!("role {role_name:?} not found")),
        Err(e) => fail!(pass, e, "looking up role {role_name:?}"),
    };
    let domain_id = pass.domain_id().to_owned();
    let project = match (&spec.project, spec.domain) {
        (_, true) => {
            return grant(
                pass,
                client,
                Target::Domain(&domain_id),
                "domain",
                group,
                &role,
            );
        }
        (None, false) => return Ok(ControlFlow::Continue(())),
        (Some(project), false) => project,
    };
    let project_name = &project.name;
    let mut project_domain = domain_id;
    if !project.domain_name.is_empty() {
        let domain_name = &project.domain_name;
        project_domain = match client.domain_by_name(domain_name) {
            Ok(Some(domain)) => domain.id,
            Ok(None) => {
                let message =
                    format!("domain {domain_name:?} of project {project_name:?} not found");
                return not_found(pass, &message);
            }
            Err(e) => fail!(pass, e, "looking up domain {domain_name:?}"),
        };
    }
    let found = match client.project_by_name(project_name, &project_domain) {
        Ok(Some(found)) => found,
        Ok(None) => {
            let message = format!("project {project_name:?} not found in domain {project_domain}");
            return not_found(pass, &message);
        }
        Err(e) => fail!(pass, e, "looking up project {project_name:?}"),
    };
    let on = format!("project {project_name:?}");
    grant(pass, client, Target::Project(&found.id), &on, group, &role)
}

/// Grants `role` to `group` on `target` (named `on` in messages) unless it has it.
fn grant(
    pass: &mut Pass<'_>,
    client: &Client<'_>,
    target: Target<'_>,
    on: &str,
    group: &Named,
    role: &Named,
) -> Flow {
    let (role_name, group_name) = (&role.name, &group.name);
    match client.has_group_role(target, &group.id, &role.id) {
        Ok(true) => {}
        Ok(false) => {
            if let Err(e) = client.grant_group_role(target, &group.id, &role.id) {
                fail!(
                    pass,
                    e,
                    "assigning role {role_name:?} to group {group_name:?} on {on}"
                );
            }
        }
        Err(e) => fail!(
            pass,
            e,
            "checking role {role_name:?} of group {group_name:?} on {on}"
        ),
    }
    Ok(ControlFlow::Continue(()))
}

#[cfg(test)]
#[path = "groups_tests.rs"]
mod tests;
