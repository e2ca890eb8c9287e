use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicySpec};
use serde_json::{Value, json};

use super::*;
use crate::external::certmanager::Certificate;
use crate::testing::{Call, FakeCluster, Op, Refusal, owner};

fn policy() -> NetworkPolicy {
    NetworkPolicy {
        metadata: ObjectMeta {
            name: Some("keystone".into()),
            namespace: Some("ns".into()),
            ..Default::default()
        },
        spec: Some(NetworkPolicySpec {
            policy_types: Some(vec!["Ingress".into()]),
            ..Default::default()
        }),
    }
}

/// A NetworkPolicy `ns/keystone` stored with a controller reference to `owner_uid`.
fn stored_policy(owner_uid: Option<&str>) -> Value {
    let mut object = json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "keystone", "namespace": "ns"}, "spec": {"podSelector": {}}});
    if let Some(uid) = owner_uid {
        object["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "Keystone",
            "name": "keystone", "uid": uid, "controller": true}]);
    }
    object
}

fn run(
    cluster: &FakeCluster,
    desired: Option<&NetworkPolicy>,
) -> Result<Optional<NetworkPolicy>, Error> {
    ensure_or_delete(
        cluster,
        &owner(),
        "ns",
        "keystone",
        desired,
        WhenAbsent::Delete,
    )
}

fn deletes(cluster: &FakeCluster) -> Vec<DeleteOptions> {
    cluster
        .calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::Delete(_, options) => Some(options),
            _ => None,
        })
        .collect()
}

#[test]
fn a_set_spec_block_is_applied_under_the_owner() {
    let cluster = FakeCluster::new().refusing(Refusal::op(Op::Delete));
    let got = run(&cluster, Some(&policy())).expect("applies");
    assert!(matches!(got, Optional::Applied(_)), "{got:?}");
    let stored = cluster.server("NetworkPolicy", "keystone").expect("stored");
    assert_eq!(stored["metadata"]["ownerReferences"][0]["uid"], "owner-uid");
    assert_eq!(stored["spec"]["policyTypes"][0], "Ingress");
}

#[test]
fn an_absent_spec_block_deletes_the_object_the_owner_controls_as_it_was_read() {
    let cluster = FakeCluster::new().with(stored_policy(Some("owner-uid")));
    let uid = cluster.server("NetworkPolicy", "keystone").expect("stored")["metadata"]["uid"]
        .as_str()
        .map(str::to_owned);
    assert_eq!(
        run(&cluster, None).expect("deletes"),
        Optional::Absent { deleted: true }
    );
    assert!(cluster.server("NetworkPolicy", "keystone").is_none());
    assert_eq!(deletes(&cluster)[0].preconditions.uid, uid);
}

#[test]
fn an_absent_spec_block_without_an_object_deletes_nothing() {
    let cluster = FakeCluster::new().refusing(Refusal::op(Op::Delete));
    assert_eq!(
        run(&cluster, None).expect("nothing to delete"),
        Optional::Absent { deleted: false }
    );
    assert!(
        cluster
            .calls()
            .iter()
            .any(|c| matches!(c, Call::Get(r, _) if r.name == "keystone")),
        "the object was looked up"
    );
}

#[test]
fn an_absent_spec_block_leaves_an_object_the_owner_does_not_control() {
    for (case, uid) in [("no owner", None), ("another owner", Some("someone-else"))] {
        let cluster = FakeCluster::new()
            .with(stored_policy(uid))
            .refusing(Refusal::op(Op::Delete));
        assert_eq!(
            run(&cluster, None).expect(case),
            Optional::NotOwned,
            "{case}"
        );
        assert!(
            cluster.server("NetworkPolicy", "keystone").is_some(),
            "{case}"
        );
    }
}

#[test]
fn an_object_replaced_since_it_was_read_is_not_deleted() {
    let cluster = FakeCluster::new().with(stored_policy(Some("owner-uid")));
    cluster.freeze_cache();
    let mut replacement = stored_policy(Some("owner-uid"));
    replacement["metadata"]["uid"] = json!("replacement-uid");
    cluster.put(replacement);
    let err = run(&cluster, None).expect_err("the uid precondition fails");
    assert!(
        matches!(&err, Error::Delete { what, source: ApiError::Conflict(_) }
            if what == "NetworkPolicy ns/keystone"),
        "{err:?}"
    );
    let left = cluster.server("NetworkPolicy", "keystone").expect("kept");
    assert_eq!(left["metadata"]["uid"], "replacement-uid");
}

#[test]
fn a_delete_that_answers_not_found_is_absent_and_another_failure_an_error() {
    let cluster = FakeCluster::new()
        .with(stored_policy(Some("owner-uid")))
        .failing(Op::Delete, "keystone", ApiError::NotFound("gone".into()));
    assert_eq!(
        run(&cluster, None).expect("NotFound is fine"),
        Optional::Absent { deleted: false }
    );
    let cluster = FakeCluster::new()
        .with(stored_policy(Some("owner-uid")))
        .failing(Op::Delete, "keystone", ApiError::Forbidden("no".into()));
    let err = run(&cluster, None).expect_err("forbidden");
    assert!(
        matches!(
            &err,
            Error::Delete {
                source: ApiError::Forbidden(_),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "deleting NetworkPolicy ns/keystone: forbidden: no"
    );
}

#[test]
fn delete_if_served_does_nothing_for_a_kind_the_cluster_does_not_serve() {
    let cluster = FakeCluster::new()
        .not_serving("certificates")
        .refusing(Refusal::op(Op::Get))
        .refusing(Refusal::op(Op::Delete));
    let got = ensure_or_delete::<_, Certificate>(
        &cluster,
        &owner(),
        "ns",
        "keystone-db-client",
        None,
        WhenAbsent::DeleteIfServed,
    )
    .expect("nothing to do");
    assert_eq!(got, Optional::NotServed);
}

#[test]
fn delete_if_served_deletes_when_the_kind_is_served() {
    let cluster = FakeCluster::new().with(json!({"apiVersion": "cert-manager.io/v1",
        "kind": "Certificate", "metadata": {"name": "keystone-db-client", "namespace": "ns",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Keystone", "name": "keystone",
                "uid": "owner-uid", "controller": true}]},
        "spec": {"secretName": "keystone-db-client", "issuerRef": {"name": "ca"}}}));
    let got = ensure_or_delete::<_, Certificate>(
        &cluster,
        &owner(),
        "ns",
        "keystone-db-client",
        None,
        WhenAbsent::DeleteIfServed,
    )
    .expect("deletes");
    assert_eq!(got, Optional::Absent { deleted: true });
    assert_eq!(
        cluster.write_log(),
        ["delete Certificate ns/keystone-db-client"]
    );
}

#[test]
fn a_desired_object_of_another_name_is_refused_before_any_call() {
    let cluster = FakeCluster::new();
    let mut other = policy();
    other.metadata.name = Some("other".into());
    let err = run(&cluster, Some(&other)).expect_err("misnamed");
    assert!(matches!(&err, Error::Misnamed { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "NetworkPolicy ns/other was given to be ensured as ns/keystone"
    );
    assert!(cluster.calls().is_empty());
}
