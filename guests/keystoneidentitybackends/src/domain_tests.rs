use std::ops::ControlFlow;

use serde_json::json;
use wasm_operator_sdk::http::Method;

use super::*;
use crate::identity::fake::FakeKeystone;
use crate::testing::{Said, World, cond, held, ldap_backend, merged};

const FOREIGN: &str = "domain \"corp\" already exists (id domain-9) but was not created by this backend; use domain.mode Adopt to attach to it";

fn adopting() -> serde_json::Value {
    merged(
        ldap_backend(),
        &json!({"spec": {"domain": {"mode": "Adopt"}}}),
    )
}

/// Runs step 5 with `domain_id` in the status; the flow, DomainReady and status.domainID.
fn step(world: &World, domain_id: &str) -> (Flow, Option<Said>, String) {
    let mut pass = world.pass();
    pass.status_mut().domain_id = domain_id.into();
    let flow = run(&mut pass, &world.client());
    let ready = held(&pass, "DomainReady");
    (flow, ready, pass.domain_id().to_owned())
}

fn corp(enabled: bool, description: &str) -> FakeKeystone {
    FakeKeystone::new().with_domain("domain-9", "corp", description, enabled)
}

#[test]
fn domain_ready_follows_the_mode_and_the_domain_keystone_holds() {
    // (case, backend, identity API, status.domainID, DomainReady, flow)
    let table = [
        (
            "Adopt, no such domain",
            adopting(),
            FakeKeystone::new(),
            "",
            cond(
                "False",
                "DomainNotFound",
                "domain \"corp\" not found; Adopt mode never creates domains",
            ),
            Some(IDENTITY_WAIT),
        ),
        (
            "Manage, a domain of that name not created by the backend",
            ldap_backend(),
            corp(true, "Corp directory"),
            "",
            cond("False", "DomainAlreadyExists", FOREIGN),
            None,
        ),
        (
            "Manage, a domain of that name with another id",
            ldap_backend(),
            corp(true, "Corp directory"),
            "domain-1",
            cond("False", "DomainAlreadyExists", FOREIGN),
            None,
        ),
        (
            "Manage, its own domain",
            ldap_backend(),
            corp(true, "Corp directory"),
            "domain-9",
            cond(
                "True",
                "DomainProvisioned",
                "domain \"corp\" provisioned (id domain-9)",
            ),
            None,
        ),
    ];
    for (case, backend, keystone, domain_id, expected, after) in table {
        let world = World::of(backend).with_keystone(keystone);
        let (flow, ready, _) = step(&world, domain_id);
        let flow = flow.expect("no error");
        let expected_flow = match after {
            Some(after) => ControlFlow::Break(Some(after)),
            None => ControlFlow::Continue(()),
        };
        assert_eq!(flow, expected_flow, "{case}");
        assert_eq!(ready, Some(expected), "{case}");
        assert_eq!(world.keystone.calls(), ["GET /domains?name=corp"], "{case}");
        assert!(world.events().is_empty(), "{case}: {:?}", world.events());
    }
}

#[test]
fn an_adopted_domain_is_recorded_never_modified_and_announced_once() {
    let world = World::of(adopting()).with_keystone(corp(false, "theirs"));
    let (flow, ready, id) = step(&world, "");
    assert_eq!(flow.expect("no error"), ControlFlow::Continue(()));
    let adopted = "domain \"corp\" adopted (id domain-9)";
    assert_eq!(ready, Some(cond("True", "DomainAdopted", adopted)));
    assert_eq!(id, "domain-9");
    assert_eq!(
        world.events(),
        [(
            "DomainAdopted".into(),
            "Adopted pre-existing domain \"corp\" (id domain-9)".into()
        )]
    );
    // Disabled and described otherwise, it is left as it is.
    assert_eq!(world.keystone.calls(), ["GET /domains?name=corp"]);
    let (_, ready, _) = step(&world, "domain-9");
    assert_eq!(ready, Some(cond("True", "DomainAdopted", adopted)));
    assert_eq!(world.events().len(), 1, "announced once");
}

#[test]
fn a_managed_domain_is_created_enabled_with_its_description() {
    let world = World::ldap();
    let (flow, ready, id) = step(&world, "");
    assert_eq!(flow.expect("no error"), ControlFlow::Continue(()));
    let created = world.keystone.domain("corp").expect("created");
    let id_created = created["id"].as_str().expect("an id").to_owned();
    assert_eq!(id, id_created);
    let message = format!("domain \"corp\" provisioned (id {id})");
    assert_eq!(ready, Some(cond("True", "DomainProvisioned", &message)));
    assert_eq!(
        world.events(),
        [(
            "DomainCreated".into(),
            format!("Created domain \"corp\" (id {id})")
        )]
    );
    let sent = world.keystone.sent();
    let post = sent
        .iter()
        .find(|s| s.method == Method::Post && s.path == "/domains");
    assert_eq!(
        post.and_then(|p| p.body.clone()),
        Some(json!({"domain": {"name": "corp", "description": "Corp directory", "enabled": true}}))
    );
}

