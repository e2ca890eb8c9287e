use std::ops::ControlFlow;

use serde_json::{Value, json};
use wasm_operator_sdk::http::Method;

use super::*;
use crate::identity::fake::FakeKeystone;
use crate::testing::{ISSUER, Said, World, cond, held, merged, oidc_backend, saml_backend};

/// The backend's domain `domain-9` exists; the role `member` too.
fn keystone() -> FakeKeystone {
    FakeKeystone::new()
        .with_domain("domain-9", "corp", "Corp directory", true)
        .with_role("role-member", "member")
}

/// `backend` against `identity`, its domain known.
fn world(backend: Value, identity: FakeKeystone) -> World {
    World::of(backend).with_keystone(identity)
}

/// Runs step 6 on a pass whose status.domainID is `domain-9`; the flow and the pass's
/// (FederationObjectsReady, MappingsReady).
fn step(world: &World) -> (Flow, [Option<Said>; 2]) {
    let mut pass = world.pass();
    pass.status_mut().domain_id = "domain-9".into();
    let flow = run(&mut pass, &world.client());
    let held = [
        held(&pass, "FederationObjectsReady"),
        held(&pass, "MappingsReady"),
    ];
    (flow, held)
}

fn bodies(world: &World, method: Method) -> Vec<(String, Value)> {
    world
        .keystone
        .sent()
        .into_iter()
        .filter(|s| s.method == method)
        .map(|s| (s.path, s.body.unwrap_or(Value::Null)))
        .collect()
}

const APPLIED: &str = "mapping \"corp-mapping\", 0 group(s), and role assignments applied";

#[test]
fn without_mapping_rules_nothing_is_registered_and_both_conditions_say_why() {
    let world = world(
        merged(oidc_backend(), &json!({"spec": {"mappings": null}})),
        keystone(),
    );
    let (flow, [objects, mappings]) = step(&world);
    assert_eq!(flow.expect("no error"), ControlFlow::Continue(()));
    let why = "spec.mappings is empty: keystone requires at least one mapping rule before the federation protocol can be provisioned";
    assert_eq!(objects, Some(cond("False", "NoMappingRules", why)));
    assert_eq!(mappings, Some(cond("False", "NoMappingRules", why)));
    assert!(world.keystone.requests().is_empty());
}

