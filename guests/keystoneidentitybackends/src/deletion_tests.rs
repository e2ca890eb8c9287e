use serde_json::{Value, json};
use wasm_operator_sdk::http::Method;
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome};

use super::*;
use crate::identity::fake::FakeKeystone;
use crate::testing::{
    PROJECTION_SECRET, World, deployment, keystone, ldap_backend, merged, oidc_backend, secret,
};
use crate::types::FINALIZER;

/// `backend` deleted, with status.domainID `domain-9` and `domain` merged into its
/// spec.domain.
fn deleted(backend: Value, domain: Value) -> Value {
    merged(
        backend,
        &json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {"domain": domain},
                "status": {"domainID": "domain-9"}}),
    )
}

/// The managed domain `corp` (`domain-9`), enabled.
fn corp() -> FakeKeystone {
    FakeKeystone::new().with_domain("domain-9", "corp", "", true)
}

fn released(world: &World) -> bool {
    !world
        .stored()
        .metadata
        .finalizers
        .unwrap_or_default()
        .iter()
        .any(|f| f == FINALIZER)
}

const DELETE: &str = "Delete";

#[test]
fn the_domain_is_disabled_then_deleted_only_when_managed_with_policy_delete_and_known() {
    let deleting = json!({"mode": "Manage", "deletionPolicy": DELETE});
    // (case, spec.domain, status.domainID, requests, events)
    let table = [
        (
            "Manage, Delete, domainID known",
            deleting.clone(),
            "domain-9",
            vec!["PATCH /domains/domain-9", "DELETE /domains/domain-9"],
            vec![
                ("DomainDisabled", "Disabled domain \"corp\" before deletion"),
                ("DomainDeleted", "Deleted domain \"corp\" (id domain-9)"),
            ],
        ),
        (
            "Manage, Retain",
            json!({"deletionPolicy": "Retain"}),
            "domain-9",
            vec![],
            vec![],
        ),
        (
            "Adopt, Delete",
            json!({"mode": "Adopt", "deletionPolicy": DELETE}),
            "domain-9",
            vec![],
            vec![],
        ),
        (
            "Manage, Delete, no domainID",
            deleting.clone(),
            "",
            vec![],
            vec![],
        ),
    ];
    for (case, domain, domain_id, requests, events) in table {
        let backend = merged(
            deleted(ldap_backend(), domain),
            &json!({"status": {"domainID": domain_id}}),
        );
        let world = World::of(backend).with_keystone(corp());
        assert_eq!(world.run(), Ok(Outcome::done()), "{case}");
        assert_eq!(world.keystone.calls(), requests, "{case}");
        let events: Vec<(String, String)> = events
            .into_iter()
            .map(|(r, n)| (r.into(), n.into()))
            .collect();
        assert_eq!(world.events(), events, "{case}");
        assert!(released(&world), "{case}");
        let patch = world
            .keystone
            .sent()
            .into_iter()
            .find(|s| s.method == Method::Patch);
        if let Some(patch) = patch {
            assert_eq!(
                patch.body,
                Some(json!({"domain": {"enabled": false}})),
                "{case}"
            );
            assert!(world.keystone.domain("corp").is_none(), "{case}");
        }
        // No status is written while deleting.
        let writes: Vec<String> = world.cluster.write_log();
        assert_eq!(
            writes,
            ["patch KeystoneIdentityBackend openstack/corp"],
            "{case}"
        );
    }
}

