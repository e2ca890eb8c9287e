use std::rc::Rc;
use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{
    NAME, NS, backend, children_cluster, condition, glance, reconcile, s3_secret, settle, stored,
};

const PREFIX: &str = "openstack.c5c3.io";

/// A Glance targeting `edge`, with its default backend `a` here, and the target: the
/// credentials, the MariaDB and the backend's S3 Secret there.
fn targeted() -> (FakeCluster, Rc<FakeCluster>) {
    let mut object = glance();
    object["spec"]["targetClusterRef"] = json!({"name": "edge"});
    let target = Rc::new(children_cluster().with(s3_secret("a-s3")));
    let management = FakeCluster::new()
        .with(object)
        .with(backend("a", true, true))
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

/// The Glance marked deleting `ago` before now.
fn delete_ago(cluster: &FakeCluster, ago: Duration) {
    let now = wasm_operator_sdk::blocks::conditions::now().0;
    let at = now - ago;
    cluster.change("Glance", NAME, |o| {
        o["metadata"]["deletionTimestamp"] = json!(at.to_string());
    });
}

#[test]
fn a_targeted_glance_converges_with_every_child_on_the_target_and_none_here() {
    let (management, target) = targeted();
    converge_on(&management, &target);
    assert_eq!(condition(&management, "Ready").0, "True");
    assert_eq!(finalizers(&management), [FINALIZER]);
    let deployment = target
        .server("Deployment", NAME)
        .expect("the Deployment there");
    let labels = &deployment["metadata"]["labels"];
    assert_eq!(labels["openstack.c5c3.io/owner-kind"], "Glance");
    assert_eq!(labels["openstack.c5c3.io/owner-name"], NAME);
    assert_eq!(labels["openstack.c5c3.io/owner-namespace"], NS);
    assert_eq!(deployment["metadata"].get("ownerReferences"), None);
    for kind in ["Deployment", "Service", "Job", "Secret", "Database"] {
        assert!(
            management.names(kind).is_empty(),
            "{kind} here: {:?}",
            management.names(kind)
        );
    }
    assert!(!target.names("Service").is_empty());
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
fn a_glance_whose_target_is_not_registered_is_target_cluster_unavailable_with_no_finalizer() {
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
fn a_deleting_targeted_glance_sweeps_its_labelled_children_there_and_releases_the_finalizer() {
    let (management, target) = targeted();
    converge_on(&management, &target);
    target.put(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "someone-elses", "namespace": NS,
            "labels": {"openstack.c5c3.io/owner-kind": "Glance",
                "openstack.c5c3.io/owner-name": "other",
                "openstack.c5c3.io/owner-namespace": NS}}}));
    delete_ago(&management, Duration::from_secs(1));
    target.clear_calls();
    assert_eq!(reconcile(&management).expect("a pass").requeue_after, None);
    let deleted = target.deletes();
    for child in ["Deployment glance", "Service glance", "Job glance-db-sync"] {
        assert!(deleted.iter().any(|d| d == child), "{child}: {deleted:?}");
    }
    assert!(target.names("Deployment").is_empty());
    assert!(target.server("Secret", "someone-elses").is_some());
    assert!(finalizers(&management).is_empty());
}

#[test]
fn a_deleting_glance_waits_for_its_target_then_abandons_the_children_with_a_warning() {
    let (management, target) = targeted();
    converge_on(&management, &target);
    management.deregister_target("edge");
    delete_ago(&management, Duration::from_secs(60));
    let outcome = reconcile(&management).expect("a pass");
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(15)));
    assert_eq!(
        condition(&management, "SecretsReady"),
        (
            "False".into(),
            "TargetClusterUnavailable".into(),
            "target cluster \"edge\" is not registered; waiting at least 5m0s before \
             abandoning the children on target cluster \"edge\""
                .into()
        )
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

#[test]
fn a_deleting_glance_without_the_finalizer_sends_nothing() {
    let cluster = crate::testing::cluster();
    delete_ago(&cluster, Duration::from_secs(1));
    cluster.clear_calls();
    assert_eq!(reconcile(&cluster).expect("a pass").requeue_after, None);
    let writes: Vec<Value> = cluster.applied();
    assert!(writes.is_empty());
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
}
