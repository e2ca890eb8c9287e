use std::time::Duration;

use serde_json::json;
use wasm_operator_sdk::http::Method;
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::identity::fake::FakeKeystone;
use crate::pass::SECRET_POLLING;
use crate::testing::{World, cond, keystone, ldap_backend, merged, oidc_backend};

fn status_writes(world: &World) -> usize {
    world
        .cluster
        .write_log()
        .iter()
        .filter(|w| w.starts_with("update-status"))
        .count()
}

#[test]
fn a_new_backend_gets_its_finalizer_first_and_runs_again_at_once() {
    let world = World::of(merged(
        ldap_backend(),
        &json!({"metadata": {"finalizers": null}}),
    ));
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::ZERO)));
    assert_eq!(
        world.cluster.write_log(),
        ["patch KeystoneIdentityBackend openstack/corp"]
    );
    assert!(world.keystone.requests().is_empty());
    assert!(world.stored().status.is_none());
}

#[test]
fn a_backend_that_is_gone_ends_the_pass() {
    let world = World::ldap();
    let request = wasm_operator_sdk::Request {
        namespace: Some("openstack".into()),
        name: "other".into(),
    };
    let outcome = crate::reconcile::reconcile_with(&world.cluster, &request, &world.keystone);
    assert_eq!(outcome, Ok(Outcome::done()));
    assert!(world.cluster.writes().is_empty());
}

#[test]
fn an_ldap_backend_gets_its_domain_then_waits_for_the_projection_then_is_ready() {
    let world = World::ldap();
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    let id = world.keystone.domain("corp").expect("created")["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let stored = world.stored();
    let status = stored.status.as_ref().expect("a status");
    assert_eq!(
        (status.domain_id.as_str(), status.observed_generation),
        (id.as_str(), 3)
    );
    assert_eq!(status_writes(&world), 1, "one status write per pass");
    assert_eq!(
        world.said("ConfigProjected"),
        cond(
            "False",
            "WaitingForProjection",
            "waiting for the Keystone Deployment to mount this backend's domain config"
        )
    );
    assert_eq!(
        world.said("Ready"),
        cond(
            "False",
            "NotAllReady",
            "One or more sub-conditions are not ready"
        )
    );

    let world = world.projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(
        world.said("Ready"),
        cond("True", "AllReady", "All sub-conditions are ready")
    );
    assert_eq!(
        world.condition("Ready").unwrap().observed_generation,
        Some(3)
    );
    assert_eq!(world.events().len(), 1, "DomainCreated only");
}

#[test]
fn a_converged_ldap_pass_writes_nothing_and_only_authenticates_and_reads_the_domain() {
    let world = World::ldap().projected();
    world.run().expect("converges");
    world.cluster.clear_calls();
    world.keystone.clear();
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert!(world.condition("Ready").is_some(), "the pass ran");
    assert!(
        world.cluster.writes().is_empty(),
        "{:?}",
        world.cluster.write_log()
    );
    assert_eq!(
        world.keystone.requests(),
        ["POST /auth/tokens", "GET /domains?name=corp"]
    );
    assert!(world.events().is_empty());
}

#[test]
fn a_converged_federation_pass_writes_nothing_and_sends_only_token_and_get_requests() {
    let groups = json!({"spec": {"groups": [{"name": "admins",
        "roleAssignments": [{"role": "member", "domain": true}]}]}});
    let world = World::of(merged(oidc_backend(), &groups)).projected();
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.said("Ready").0, "True");
    world.cluster.clear_calls();
    world.keystone.clear();
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert!(
        world.cluster.writes().is_empty(),
        "{:?}",
        world.cluster.write_log()
    );
    let requests = world.keystone.requests();
    let (tokens, calls): (Vec<_>, Vec<_>) =
        requests.iter().partition(|r| *r == "POST /auth/tokens");
    assert_eq!(tokens.len(), calls.len(), "a token per call");
    let group = world
        .keystone
        .group("admins", &world.stored().status.unwrap().domain_id);
    let group = group.expect("created")["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let domain = world.keystone.domain("corp").expect("created")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        world.keystone.calls(),
        [
            "GET /domains?name=corp".to_owned(),
            "GET /OS-FEDERATION/identity_providers/corp".to_owned(),
            "GET /OS-FEDERATION/mappings/corp-mapping".to_owned(),
            format!("GET /groups?name=admins&domain_id={domain}"),
            "GET /roles?name=member".to_owned(),
            format!("GET /domains/{domain}/groups/{group}/roles/role-member"),
            "GET /OS-FEDERATION/identity_providers/corp/protocols/openid".to_owned(),
        ]
    );
}

#[test]
fn a_failed_identity_call_is_recorded_on_the_status_then_fails_the_pass_for_a_retry() {
    let world = World::ldap();
    world.keystone.fail(Method::Get, "/domains", 502);
    let message = "looking up domain \"corp\": GET /domains?name=corp: HTTP 502";
    assert_eq!(world.run(), Err(ReconcileError::Transient(message.into())));
    assert_eq!(
        world.said("DomainReady"),
        cond("False", "IdentityAPIError", message)
    );
    assert!(world.condition("ConfigProjected").is_none());
}

#[test]
fn a_provisioned_domain_stays_ready_while_the_keystone_api_is_briefly_unready() {
    let world = World::ldap().projected();
    world.run().expect("converges");
    let provisioned = world.said("DomainReady");
    let unready = merged(
        keystone(),
        &json!({"status": {"conditions": [{"type": "KeystoneAPIReady", "status": "False",
            "reason": "R", "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}),
    );
    let world = world.with(unready);
    world.cluster.clear_calls();
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.said("DomainReady"), provisioned);
    assert_eq!(world.said("Ready").0, "True");
    assert!(world.cluster.writes().is_empty());
}

#[test]
fn a_foreign_domain_skips_the_federation_objects_but_still_observes_the_projection() {
    let foreign = FakeKeystone::new().with_domain("domain-7", "corp", "", true);
    let world = World::of(oidc_backend()).with_keystone(foreign);
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("DomainReady").1, "DomainAlreadyExists");
    assert_eq!(world.keystone.calls(), ["GET /domains?name=corp"]);
    assert_eq!(world.said("ConfigProjected").1, "WaitingForProjection");
    assert!(world.condition("FederationObjectsReady").is_none());
    assert_eq!(world.said("Ready").0, "False");
}

#[test]
fn a_conflicting_status_write_runs_the_pass_again_in_a_second() {
    let world = World::ldap();
    world.cluster.fail(
        Op::UpdateStatus,
        "corp",
        ApiError::Conflict("stale".into()),
        1,
    );
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(1))));
}

#[test]
fn a_backend_that_does_not_decode_is_not_retried() {
    let world = World::bare(merged(ldap_backend(), &json!({"spec": {"type": "LDAPv2"}})));
    let outcome = world.run();
    assert!(
        matches!(&outcome, Err(ReconcileError::Permanent(m)) if m.contains("does not decode")),
        "{outcome:?}"
    );
}