#[test]
fn a_first_pass_registers_identity_provider_mapping_and_protocol_in_that_order() {
    let world = world(oidc_backend(), keystone());
    let (flow, [objects, mappings]) = step(&world);
    assert_eq!(flow.expect("no error"), ControlFlow::Continue(()));
    assert_eq!(
        world.keystone.calls(),
        [
            "GET /OS-FEDERATION/identity_providers/corp",
            "PUT /OS-FEDERATION/identity_providers/corp",
            "GET /OS-FEDERATION/mappings/corp-mapping",
            "PUT /OS-FEDERATION/mappings/corp-mapping",
            "GET /OS-FEDERATION/identity_providers/corp/protocols/openid",
            "PUT /OS-FEDERATION/identity_providers/corp/protocols/openid",
        ]
    );
    assert_eq!(
        bodies(&world, Method::Put),
        [
            (
                "/OS-FEDERATION/identity_providers/corp".to_owned(),
                json!({"identity_provider": {"domain_id": "domain-9",
                    "description": "Corp directory", "enabled": true, "remote_ids": [ISSUER]}})
            ),
            (
                "/OS-FEDERATION/mappings/corp-mapping".to_owned(),
                json!({"mapping": {"rules": [{"local": [{"user": {"name": "{0}"}}],
                    "remote": [{"type": "HTTP_OIDC_PREFERRED_USERNAME"}]}]}})
            ),
            (
                "/OS-FEDERATION/identity_providers/corp/protocols/openid".to_owned(),
                json!({"protocol": {"mapping_id": "corp-mapping"}})
            ),
        ]
    );
    assert_eq!(
        objects,
        Some(cond(
            "True",
            "FederationObjectsProvisioned",
            "identity provider \"corp\" and protocol \"openid\" provisioned"
        ))
    );
    assert_eq!(mappings, Some(cond("True", "MappingsApplied", APPLIED)));
    assert_eq!(
        world.events(),
        [
            (
                "IdentityProviderCreated".to_owned(),
                format!("Created identity provider \"corp\" (remote ID {ISSUER})")
            ),
            (
                "MappingCreated".to_owned(),
                "Created federation mapping \"corp-mapping\" (1 rules)".to_owned()
            ),
            (
                "ProtocolCreated".to_owned(),
                "Created protocol \"openid\" on identity provider \"corp\" (mapping corp-mapping)"
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn a_converged_pass_only_reads_the_three_objects() {
    let world = world(oidc_backend(), keystone());
    assert_eq!(
        step(&world).0.expect("registered"),
        ControlFlow::Continue(())
    );
    world.keystone.clear();
    world.cluster.clear_calls();
    let (flow, [objects, mappings]) = step(&world);
    assert_eq!(flow.expect("no error"), ControlFlow::Continue(()));
    assert_eq!(
        world.keystone.requests(),
        [
            "POST /auth/tokens",
            "GET /OS-FEDERATION/identity_providers/corp",
            "POST /auth/tokens",
            "GET /OS-FEDERATION/mappings/corp-mapping",
            "POST /auth/tokens",
            "GET /OS-FEDERATION/identity_providers/corp/protocols/openid",
        ]
    );
    assert!(world.events().is_empty());
    assert_eq!(objects.map(|c| c.0), Some("True".to_owned()));
    assert_eq!(mappings.map(|c| c.0), Some("True".to_owned()));
}

#[test]
fn a_saml_identity_provider_is_registered_with_the_entity_id_under_protocol_mapped() {
    let named = json!({"spec": {"saml": {"identityProviderName": "shib", "protocolID": "saml2"}}});
    let world = world(merged(saml_backend(), &named), keystone());
    assert_eq!(
        step(&world).0.expect("registered"),
        ControlFlow::Continue(())
    );
    let idp = world.keystone.idp("shib").expect("registered");
    assert_eq!(idp["remote_ids"], json!([ISSUER]));
    assert_eq!(
        world.keystone.protocol("shib", "saml2").as_deref(),
        Some("shib-mapping")
    );
    let default = World::of(saml_backend()).with_keystone(keystone());
    assert_eq!(
        step(&default).0.expect("registered"),
        ControlFlow::Continue(())
    );
    assert_eq!(
        default.keystone.protocol("corp", "mapped").as_deref(),
        Some("corp-mapping")
    );
}

#[test]
fn only_what_drifted_is_patched() {
    let rules = json!([{"local": [{"user": {"name": "{0}"}}],
                        "remote": [{"type": "HTTP_OIDC_PREFERRED_USERNAME"}]}]);
    let registered = || {
        FakeKeystone::new()
            .with_domain("domain-9", "corp", "Corp directory", true)
            .with_idp(
                "corp",
                json!({"id": "corp", "domain_id": "domain-9", "description": "Corp directory",
                       "enabled": true, "remote_ids": [ISSUER]}),
            )
    };
    // (case, the stored identity provider's drift, stored rules, stored protocol, PATCHes)
    let table = [
        (
            "the identity provider disabled, described otherwise, another remote id",
            json!({"enabled": false, "description": null, "remote_ids": ["https://old"]}),
            rules.clone(),
            "corp-mapping",
            vec![(
                "/OS-FEDERATION/identity_providers/corp",
                json!({"identity_provider": {"description": "Corp directory", "enabled": true,
                                             "remote_ids": [ISSUER]}}),
            )],
        ),
        (
            "the mapping's rules changed",
            json!({}),
            json!([{"local": [], "remote": [{"type": "X"}]}]),
            "corp-mapping",
            vec![(
                "/OS-FEDERATION/mappings/corp-mapping",
                json!({"mapping": {"rules": rules}}),
            )],
        ),
        (
            "the protocol bound to another mapping",
            json!({}),
            rules.clone(),
            "other",
            vec![(
                "/OS-FEDERATION/identity_providers/corp/protocols/openid",
                json!({"protocol": {"mapping_id": "corp-mapping"}}),
            )],
        ),
        (
            "nothing drifted",
            json!({}),
            rules.clone(),
            "corp-mapping",
            vec![],
        ),
    ];
    for (case, idp_drift, stored_rules, bound, patches) in table {
        let world = world(oidc_backend(), registered());
        // Seed the mapping and protocol through the client, then drift the IdP.
        let client = world.client();
        client
            .create_mapping("corp-mapping", &stored_rules)
            .expect("seeded");
        if bound != "corp-mapping" {
            client.create_mapping(bound, &stored_rules).expect("seeded");
        }
        client
            .create_protocol("corp", "openid", bound)
            .expect("seeded");
        let drift: std::collections::BTreeMap<String, Value> =
            serde_json::from_value(idp_drift).expect("an object");
        if !drift.is_empty() {
            let mut idp = world.keystone.idp("corp").expect("seeded");
            for (k, v) in drift {
                idp[k] = v;
            }
            world.keystone.replace_idp("corp", idp);
        }
        world.keystone.clear();
        let (flow, _) = step(&world);
        assert_eq!(flow.expect("no error"), ControlFlow::Continue(()), "{case}");
        let expected: Vec<(String, Value)> = patches
            .into_iter()
            .map(|(p, b)| (p.to_owned(), b))
            .collect();
        assert_eq!(bodies(&world, Method::Patch), expected, "{case}");
        assert!(bodies(&world, Method::Put).is_empty(), "{case}");
        let updated = world.events().iter().any(|(r, _)| r == "MappingUpdated");
        assert_eq!(updated, case == "the mapping's rules changed", "{case}");
    }
}

#[test]
fn a_failed_call_sets_identity_api_error_on_the_condition_it_belongs_to() {
    // (failing call, condition [FederationObjectsReady, MappingsReady], message)
    let idp = "/OS-FEDERATION/identity_providers/corp";
    let mapping = "/OS-FEDERATION/mappings/corp-mapping";
    let protocol = "/OS-FEDERATION/identity_providers/corp/protocols";
    let table = [
        (
            (Method::Get, idp),
            0,
            "looking up identity provider \"corp\": GET /OS-FEDERATION/identity_providers/corp: HTTP 500",
        ),
        (
            (Method::Put, idp),
            0,
            "creating identity provider \"corp\": PUT /OS-FEDERATION/identity_providers/corp: HTTP 500",
        ),
        (
            (Method::Get, mapping),
            1,
            "looking up mapping \"corp-mapping\": GET /OS-FEDERATION/mappings/corp-mapping: HTTP 500",
        ),
        (
            (Method::Put, mapping),
            1,
            "creating mapping \"corp-mapping\": PUT /OS-FEDERATION/mappings/corp-mapping: HTTP 500",
        ),
        (
            (Method::Get, protocol),
            0,
            "looking up protocol \"openid\": GET /OS-FEDERATION/identity_providers/corp/protocols/openid: HTTP 500",
        ),
        (
            (Method::Put, protocol),
            0,
            "creating protocol \"openid\": PUT /OS-FEDERATION/identity_providers/corp/protocols/openid: HTTP 500",
        ),
        // The valid row: nothing fails.
        ((Method::Head, "/"), 0, ""),
    ];
    for ((method, prefix), which, message) in table {
        let identity = keystone();
        identity.fail(method, prefix, 500);
        let world = world(oidc_backend(), identity);
        let (flow, conditions) = step(&world);
        if message.is_empty() {
            assert_eq!(flow.expect("no error"), ControlFlow::Continue(()));
            assert!(
                conditions
                    .iter()
                    .all(|c| c.as_ref().is_some_and(|c| c.0 == "True"))
            );
            continue;
        }
        assert_eq!(flow.expect_err("fails").to_string(), message, "{message}");
        assert_eq!(
            conditions[which],
            Some(cond("False", "IdentityAPIError", message)),
            "{message}"
        );
    }
}
