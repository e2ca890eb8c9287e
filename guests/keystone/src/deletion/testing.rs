//! What the deletion tests share: a Keystone being deleted, the clock of a pass, its
//! backups, and reading back what a pass did.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ObjectRef, Outcome, ReconcileError, Request};

use crate::finalizers::{FINALIZER, OPENBAO_FINALIZER};
use crate::pass::Pass;
use crate::types::Keystone;

/// When the Keystone of [`deleting`] was deleted.
pub(crate) const DELETED_AT: &str = "2026-03-01T12:00:00Z";

/// A finalizer another controller put on the Keystone.
pub(crate) const FOREIGN: &str = "example.com/keep";

/// Our two finalizers and a foreign one after them.
pub(crate) const ALL_OURS_AND_FOREIGN: &[&str] = &[FINALIZER, OPENBAO_FINALIZER, FOREIGN];

/// `crate::testing::keystone()` deleted at [`DELETED_AT`], carrying `finalizers`.
pub(crate) fn deleting(finalizers: &[&str]) -> Value {
    deleting_from(crate::testing::keystone(), finalizers)
}

/// `object` deleted at [`DELETED_AT`], carrying `finalizers`.
pub(crate) fn deleting_from(mut object: Value, finalizers: &[&str]) -> Value {
    object["metadata"]["deletionTimestamp"] = json!(DELETED_AT);
    object["metadata"]["finalizers"] = json!(finalizers);
    object
}

/// The time `seconds` after [`DELETED_AT`].
pub(crate) fn after(seconds: i64) -> Time {
    let deleted: Timestamp = DELETED_AT.parse().expect("a timestamp");
    Time(
        deleted
            .checked_add(SignedDuration::from_secs(seconds))
            .expect("in range"),
    )
}

/// A pass at `seconds` after the deletion, over the Keystone as `cluster` stores it.
pub(crate) fn pass_at(cluster: &FakeCluster, seconds: i64) -> Pass<'_> {
    let stored = cluster.server("Keystone", "ks").expect("a stored Keystone");
    let mut pass = crate::testing::pass(cluster, &stored);
    pass.now = after(seconds);
    pass
}

/// One whole pass over Keystone `ns/ks` at `seconds` after the deletion.
pub(crate) fn reconcile_after(
    cluster: &FakeCluster,
    seconds: i64,
) -> Result<Outcome, ReconcileError> {
    let request = Request {
        namespace: Some("ns".into()),
        name: "ks".into(),
    };
    crate::reconcile::reconcile_at(cluster, &request, after(seconds))
}

/// The backup PushSecret `name` carrying `finalizers`, terminating when `terminating`.
pub(crate) fn push_secret(name: &str, finalizers: &[&str], terminating: bool) -> Value {
    let kind = if name.contains("fernet") {
        "fernet"
    } else {
        "credential"
    };
    let mut object = json!({"apiVersion": "external-secrets.io/v1alpha1", "kind": "PushSecret",
        "metadata": {"name": name, "namespace": "ns", "finalizers": finalizers},
        "spec": {"deletionPolicy": "Delete",
            "secretStoreRefs": [{"kind": "ClusterSecretStore", "name": "openbao-cluster-store"}],
            "selector": {"secret": {"name": format!("ks-{kind}-keys")}},
            "data": [{"match": {"remoteRef":
                {"remoteKey": format!("openstack/keystone/ns/ks/{kind}-keys")}}}]}});
    if terminating {
        object["metadata"]["deletionTimestamp"] = json!(DELETED_AT);
    }
    object
}

/// The finalizers of the Keystone as the server stores it.
pub(crate) fn finalizers(cluster: &FakeCluster) -> Vec<String> {
    let stored = cluster
        .object(&ObjectRef::of::<Keystone>(Some("ns"), "ks"))
        .expect("a stored Keystone");
    stored["metadata"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect()
}

/// `kind name` of every delete sent, in order.
pub(crate) fn deletes(cluster: &FakeCluster) -> Vec<String> {
    cluster.deletes()
}

/// The `(type, reason)` of every event recorded, in order.
pub(crate) fn event_reasons(cluster: &FakeCluster) -> Vec<(String, String)> {
    crate::testing::events(cluster)
        .into_iter()
        .map(|(type_, reason, _)| (type_, reason))
        .collect()
}

/// The note of the only event of `reason`.
pub(crate) fn note(cluster: &FakeCluster, reason: &str) -> String {
    let notes: Vec<String> = crate::testing::events(cluster)
        .into_iter()
        .filter(|(_, r, _)| r == reason)
        .map(|(_, _, note)| note)
        .collect();
    assert_eq!(notes.len(), 1, "one {reason} event: {notes:?}");
    notes[0].clone()
}
