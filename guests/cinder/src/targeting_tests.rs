use std::rc::Rc;
use std::time::Duration;

use serde_json::json;
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::satellites::SERVICE_REMOVE_FINALIZER;
use crate::testing::{
    NAME, NS, backend, children_cluster, cinder, condition, reconcile, settle, stored,
};

const PREFIX: &str = "openstack.c5c3.io";

/// A Cinder targeting `edge` with its backend `fast` (holding the service-remove
/// finalizer) here, and the target with the credentials and the MariaDB.
fn targeted() -> (FakeCluster, Rc<FakeCluster>) {
    let mut object = cinder();
    object["spec"]["targetClusterRef"] = json!({"name": "edge"});
    let mut held = backend("fast", true);
    held["metadata"]["finalizers"] = json!([SERVICE_REMOVE_FINALIZER]);
    let target = Rc::new(children_cluster());
    let management =
        FakeCluster::new()
            .with(object)
            .with(held)
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

/// The Cinder marked deleting `ago` before now.
fn delete_ago(cluster: &FakeCluster, ago: Duration) {
    let at = wasm_operator_sdk::blocks::conditions::now().0 - ago;
    cluster.change("Cinder", NAME, |o| {
        o["metadata"]["deletionTimestamp"] = json!(at.to_string());
    });
}

#[test]
fn a_targeted_cinder_runs_its_services_on_the_target_from_the_backends_here() {
    let (management, target) = targeted();
    converge_on(&management, &target);
    assert_eq!(condition(&management, "Ready").0, "True");
    assert_eq!(finalizers(&management), [FINALIZER]);
    for name in ["cinder", "cinder-volume-fast"] {
        let deployment = target
            .server("Deployment", name)
            .expect("a Deployment there");
        let labels = &deployment["metadata"]["labels"];
        assert_eq!(labels["openstack.c5c3.io/owner-kind"], "Cinder", "{name}");
        assert_eq!(labels["openstack.c5c3.io/owner-name"], NAME, "{name}");
        assert_eq!(labels["openstack.c5c3.io/owner-namespace"], NS, "{name}");
        assert_eq!(deployment["metadata"].get("ownerReferences"), None);
    }
    for kind in ["Deployment", "Service", "Job", "Secret", "Database"] {
        assert!(
            management.names(kind).is_empty(),
            "{kind} here: {:?}",
            management.names(kind)
        );
    }
    assert!(
        target.names("CinderBackend").is_empty(),
        "the satellites are read here"
    );
}

#[test]
fn a_deleted_backend_of_a_targeted_cinder_is_removed_there_and_released_here() {
    let (management, target) = targeted();
    converge_on(&management, &target);
    management.change("CinderBackend", "fast", |o| {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-03T09:00:00Z");
    });
    reconcile(&management).expect("a pass");
    assert!(target.server("Deployment", "cinder-volume-fast").is_none());
    assert!(target.server("Job", "cinder-fast-service-remove").is_some());
    settle(&target);
    reconcile(&management).expect("a pass");
    let released = management.server("CinderBackend", "fast");
    let finalizers = released.map(|b| b["metadata"]["finalizers"].clone());
    assert!(
        finalizers.as_ref().is_none_or(|f| *f == json!([])),
        "the finalizer is released here: {finalizers:?}"
    );
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
fn a_cinder_whose_target_is_not_registered_is_target_cluster_unavailable_with_no_finalizer() {
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
    assert!(management.names("Deployment").is_empty());
}

#[test]
fn a_deleting_targeted_cinder_sweeps_its_labelled_children_there_and_releases_the_finalizer() {
    let (management, target) = targeted();
    converge_on(&management, &target);
    delete_ago(&management, Duration::from_secs(1));
    target.clear_calls();
    assert_eq!(reconcile(&management).expect("a pass").requeue_after, None);
    let deleted = target.deletes();
    for child in [
        "Deployment cinder",
        "Deployment cinder-volume-fast",
        "Service cinder",
        "Job cinder-db-sync",
    ] {
        assert!(deleted.iter().any(|d| d == child), "{child}: {deleted:?}");
    }
    assert!(target.names("Deployment").is_empty());
    assert!(
        target.server("Secret", "cinder-db").is_some(),
        "the user's credentials are not the Cinder's children"
    );
    assert!(finalizers(&management).is_empty());
}

#[test]
fn a_deleting_cinder_waits_for_its_target_then_abandons_the_children_with_a_warning() {
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
