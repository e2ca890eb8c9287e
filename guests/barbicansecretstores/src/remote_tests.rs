use std::rc::Rc;

use serde_json::{Value, json};
use wasm_operator_sdk::Outcome;
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{
    ALL, BARBICAN, INSTANCE, MINTED, NS, STORE, World, barbican, brownfield_store, managed_store,
    openbao, openbao_cluster, provisioner_account, secret, token_answer,
};

const PREFIX: &str = "openstack.c5c3.io";

/// The managed store of a Barbican targeting `edge`, here; the target holds nothing yet.
fn targeted(store: Value) -> (World, Rc<FakeCluster>) {
    let target = Rc::new(FakeCluster::new());
    let mut world = World::of(store, openbao(&ALL, 3600)).with(barbican(Some("edge")));
    world.cluster = world.cluster.with_target("edge", PREFIX, target.clone());
    (world, target)
}

fn annotation(world: &World) -> Option<String> {
    world
        .stored()
        .metadata
        .annotations
        .and_then(|a| a.get(CHILDREN_CLUSTER).cloned())
}

fn finalizers(world: &World) -> Vec<String> {
    world.stored().metadata.finalizers.unwrap_or_default()
}

/// The store marked deleting `ago` seconds before the world's clock.
fn delete_ago(world: &World, ago: i64) {
    let at = world.now - k8s_openapi::jiff::SignedDuration::from_secs(ago);
    world.cluster.change("BarbicanSecretStore", STORE, |o| {
        o["metadata"]["deletionTimestamp"] = json!(at.to_string());
    });
}

/// A Secret on the target labelled as the store's (or `owner`'s).
fn labelled_secret(name: &str, owner: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": NS, "labels": {
            "openstack.c5c3.io/owner-kind": "BarbicanSecretStore",
            "openstack.c5c3.io/owner-name": owner,
            "openstack.c5c3.io/owner-namespace": NS}}})
}

#[test]
fn a_managed_store_of_a_targeted_barbican_records_its_cluster_and_finalizer_before_minting() {
    let (world, target) = targeted(managed_store());
    world.cluster.clear_calls();
    assert_eq!(world.run(), Ok(Outcome::requeue(std::time::Duration::ZERO)));
    assert_eq!(annotation(&world).as_deref(), Some("edge"));
    assert_eq!(finalizers(&world), [FINALIZER]);
    let writes = world.writes();
    assert_eq!(
        writes.first(),
        Some(&format!("patch BarbicanSecretStore {NS}/{STORE}")),
        "the annotation and finalizer in one merge patch, first"
    );
    assert!(
        !writes.iter().any(|w| w.contains("Secret ")),
        "nothing minted: {writes:?}"
    );
    assert!(target.writes().is_empty(), "{:?}", target.write_log());
}

#[test]
fn a_brownfield_store_of_a_targeted_barbican_holds_no_finalizer() {
    let (world, _target) = targeted(brownfield_store());
    world.run().expect("a pass");
    assert!(finalizers(&world).is_empty());
    assert_eq!(annotation(&world), None);
}

#[test]
fn a_deleting_store_sweeps_its_secrets_from_the_annotated_cluster_even_without_its_barbican() {
    let (world, target) = targeted(managed_store());
    world.run().expect("the hold");
    target.put(labelled_secret(MINTED, STORE));
    target.put(labelled_secret("other-approle", "other"));
    let parent = ObjectRef::of::<Barbican>(Some(NS), BARBICAN);
    world
        .cluster
        .delete(&parent, wasm_operator_sdk::Propagation::Background)
        .expect("the Barbican deleted");
    delete_ago(&world, 1);
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(target.deletes(), [format!("Secret {MINTED}")]);
    assert!(target.server("Secret", "other-approle").is_some());
    assert!(finalizers(&world).is_empty());
}

#[test]
fn a_deleting_store_waits_five_minutes_for_its_cluster_then_abandons_its_secrets() {
    let (world, target) = targeted(managed_store());
    world.run().expect("the hold");
    target.put(labelled_secret(MINTED, STORE));
    world.cluster.deregister_target("edge");
    delete_ago(&world, 60);
    assert_eq!(world.run(), Ok(Outcome::requeue(TARGET_POLLING)));
    assert_eq!(world.said(CREDENTIALS_READY).1, TARGET_CLUSTER_UNAVAILABLE);
    assert_eq!(finalizers(&world), [FINALIZER]);

    delete_ago(&world, 300);
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert!(finalizers(&world).is_empty());
    let reasons: Vec<String> = world.events().into_iter().map(|e| e.1).collect();
    assert_eq!(reasons, [REASON_ABANDONED]);
    assert!(
        target.server("Secret", MINTED).is_some(),
        "the Secret is left"
    );
}

#[test]
fn a_held_managed_store_provisions_and_mints_on_the_target_with_the_owner_labels() {
    let target = Rc::new(
        FakeCluster::new()
            .with(openbao_cluster(true))
            .with(secret(
                &format!("{INSTANCE}-tls-ca"),
                &[("ca.crt", "-----BEGIN CERTIFICATE-----\n")],
            ))
            .with(provisioner_account())
            .answer_subresource("token", token_answer()),
    );
    let mut world = World::of(managed_store(), openbao(&ALL, 3600)).with(barbican(Some("edge")));
    world.cluster = world.cluster.with_target("edge", PREFIX, target.clone());
    assert_eq!(world.run(), Ok(Outcome::requeue(std::time::Duration::ZERO)));
    world.run().expect("a pass");
    assert_eq!(world.said("ProvisioningReady").1, "Provisioned");
    // The provisioner's TokenRequest went to the target, where the instance runs.
    assert!(
        target
            .calls()
            .iter()
            .any(|c| c.object().is_some_and(|o| o.kind == "ServiceAccount")),
        "{:?}",
        target.calls()
    );
    let minted = target
        .server("Secret", MINTED)
        .expect("minted on the target");
    let labels = &minted["metadata"]["labels"];
    assert_eq!(
        labels["openstack.c5c3.io/owner-kind"],
        "BarbicanSecretStore"
    );
    assert_eq!(labels["openstack.c5c3.io/owner-name"], STORE);
    assert_eq!(minted["metadata"].get("ownerReferences"), None);
    assert!(
        world.minted().is_none(),
        "nothing minted on the management cluster"
    );
}
