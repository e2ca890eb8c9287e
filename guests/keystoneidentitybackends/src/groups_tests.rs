use std::ops::ControlFlow;

use serde_json::{Value, json};
use wasm_operator_sdk::http::Method;

use super::*;
use crate::identity::fake::FakeKeystone;
use crate::testing::{Said, World, cond, held, merged, oidc_backend};

/// Domain `domain-9` (the backend's), domain `shared` with project `tools`, project
/// `corp-admin` in domain-9, role `member`.
fn keystone() -> FakeKeystone {
    FakeKeystone::new()
        .with_domain("domain-9", "corp", "", true)
        .with_domain("domain-2", "shared", "", true)
        .with_role("role-member", "member")
        .with_project("project-1", "corp-admin", "domain-9")
        .with_project("project-2", "tools", "domain-2")
}

/// The OIDC backend with `groups`.
fn with_groups(groups: Value) -> World {
    World::of(merged(oidc_backend(), &json!({"spec": {"groups": groups}})))
        .with_keystone(keystone())
}

fn step(world: &World) -> (Flow, Option<Said>) {
    let mut pass = world.pass();
    pass.status_mut().domain_id = "domain-9".into();
    let flow = run(&mut pass, &world.client());
    (flow, held(&pass, "MappingsReady"))
}

fn admins(assignment: Value) -> Value {
    json!([{"name": "admins", "description": "Corp admins", "roleAssignments": [assignment]}])
}

#[test]
fn a_role_or_project_that_does_not_exist_holds_the_mappings_for_30_seconds() {
    let wait = ControlFlow::Break(Some(IDENTITY_WAIT));
    // (case, assignment, MappingsReady, flow)
    let table = [
        (
            "the role",
            json!({"role": "auditor", "domain": true}),
            Some(cond(
                "False",
                "RoleOrProjectNotFound",
                "role \"auditor\" not found",
            )),
            wait,
        ),
        (
            "the project's domain",
            json!({"role": "member", "project": {"name": "tools", "domainName": "ops"}}),
            Some(cond(
                "False",
                "RoleOrProjectNotFound",
                "domain \"ops\" of project \"tools\" not found",
            )),
            wait,
        ),
        (
            "the project in the backend's domain",
            json!({"role": "member", "project": {"name": "tools"}}),
            Some(cond(
                "False",
                "RoleOrProjectNotFound",
                "project \"tools\" not found in domain domain-9",
            )),
            wait,
        ),
        (
            "all there",
            json!({"role": "member", "project": {"name": "tools", "domainName": "shared"}}),
            None,
            ControlFlow::Continue(()),
        ),
    ];
    for (case, assignment, expected, flow) in table {
        let world = with_groups(admins(assignment));
        let (result, ready) = step(&world);
        assert_eq!(result.expect("no error"), flow, "{case}");
        assert_eq!(ready, expected, "{case}");
    }
}