#[test]
fn a_failed_disable_or_delete_warns_keeps_the_finalizer_and_retries_in_30_seconds() {
    // (failing call, events)
    let table = [
        (
            Method::Patch,
            vec![(
                "DomainDeleteFailed",
                "Disabling domain \"corp\" failed: PATCH /domains/domain-9: HTTP 500",
            )],
        ),
        (
            Method::Delete,
            vec![
                ("DomainDisabled", "Disabled domain \"corp\" before deletion"),
                (
                    "DomainDeleteFailed",
                    "Deleting domain \"corp\" failed: DELETE /domains/domain-9: HTTP 500",
                ),
            ],
        ),
        // The valid row: nothing fails (no HEAD is ever sent).
        (
            Method::Head,
            vec![
                ("DomainDisabled", "Disabled domain \"corp\" before deletion"),
                ("DomainDeleted", "Deleted domain \"corp\" (id domain-9)"),
            ],
        ),
    ];
    for (method, events) in table {
        let world = World::of(deleted(ldap_backend(), json!({"deletionPolicy": DELETE})))
            .with_keystone(corp());
        world.keystone.fail(method, "/domains/domain-9", 500);
        let fails = method != Method::Head;
        let outcome = if fails {
            Outcome::requeue(IDENTITY_WAIT)
        } else {
            Outcome::done()
        };
        assert_eq!(world.run(), Ok(outcome), "{method:?}");
        let events: Vec<(String, String)> = events
            .into_iter()
            .map(|(r, n)| (r.into(), n.into()))
            .collect();
        assert_eq!(world.events(), events, "{method:?}");
        let last = world.cluster.events().last().map(|(_, e)| e.event_type);
        let warned = last == Some(wasm_operator_sdk::EventType::Warning);
        assert_eq!(warned, fails, "{method:?}");
        assert_eq!(released(&world), !fails, "{method:?}");
    }
}

#[test]
fn a_domain_already_gone_counts_as_deleted() {
    let world = World::of(deleted(ldap_backend(), json!({"deletionPolicy": DELETE})));
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.keystone.calls(), ["PATCH /domains/domain-9"]);
    assert!(world.events().is_empty());
    assert!(released(&world));
}

#[test]
fn without_its_keystone_the_backend_is_released_at_once() {
    let world = World::bare(deleted(ldap_backend(), json!({"deletionPolicy": DELETE})));
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert!(released(&world));
    assert!(world.keystone.requests().is_empty());
}

#[test]
fn the_teardown_waits_while_the_deployment_still_runs_the_config() {
    let conf = secret(PROJECTION_SECRET, &[("keystone.corp.conf", "[ldap]")]);
    let rolling = merged(
        deployment("domains"),
        &json!({"status": {"updatedReplicas": 1}}),
    );
    for (case, deployment) in [
        ("projected", deployment("domains")),
        ("rolling out", rolling),
    ] {
        let world = World::of(deleted(ldap_backend(), json!({"deletionPolicy": DELETE})))
            .with_keystone(corp())
            .with(deployment)
            .with(conf.clone());
        assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)), "{case}");
        assert!(world.keystone.requests().is_empty(), "{case}");
        assert!(!released(&world), "{case}");
        assert!(world.cluster.writes().is_empty(), "{case}");
    }
    // Dropped from the Secret the Deployment now mounts: the teardown runs.
    let world = World::of(deleted(ldap_backend(), json!({"deletionPolicy": DELETE})))
        .with_keystone(corp())
        .with(deployment("domains"))
        .with(secret(
            PROJECTION_SECRET,
            &[("keystone.other.conf", "[ldap]")],
        ));
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert!(released(&world));
}

#[test]
fn a_failed_read_of_the_keystone_fails_the_pass() {
    let world = World::of(deleted(ldap_backend(), json!({})));
    world
        .cluster
        .fail(Op::Get, "keystone", ApiError::Unavailable("etcd".into()), 1);
    let error = world.run().expect_err("fails");
    assert_eq!(
        error.to_string(),
        "fetching referenced Keystone openstack/keystone: unavailable: etcd"
    );
    assert!(!released(&world));
}

#[test]
fn without_the_admin_secret_the_objects_are_retained_loudly_and_the_backend_released() {
    let backend = deleted(oidc_backend(), json!({"deletionPolicy": DELETE}));
    let world = World::bare(backend).with(keystone()).with_keystone(corp());
    assert_eq!(world.run(), Ok(Outcome::done()));
    let why = "admin password Secret is unavailable (Secret openstack/keystone-admin is missing or has no password key)";
    assert_eq!(
        world.events(),
        [
            (
                "FederationTeardownFailed".to_owned(),
                format!("Retaining federation objects of \"corp\": {why}")
            ),
            (
                "DomainDeleteFailed".to_owned(),
                format!("Retaining domain \"corp\": {why}")
            ),
        ]
    );
    assert!(world.keystone.requests().is_empty());
    assert!(world.keystone.domain("corp").is_some());
    assert!(released(&world));
}

