use std::ops::ControlFlow;

use serde_json::json;
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::Call;

use super::*;
use crate::testing::{World, ldap_backend, merged};

fn finalizers(world: &World) -> Vec<String> {
    world.stored().metadata.finalizers.unwrap_or_default()
}

#[test]
fn the_finalizer_is_added_beside_the_others_and_the_pass_runs_again_at_once() {
    let others = json!({"metadata": {"finalizers": ["example.com/other"]}});
    let world = World::of(merged(ldap_backend(), &others));
    let mut pass = world.pass();
    assert_eq!(
        ensure(&mut pass).expect("added"),
        ControlFlow::Break(Some(NEXT_PASS))
    );
    assert_eq!(finalizers(&world), ["example.com/other", FINALIZER]);
    assert_eq!(pass.backend.metadata.finalizers, Some(finalizers(&world)));
    // Carried: nothing is sent.
    world.cluster.clear_calls();
    assert_eq!(
        ensure(&mut pass).expect("carried"),
        ControlFlow::Continue(())
    );
    assert!(world.cluster.writes().is_empty());
}

#[test]
fn the_patch_carries_the_resource_version_read_so_a_concurrent_change_conflicts() {
    let world = World::of(merged(
        ldap_backend(),
        &json!({"metadata": {"finalizers": null}}),
    ));
    let mut pass = world.pass();
    let read = pass.backend.metadata.resource_version.clone();
    world
        .cluster
        .change("KeystoneIdentityBackend", "corp", |b| {
            b["metadata"]["labels"] = json!({"touched": "yes"});
        });
    let error = ensure(&mut pass).expect_err("conflicts");
    assert!(
        matches!(
            &error,
            crate::error::Error::Cluster {
                source: wasm_operator_sdk::Error::Api(ApiError::Conflict(_)),
                ..
            }
        ),
        "{error}"
    );
    let patched = world
        .cluster
        .calls()
        .into_iter()
        .any(|c| matches!(c, Call::Patch(..)));
    assert!(patched && read.is_some());
    assert!(finalizers(&world).is_empty());
}

#[test]
fn releasing_keeps_every_other_finalizer_and_sends_nothing_when_not_carried() {
    let both = json!({"metadata": {"finalizers": ["example.com/other", FINALIZER]}});
    let world = World::of(merged(ldap_backend(), &both));
    let mut pass = world.pass();
    release(&mut pass).expect("released");
    assert_eq!(finalizers(&world), ["example.com/other"]);
    world.cluster.clear_calls();
    release(&mut pass).expect("not carried");
    assert!(world.cluster.writes().is_empty());
    let only = World::ldap();
    let mut pass = only.pass();
    release(&mut pass).expect("released");
    assert!(only.stored().metadata.finalizers.is_none());
}