#[test]
fn groups_are_created_in_the_backends_domain_and_granted_their_roles_once() {
    let world = with_groups(json!([
        {"name": "admins", "description": "Corp admins", "roleAssignments": [
            {"role": "member", "domain": true},
            {"role": "member", "project": {"name": "corp-admin"}},
            {"role": "member", "project": {"name": "tools", "domainName": "shared"}},
        ]},
        {"name": "users"},
    ]));
    let (flow, _) = step(&world);
    assert_eq!(flow.expect("no error"), ControlFlow::Continue(()));
    let admins = world.keystone.group("admins", "domain-9").expect("created");
    let users = world.keystone.group("users", "domain-9").expect("created");
    assert_eq!(admins["description"], "Corp admins");
    assert!(users.get("description").is_none());
    let group = admins["id"].as_str().expect("an id");
    assert_eq!(
        world.keystone.grants(),
        [
            format!("/domains/domain-9/groups/{group}/roles/role-member"),
            format!("/projects/project-1/groups/{group}/roles/role-member"),
            format!("/projects/project-2/groups/{group}/roles/role-member"),
        ]
    );
    let posts: Vec<_> = world
        .keystone
        .sent()
        .into_iter()
        .filter(|s| s.method == Method::Post && s.path == "/groups")
        .map(|s| s.body)
        .collect();
    assert_eq!(
        posts,
        [
            Some(
                json!({"group": {"name": "admins", "domain_id": "domain-9", "description": "Corp admins"}})
            ),
            Some(json!({"group": {"name": "users", "domain_id": "domain-9"}})),
        ]
    );
    let created: Vec<_> = world
        .events()
        .into_iter()
        .map(|(r, n)| format!("{r}: {n}"))
        .collect();
    assert_eq!(
        created,
        [
            "FederationGroupCreated: Created group \"admins\" in domain domain-9",
            "FederationGroupCreated: Created group \"users\" in domain domain-9",
        ]
    );
    // The next pass reads and changes nothing.
    world.keystone.clear();
    assert_eq!(step(&world).0.expect("no error"), ControlFlow::Continue(()));
    assert!(
        world.keystone.calls().iter().all(|c| c.starts_with("GET ")),
        "{:?}",
        world.keystone.calls()
    );
    assert_eq!(world.events().len(), 2);
    assert_eq!(world.keystone.grants().len(), 3);
}

#[test]
fn a_failed_call_sets_mappings_ready_identity_api_error() {
    let on_domain = json!({"role": "member", "domain": true});
    let on_project =
        json!({"role": "member", "project": {"name": "tools", "domainName": "shared"}});
    // (assignment, failing call, message)
    let table = [
        (
            &on_domain,
            (Method::Get, "/groups"),
            "ensuring group \"admins\": GET /groups?name=admins&domain_id=domain-9: HTTP 500",
        ),
        (
            &on_domain,
            (Method::Post, "/groups"),
            "ensuring group \"admins\": POST /groups: HTTP 500",
        ),
        (
            &on_domain,
            (Method::Get, "/roles"),
            "looking up role \"member\": GET /roles?name=member: HTTP 500",
        ),
        (
            &on_project,
            (Method::Get, "/domains?name=shared"),
            "looking up domain \"shared\": GET /domains?name=shared: HTTP 500",
        ),
        (
            &on_project,
            (Method::Get, "/projects?"),
            "looking up project \"tools\": GET /projects?name=tools&domain_id=domain-2: HTTP 500",
        ),
        (
            &on_domain,
            (Method::Get, "/domains/domain-9/groups"),
            "checking role \"member\" of group \"admins\" on domain: GET /domains/domain-9/groups/group-0001/roles/role-member: HTTP 500",
        ),
        (
            &on_domain,
            (Method::Put, "/domains/domain-9/groups"),
            "assigning role \"member\" to group \"admins\" on domain: PUT /domains/domain-9/groups/group-0001/roles/role-member: HTTP 500",
        ),
        (
            &on_project,
            (Method::Get, "/projects/project-2/groups"),
            "checking role \"member\" of group \"admins\" on project \"tools\": GET /projects/project-2/groups/group-0001/roles/role-member: HTTP 500",
        ),
        (
            &on_project,
            (Method::Put, "/projects/project-2/groups"),
            "assigning role \"member\" to group \"admins\" on project \"tools\": PUT /projects/project-2/groups/group-0001/roles/role-member: HTTP 500",
        ),
        // The valid row: nothing fails (no HEAD is ever sent).
        (&on_project, (Method::Head, "/"), ""),
    ];
    for (assignment, (method, prefix), message) in table {
        let world = with_groups(admins(assignment.clone()));
        world.keystone.fail(method, prefix, 500);
        let (flow, ready) = step(&world);
        if message.is_empty() {
            assert_eq!(flow.expect("no error"), ControlFlow::Continue(()));
            assert_eq!(ready, None, "MappingsReady is set by the caller");
            assert_eq!(world.keystone.grants().len(), 1);
            continue;
        }
        assert_eq!(flow.expect_err("fails").to_string(), message);
        assert_eq!(ready, Some(cond("False", "IdentityAPIError", message)));
    }
}