#[test]
fn only_the_drifted_description_and_enabled_flag_of_a_managed_domain_are_patched() {
    // (case, enabled, description, PATCH body)
    let table = [
        ("no drift", true, "Corp directory", None),
        (
            "disabled",
            false,
            "Corp directory",
            Some(json!({"domain": {"enabled": true}})),
        ),
        (
            "described otherwise",
            true,
            "old",
            Some(json!({"domain": {"description": "Corp directory"}})),
        ),
        (
            "both",
            false,
            "",
            Some(json!({"domain": {"description": "Corp directory", "enabled": true}})),
        ),
    ];
    for (case, enabled, description, patch) in table {
        let world = World::ldap().with_keystone(corp(enabled, description));
        let (flow, ready, _) = step(&world, "domain-9");
        assert_eq!(flow.expect("no error"), ControlFlow::Continue(()), "{case}");
        let provisioned = "domain \"corp\" provisioned (id domain-9)";
        assert_eq!(
            ready,
            Some(cond("True", "DomainProvisioned", provisioned)),
            "{case}"
        );
        let patches: Vec<_> = world
            .keystone
            .sent()
            .into_iter()
            .filter(|s| s.method == Method::Patch)
            .map(|s| (s.path, s.body))
            .collect();
        let expected: Vec<_> = patch
            .into_iter()
            .map(|b| ("/domains/domain-9".to_owned(), Some(b)))
            .collect();
        assert_eq!(patches, expected, "{case}");
        let stored = world.keystone.domain("corp").expect("kept");
        assert_eq!(
            (stored["enabled"].clone(), stored["description"].clone()),
            (json!(true), json!("Corp directory")),
            "{case}"
        );
    }
}

#[test]
fn a_failed_identity_call_sets_identity_api_error_and_fails_the_pass() {
    // (case, identity API, failing call, status.domainID, message; None: no failure)
    let table = [
        (
            "the lookup",
            FakeKeystone::new(),
            Some((Method::Get, "/domains")),
            "",
            Some("looking up domain \"corp\": GET /domains?name=corp: HTTP 503"),
        ),
        (
            "the create",
            FakeKeystone::new(),
            Some((Method::Post, "/domains")),
            "",
            Some("creating domain \"corp\": POST /domains: HTTP 503"),
        ),
        (
            "the patch",
            corp(false, "Corp directory"),
            Some((Method::Patch, "/domains")),
            "domain-9",
            Some("updating domain \"corp\": PATCH /domains/domain-9: HTTP 503"),
        ),
        (
            "the token",
            FakeKeystone::new(),
            Some((Method::Post, "/auth/tokens")),
            "",
            Some("looking up domain \"corp\": POST /auth/tokens: HTTP 503"),
        ),
        (
            "nothing fails",
            corp(false, "Corp directory"),
            None,
            "domain-9",
            None,
        ),
    ];
    for (case, keystone, failing, domain_id, message) in table {
        if let Some((method, prefix)) = failing {
            keystone.fail(method, prefix, 503);
        }
        let world = World::ldap().with_keystone(keystone);
        let (flow, ready, _) = step(&world, domain_id);
        let Some(message) = message else {
            assert_eq!(flow.expect("no error"), ControlFlow::Continue(()), "{case}");
            assert_eq!(
                ready.map(|r| r.1).as_deref(),
                Some("DomainProvisioned"),
                "{case}"
            );
            continue;
        };
        let error = flow.expect_err("fails");
        assert_eq!(error.to_string(), message, "{case}");
        assert_eq!(
            ready,
            Some(cond("False", "IdentityAPIError", message)),
            "{case}"
        );
    }
}

#[test]
fn a_true_domain_ready_survives_an_identity_api_error() {
    let world = World::ldap().with_keystone(corp(true, "Corp directory"));
    let mut pass = world.pass();
    pass.status_mut().domain_id = "domain-9".into();
    assert_eq!(
        run(&mut pass, &world.client()).expect("provisioned"),
        ControlFlow::Continue(())
    );
    world.keystone.fail(Method::Get, "/domains", 500);
    let error = run(&mut pass, &world.client()).expect_err("fails");
    assert!(error.to_string().ends_with("HTTP 500"), "{error}");
    assert_eq!(
        held(&pass, "DomainReady"),
        Some(cond(
            "True",
            "DomainProvisioned",
            "domain \"corp\" provisioned (id domain-9)"
        ))
    );
}