/// The OIDC backend's identity provider, mapping and protocol, registered.
fn registered(world: &World) {
    let client = world.client();
    let fields = crate::identity::federation::IdentityProviderFields {
        domain_id: Some("domain-9".into()),
        ..Default::default()
    };
    client
        .create_identity_provider("corp", &fields)
        .expect("seeded");
    client
        .create_mapping(
            "corp-mapping",
            &json!([{"local": [], "remote": [{"type": "A"}]}]),
        )
        .expect("seeded");
    client
        .create_protocol("corp", "openid", "corp-mapping")
        .expect("seeded");
    world.keystone.clear();
}

#[test]
fn federation_objects_are_torn_down_protocol_mapping_identity_provider_before_the_domain() {
    let world =
        World::of(deleted(oidc_backend(), json!({"deletionPolicy": DELETE}))).with_keystone(corp());
    registered(&world);
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(
        world.keystone.calls(),
        [
            "DELETE /OS-FEDERATION/identity_providers/corp/protocols/openid",
            "DELETE /OS-FEDERATION/mappings/corp-mapping",
            "DELETE /OS-FEDERATION/identity_providers/corp",
            "PATCH /domains/domain-9",
            "DELETE /domains/domain-9",
        ]
    );
    assert_eq!(
        world.events()[0],
        (
            "FederationObjectsDeleted".to_owned(),
            "Deleted protocol \"openid\", mapping \"corp-mapping\", and identity provider \"corp\""
                .to_owned()
        )
    );
    assert!(
        world.keystone.idp("corp").is_none() && world.keystone.mapping("corp-mapping").is_none()
    );
    assert!(released(&world));
}

#[test]
fn a_failed_federation_delete_warns_and_retries_before_touching_the_domain() {
    // (failing call, note)
    let table = [
        (
            "/OS-FEDERATION/identity_providers/corp/protocols",
            "Deleting protocol \"openid\" failed: DELETE /OS-FEDERATION/identity_providers/corp/protocols/openid: HTTP 500",
        ),
        (
            "/OS-FEDERATION/mappings",
            "Deleting mapping \"corp-mapping\" failed: DELETE /OS-FEDERATION/mappings/corp-mapping: HTTP 500",
        ),
        (
            "/OS-FEDERATION/identity_providers/corp$",
            "Deleting identity provider \"corp\" failed: DELETE /OS-FEDERATION/identity_providers/corp: HTTP 500",
        ),
        // The valid row: nothing fails.
        ("/nothing", ""),
    ];
    for (prefix, note) in table {
        let world = World::of(deleted(oidc_backend(), json!({"deletionPolicy": DELETE})))
            .with_keystone(corp());
        registered(&world);
        world.keystone.fail(Method::Delete, prefix, 500);
        if note.is_empty() {
            assert_eq!(world.run(), Ok(Outcome::done()));
            assert_eq!(world.events()[0].0, "FederationObjectsDeleted");
            assert!(world.keystone.domain("corp").is_none() && released(&world));
            continue;
        }
        assert_eq!(world.run(), Ok(Outcome::requeue(IDENTITY_WAIT)), "{prefix}");
        assert_eq!(
            world.events(),
            [("FederationTeardownFailed".to_owned(), note.to_owned())]
        );
        assert!(world.keystone.domain("corp").is_some(), "{prefix}");
        assert!(!released(&world), "{prefix}");
    }
    // Already gone: the teardown succeeds.
    let world = World::of(deleted(oidc_backend(), json!({}))).with_keystone(corp());
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.events().len(), 1);
    assert!(released(&world));
}

#[test]
fn a_retained_ldap_domain_needs_no_admin_secret_to_release_the_backend() {
    let world = World::of(deleted(ldap_backend(), json!({"deletionPolicy": "Retain"})));
    world.cluster.fail(
        Op::Get,
        crate::testing::ADMIN_SECRET,
        ApiError::Forbidden("not read".into()),
        1,
    );
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert!(released(&world));
    let read = world.cluster.calls().iter().any(|c| {
        c.object()
            .is_some_and(|o| o.name == crate::testing::ADMIN_SECRET)
    });
    assert!(!read, "the admin Secret is not read");
}
