use std::rc::Rc;
use std::time::Duration;

use serde_json::json;
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{
    NAME, NS, barbican, children_cluster, condition, credentials_secret, reconcile, settle, store,
    stored,
};

const PREFIX: &str = "openstack.c5c3.io";

/// A Barbican targeting `edge` with its default store `vault` here, and the target with the
/// credentials, the MariaDB and the store's AppRole Secret.
fn targeted() -> (FakeCluster, Rc<FakeCluster>) {
    let mut object = barbican();
    object["spec"]["targetClusterRef"] = json!({"name": "edge"});
    let target = Rc::new(children_cluster().with(credentials_secret("vault")));
    let management = FakeCluster::new()
        .with(object)
        .with(store("vault", true, true))
        .with_target("edge", PREFIX, target.clone());
    (management, target)
}

/// Runs passes over the management cluster, settling the target's children between them,
/// until one neither requeues nor fails (at most 10).
fn converge_on(management: &FakeCluster, target: &FakeCluster) {
    for _ in 0..10 {
        let outcome = reconcile(management).expect("a pass");
        settle(target);
        if outcome.requeue_after.is_none() {
            return;
        }
    }
    panic!("no convergence: {:?}", stored(management).status);
}

fn finalizers(cluster: &FakeCluster) -> Vec<String> {
    stored(cluster).metadata.finalizers.unwrap_or_default()
}

/// The Barbican marked deleting `ago` before now.
fn delete_ago(cluster: &FakeCluster, ago: Duration) {
    let at = wasm_operator_sdk::blocks::conditions::now().0 - ago;
    cluster.change("Barbican", NAME, |o| {
        o["metadata"]["deletionTimestamp"] = json!(at.to_string());
    });
}

#[test]
fn a_targeted_barbican_runs_on_the_target_with_the_store_listed_here() {
    let (management, target) = targeted();
    converge_on(&management, &target);
    assert_eq!(condition(&management, "Ready").0, "True");
    assert_eq!(finalizers(&management), [FINALIZER]);
    let deployment = target
        .server("Deployment", NAME)
        .expect("the Deployment there");
    let labels = &deployment["metadata"]["labels"];
    assert_eq!(labels["openstack.c5c3.io/owner-kind"], "Barbican");
    assert_eq!(labels["openstack.c5c3.io/owner-name"], NAME);
    assert_eq!(labels["openstack.c5c3.io/owner-namespace"], NS);
    assert_eq!(deployment["metadata"].get("ownerReferences"), None);
    assert_eq!(
        stored(&management)
            .status
            .map(|s| s.projected_secret_stores)
            .unwrap_or_default(),
        ["vault"]
    );
    for kind in ["Deployment", "Service", "Job", "Secret", "Database"] {
        assert!(
            management.names(kind).is_empty(),
            "{kind} here: {:?}",
            management.names(kind)
        );
    }
}

#[test]
fn the_finalizer_comes_before_any_child() {
    let (management, target) = targeted();
    let outcome = reconcile(&management).expect("a pass");
    assert_eq!(outcome.requeue_after, Some(Duration::ZERO));
    assert_eq!(finalizers(&management), [FINALIZER]);
    assert!(target.writes().is_empty(), "{:?}", target.write_log());
}

#[test]
fn a_barbican_whose_target_is_not_registered_is_target_cluster_unavailable_with_no_finalizer() {
    let (management, target) = targeted();
    management.deregister_target("edge");
    let outcome = reconcile(&management).expect("a pass");
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(15)));
    assert_eq!(
        condition(&management, "SecretsReady"),
        (
            "False".into(),
            "TargetClusterUnavailable".into(),
            "target cluster \"edge\" is not registered".into()
        )
    );
    assert!(finalizers(&management).is_empty());
    assert!(target.writes().is_empty(), "{:?}", target.write_log());
}

#[test]
fn a_deleting_targeted_barbican_sweeps_its_labelled_children_there_and_releases_the_finalizer() {
    let (management, target) = targeted();
    converge_on(&management, &target);
    delete_ago(&management, Duration::from_secs(1));
    target.clear_calls();
    assert_eq!(reconcile(&management).expect("a pass").requeue_after, None);
    let deleted = target.deletes();
    for child in [
        "Deployment barbican",
        "Service barbican",
        "Job barbican-db-sync",
    ] {
        assert!(deleted.iter().any(|d| d == child), "{child}: {deleted:?}");
    }
    assert!(
        target.server("Secret", "vault-creds").is_some(),
        "the store's credentials are not the Barbican's children"
    );
    assert!(finalizers(&management).is_empty());
}

#[test]
fn a_deleting_barbican_waits_for_its_target_then_abandons_the_children_with_a_warning() {
    let (management, target) = targeted();
    converge_on(&management, &target);
    management.deregister_target("edge");
    delete_ago(&management, Duration::from_secs(60));
    let outcome = reconcile(&management).expect("a pass");
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(15)));
    assert_eq!(
        condition(&management, "SecretsReady").1,
        "TargetClusterUnavailable"
    );
    assert_eq!(finalizers(&management), [FINALIZER]);

    delete_ago(&management, Duration::from_secs(301));
    assert_eq!(reconcile(&management).expect("a pass").requeue_after, None);
    assert!(finalizers(&management).is_empty());
    assert_eq!(management.event_reasons(), ["RemoteChildrenAbandoned"]);
    assert!(
        !target.names("Deployment").is_empty(),
        "the children are left"
    );
}
