use serde_json::json;
use wasm_operator_sdk::testing::{Call, FakeCluster};
use wasm_operator_sdk::{ObjectRef, Outcome};

use super::testing::{
    ALL_OURS_AND_FOREIGN, FOREIGN, deletes, deleting, deleting_from, event_reasons, finalizers,
    push_secret, reconcile_after,
};
use super::*;
use crate::deletion::openbao::ESO_FINALIZER;
use crate::finalizers::{FINALIZER, OPENBAO_FINALIZER, REMOTE_CHILDREN_FINALIZER};
use crate::testing::mariadb_object;
use crate::types::Keystone;

fn stored_condition(cluster: &FakeCluster, type_: &str) -> Option<serde_json::Value> {
    let stored = cluster.object(&ObjectRef::of::<Keystone>(Some("ns"), "ks"))?;
    stored["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .cloned()
}

/// The finalizer patches of the Keystone, as the finalizer lists they send.
fn finalizer_patches(cluster: &FakeCluster) -> Vec<serde_json::Value> {
    cluster
        .calls()
        .into_iter()
        .filter_map(|call| match call {
            Call::Patch(r, wasm_operator_sdk::Patch::Merge(body)) if r.kind == "Keystone" => {
                Some(body["metadata"]["finalizers"].clone())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_deleting_keystone_releases_both_finalizers_in_order_in_one_pass_when_nothing_waits() {
    let cluster = FakeCluster::new()
        .with(deleting(ALL_OURS_AND_FOREIGN))
        .with(mariadb_object("Database", "ks", "True"))
        .with(push_secret(
            "ks-fernet-keys-backup",
            &[ESO_FINALIZER],
            false,
        ))
        .with(push_secret(
            "ks-credential-keys-backup",
            &[ESO_FINALIZER],
            false,
        ));
    let outcome = reconcile_after(&cluster, 30).expect("runs");
    assert_eq!(outcome, Outcome::done());
    assert_eq!(
        finalizer_patches(&cluster),
        [json!([OPENBAO_FINALIZER, FOREIGN]), json!([FOREIGN])],
        "the main finalizer first, then the OpenBao one"
    );
    assert_eq!(
        deletes(&cluster),
        [
            "Database ks",
            "User ks",
            "Grant ks",
            "PushSecret ks-fernet-keys-backup",
            "PushSecret ks-credential-keys-backup"
        ]
    );
    let reasons: Vec<String> = event_reasons(&cluster)
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    assert_eq!(
        reasons,
        [
            "FinalizingDatabase",
            "DatabaseFinalized",
            "FinalizingOpenBaoSecrets",
            "OpenBaoSecretsFinalized"
        ]
    );
    assert_eq!(finalizers(&cluster), [FOREIGN]);
    assert!(
        !cluster
            .calls()
            .iter()
            .any(|c| matches!(c, Call::UpdateStatus(_))),
        "a pass that released every finalizer writes no status: {:?}",
        cluster.write_log()
    );
}

#[test]
fn a_deletion_that_waits_writes_the_status_with_its_reason() {
    let cluster = FakeCluster::new()
        .with(deleting(ALL_OURS_AND_FOREIGN))
        .with(push_secret("ks-fernet-keys-backup", &[], false));
    let outcome = reconcile_after(&cluster, 30).expect("runs");
    assert_eq!(outcome, Outcome::requeue(crate::pass::SECRET_POLLING));
    let secrets = stored_condition(&cluster, "SecretsReady").expect("SecretsReady written");
    assert_eq!(secrets["status"], "False");
    assert_eq!(secrets["reason"], "WaitingForESOAdoption");
    assert_eq!(secrets["observedGeneration"], 2);
    let ready = stored_condition(&cluster, "Ready").expect("Ready recomputed");
    assert_eq!(ready["reason"], "NotAllReady");
    assert_eq!(
        finalizers(&cluster),
        [OPENBAO_FINALIZER, FOREIGN],
        "the main finalizer went in the same pass"
    );
}

#[test]
fn a_waiting_deletion_that_changes_nothing_writes_nothing() {
    let cluster = FakeCluster::new()
        .with(deleting(&[OPENBAO_FINALIZER]))
        .with(push_secret("ks-fernet-keys-backup", &[], false));
    reconcile_after(&cluster, 30).expect("runs");
    cluster.clear_calls();
    let outcome = reconcile_after(&cluster, 45).expect("runs");
    assert_eq!(outcome, Outcome::requeue(crate::pass::SECRET_POLLING));
    assert!(
        cluster
            .calls()
            .iter()
            .any(|c| c.to_string() == "get PushSecret ns/ks-fernet-keys-backup"),
        "the pass looked at the backups: {:?}",
        cluster.calls()
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn a_keystone_whose_finalizers_are_all_released_gets_no_further_writes() {
    // What the API server keeps of a Keystone another controller still holds.
    let cluster = FakeCluster::new()
        .with(deleting(&[FOREIGN]))
        .with(mariadb_object("Database", "ks", "True"));
    let outcome = reconcile_after(&cluster, 30).expect("runs");
    assert_eq!(outcome, Outcome::done());
    assert!(
        cluster
            .calls()
            .iter()
            .any(|c| c.to_string() == "get Keystone ns/ks"),
        "the pass read the Keystone: {:?}",
        cluster.calls()
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    assert!(cluster.events().is_empty());
}

#[test]
fn a_keystone_released_by_one_pass_gets_no_write_from_the_next() {
    let cluster = FakeCluster::new().with(deleting(ALL_OURS_AND_FOREIGN));
    assert_eq!(
        reconcile_after(&cluster, 30).expect("runs"),
        Outcome::done()
    );
    assert_eq!(finalizers(&cluster), [FOREIGN]);
    cluster.clear_calls();
    assert_eq!(
        reconcile_after(&cluster, 31).expect("runs"),
        Outcome::done()
    );
    assert!(!cluster.calls().is_empty(), "the second pass ran");
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

fn on_a_target_cluster(finalizers: &[&str]) -> FakeCluster {
    let object = deleting_from(
        crate::testing::keystone_with(json!({"targetClusterRef": {"name": "remote"}})),
        finalizers,
    );
    FakeCluster::new()
        .with(object)
        .with(mariadb_object("Database", "ks", "True"))
        .with(push_secret(
            "ks-fernet-keys-backup",
            &[ESO_FINALIZER],
            false,
        ))
}

const TARGETED: &[&str] = &[
    FINALIZER,
    OPENBAO_FINALIZER,
    REMOTE_CHILDREN_FINALIZER,
    FOREIGN,
];

#[test]
fn at_4m59s_a_deleting_keystone_on_an_unresolved_target_waits_target_cluster_unavailable() {
    let cluster = on_a_target_cluster(TARGETED);
    let outcome = reconcile_after(&cluster, 4 * 60 + 59).expect("runs");
    assert_eq!(outcome, Outcome::requeue(crate::pass::SECRET_POLLING));
    let secrets = stored_condition(&cluster, "SecretsReady").expect("SecretsReady written");
    assert_eq!(secrets["reason"], "TargetClusterUnavailable");
    assert_eq!(
        secrets["message"],
        "target cluster \"remote\" is not registered; waiting at least 5m0s before abandoning \
         the children on target cluster \"remote\""
    );
    assert_eq!(finalizers(&cluster), TARGETED);
    assert!(deletes(&cluster).is_empty(), "{:?}", deletes(&cluster));
    assert!(cluster.events().is_empty());
}

#[test]
fn at_5m01s_a_deleting_keystone_on_an_unresolved_target_abandons_its_children_and_releases_all() {
    let cluster = on_a_target_cluster(TARGETED);
    let outcome = reconcile_after(&cluster, 5 * 60 + 1).expect("runs");
    assert_eq!(outcome, Outcome::done());
    assert_eq!(finalizers(&cluster), [FOREIGN]);
    assert!(
        deletes(&cluster).is_empty(),
        "nothing on the target is reached: {:?}",
        deletes(&cluster)
    );
    assert_eq!(
        event_reasons(&cluster),
        vec![("Warning".to_owned(), "RemoteChildrenAbandoned".to_owned()); 3]
    );
    assert!(cluster.server("Database", "ks").is_some());
    assert!(
        cluster
            .server("PushSecret", "ks-fernet-keys-backup")
            .is_some()
    );
}

#[test]
fn a_deleting_keystone_on_a_target_without_our_finalizers_is_left_alone() {
    let cluster = on_a_target_cluster(&[FOREIGN]);
    let outcome = reconcile_after(&cluster, 30).expect("runs");
    assert_eq!(outcome, Outcome::done());
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn since_deletion_is_measured_from_the_deletion_timestamp_at_the_passs_clock() {
    let cluster = FakeCluster::new().with(deleting(&[FINALIZER]));
    let pass = super::testing::pass_at(&cluster, 10 * 60 + 1);
    assert_eq!(since_deletion(&pass), std::time::Duration::from_secs(601));
    let early = super::testing::pass_at(&cluster, -5);
    assert_eq!(since_deletion(&early), std::time::Duration::ZERO);
}

#[test]
fn durations_are_printed_as_go_prints_them() {
    assert_eq!(go_duration(std::time::Duration::from_secs(300)), "5m0s");
    assert_eq!(go_duration(std::time::Duration::from_secs(600)), "10m0s");
    assert_eq!(go_duration(std::time::Duration::from_secs(45)), "45s");
    assert_eq!(go_duration(std::time::Duration::from_secs(3723)), "1h2m3s");
}

#[test]
fn a_deleting_keystone_on_an_opened_target_sweeps_its_labelled_children_there_and_releases_all() {
    let labels = json!({
        "openstack.c5c3.io/owner-kind": "Keystone",
        "openstack.c5c3.io/owner-name": "ks",
        "openstack.c5c3.io/owner-namespace": "ns"});
    let mut other_labels = labels.clone();
    other_labels["openstack.c5c3.io/owner-name"] = json!("other");
    let config_map = |name: &str, labels: &serde_json::Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ns", "labels": labels}})
    };
    let target = std::rc::Rc::new(
        FakeCluster::new()
            .with(config_map("ks-config-1", &labels))
            .with(config_map("other-config-1", &other_labels)),
    );
    let object = deleting_from(
        crate::testing::keystone_with(json!({"targetClusterRef": {"name": "remote"}})),
        TARGETED,
    );
    let cluster = FakeCluster::new().with(object).with_target(
        "remote",
        crate::describe::OWNER_LABEL_PREFIX,
        target.clone(),
    );
    let outcome = reconcile_after(&cluster, 30).expect("runs");
    assert_eq!(outcome, Outcome::done());
    assert_eq!(finalizers(&cluster), [FOREIGN]);
    assert_eq!(
        target.names("ConfigMap"),
        ["other-config-1"],
        "only its own child swept"
    );
    assert!(
        target
            .write_log()
            .iter()
            .any(|w| w == "delete ConfigMap ns/ks-config-1"),
        "{:?}",
        target.write_log()
    );
}
