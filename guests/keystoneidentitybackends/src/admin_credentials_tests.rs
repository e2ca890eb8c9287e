use std::ops::ControlFlow;

use serde_json::json;
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::Op;

use super::*;
use crate::identity::fake;
use crate::testing::{ADMIN_SECRET, World, cond, held, keystone, ldap_backend, merged, secret};

#[test]
fn the_backend_waits_for_the_admin_password() {
    let missing = |name: &str| {
        let message =
            format!("Admin password Secret openstack/{name} is missing or has no password key");
        Some(cond("False", "AdminSecretUnavailable", &message))
    };
    let wait = ControlFlow::Break(Some(SECRET_POLLING));
    let without_secret = || World::bare(ldap_backend()).with(keystone());
    let unnamed = json!({"spec": {"bootstrap": {"adminPasswordSecretRef": null}}});
    // (case, world, DomainReady, flow)
    let table = [
        ("no Secret", without_secret(), missing(ADMIN_SECRET), wait),
        (
            "no password key",
            without_secret().with(secret(ADMIN_SECRET, &[("pw", "x")])),
            missing(ADMIN_SECRET),
            wait,
        ),
        (
            "an empty password",
            without_secret().with(secret(ADMIN_SECRET, &[("password", "")])),
            missing(ADMIN_SECRET),
            wait,
        ),
        (
            "no Secret named",
            World::ldap().with(merged(keystone(), &unnamed)),
            missing(""),
            wait,
        ),
        (
            "the password is there",
            World::ldap(),
            None,
            ControlFlow::Continue(()),
        ),
    ];
    for (case, world, expected, flow) in table {
        let mut pass = world.pass();
        let result = run(&mut pass, &world.parent(), &world.cluster).expect("no error");
        let result = result.map_continue(|credentials| {
            // The Keystone's admin user with the Secret's password.
            let wanted = Credentials {
                user: fake::USER.into(),
                password: fake::PASSWORD.into(),
            };
            assert_eq!(credentials, wanted, "{case}");
        });
        assert_eq!(result, flow, "{case}");
        assert_eq!(held(&pass, "DomainReady"), expected, "{case}");
    }
}

#[test]
fn a_failed_read_of_the_admin_secret_fails_the_pass_naming_it() {
    let world = World::ldap();
    world
        .cluster
        .fail(Op::Get, ADMIN_SECRET, ApiError::Forbidden("no".into()), 1);
    let mut pass = world.pass();
    let error = run(&mut pass, &world.parent(), &world.cluster).expect_err("fails");
    assert_eq!(
        error.to_string(),
        "reading the admin password Secret openstack/keystone-admin: forbidden: no"
    );
    assert_eq!(held(&pass, "DomainReady"), None);
}

#[test]
fn the_password_never_shows_in_the_credentials_debug_text() {
    let world = World::ldap();
    let credentials = read(&world.cluster, &world.parent())
        .expect("no error")
        .expect("present");
    let text = format!("{credentials:?}");
    assert!(
        text.contains("admin") && !text.contains(fake::PASSWORD),
        "{text}"
    );
}
