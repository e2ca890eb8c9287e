use k8s_openapi::api::core::v1::Secret;
use serde_json::{Value, json};

use super::*;
use crate::testing::{FakeCluster, Op};

const OWNER: RemoteOwner<'static> = RemoteOwner {
    kind: "Glance",
    namespace: "ns",
    name: "g",
};

fn labelled(kind: &str, api_version: &str, name: &str, owner_name: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"namespace": "ns", "name": name, "labels": {
            "openstack.c5c3.io/owner-kind": "Glance",
            "openstack.c5c3.io/owner-name": owner_name,
            "openstack.c5c3.io/owner-namespace": "ns",
        }},
    })
}

#[test]
fn the_owner_selector_names_kind_name_and_namespace() {
    assert_eq!(
        OWNER.selector(),
        "openstack.c5c3.io/owner-kind=Glance,openstack.c5c3.io/owner-name=g,\
         openstack.c5c3.io/owner-namespace=ns"
    );
}

#[test]
fn a_sweep_deletes_the_owners_labelled_children_of_the_kinds_given_and_nothing_else() {
    let target = FakeCluster::new()
        .with(labelled("Secret", "v1", "g-config", "g"))
        .with(labelled("Deployment", "apps/v1", "g", "g"))
        .with(labelled("Secret", "v1", "other-config", "other"))
        .with(labelled("ConfigMap", "v1", "g-extra", "g"));
    let kinds = [
        KindRef::of::<Secret>(),
        KindRef::of::<k8s_openapi::api::apps::v1::Deployment>(),
    ];
    let sent = sweep(&target, OWNER, &kinds).expect("swept");
    assert_eq!(sent, 2);
    assert_eq!(target.deletes(), ["Secret g-config", "Deployment g"]);
    assert!(target.server("Secret", "other-config").is_some());
    assert!(
        target.server("ConfigMap", "g-extra").is_some(),
        "a kind not given is left"
    );
}

#[test]
fn a_failed_list_names_the_kind_and_the_cause() {
    let target = FakeCluster::new().failing(
        Op::List,
        "Secret",
        ApiError::Forbidden("secrets is forbidden".into()),
    );
    let error = sweep(&target, OWNER, &[KindRef::of::<Secret>()]).expect_err("refused");
    assert_eq!(error.what, "listing the Secret children");
    assert!(
        matches!(&error.source, ApiError::Forbidden(m) if m == "secrets is forbidden"),
        "{error}"
    );
}

#[test]
fn a_child_already_gone_is_not_an_error() {
    let target = FakeCluster::new()
        .with(labelled("Secret", "v1", "g-config", "g"))
        .failing(Op::Delete, "g-config", ApiError::NotFound("gone".into()));
    assert_eq!(
        sweep(&target, OWNER, &[KindRef::of::<Secret>()]).expect("swept"),
        0
    );
}

#[test]
fn the_wait_and_abandon_texts_say_the_bound_and_the_kind() {
    assert_eq!(
        wait_message("target cluster \"edge\" is not registered", "edge"),
        "target cluster \"edge\" is not registered; waiting at least 5m0s before abandoning \
         the children on target cluster \"edge\""
    );
    assert_eq!(
        abandoned_message("Glance"),
        "Target cluster is no longer registered; releasing the remote-children finalizer \
         without deleting the objects on it labelled as owned by this Glance"
    );
}

#[test]
fn every_kind_of_the_facts_is_swept() {
    let kinds: Vec<String> = swept().iter().map(|k| k.kind.clone()).collect();
    assert_eq!(
        kinds,
        [
            "Deployment",
            "Service",
            "ConfigMap",
            "Secret",
            "ServiceAccount",
            "Role",
            "RoleBinding",
            "Job",
            "CronJob",
            "PodDisruptionBudget",
            "HorizontalPodAutoscaler",
            "NetworkPolicy",
            "HTTPRoute",
            "Certificate",
            "PushSecret",
            "Database",
            "User",
            "Grant",
        ]
    );
}

fn meta(finalizer: bool, deleted_ago: Option<u64>) -> (ObjectMeta, Time) {
    let now = crate::blocks::conditions::now();
    let deletion_timestamp = deleted_ago.map(|ago| {
        let ago = i64::try_from(ago).expect("small");
        Time(now.0 - k8s_openapi::jiff::SignedDuration::from_secs(ago))
    });
    let metadata = ObjectMeta {
        finalizers: finalizer.then(|| vec![FINALIZER.to_owned()]),
        deletion_timestamp,
        ..ObjectMeta::default()
    };
    (metadata, now)
}

#[test]
fn a_live_primary_is_gated_until_its_target_opens_and_holds_the_finalizer_before_any_child() {
    let refused = "target cluster \"edge\" is not registered";
    // (targeted, holds the finalizer, the target's error) → the gate
    let table = [
        (false, false, None, Gate::Open),
        (true, true, None, Gate::Open),
        (true, false, None, Gate::AddFinalizer),
        (
            true,
            false,
            Some(refused),
            Gate::Unavailable(refused.into()),
        ),
        (true, true, Some(refused), Gate::Unavailable(refused.into())),
    ];
    for (targeted, holds, error, expected) in table {
        let (metadata, _) = meta(holds, None);
        assert_eq!(
            gate(&metadata, targeted, error),
            expected,
            "targeted {targeted}, finalizer {holds}, error {error:?}"
        );
    }
}

#[test]
fn a_deleting_primary_sweeps_an_open_target_waits_five_minutes_for_a_closed_one_then_abandons() {
    let refused = "target cluster \"edge\" is not registered";
    let waiting = Deletion::Wait(wait_message(refused, "edge"));
    // (holds the finalizer, seconds since the deletionTimestamp, the target's error) → what
    let table = [
        (false, 0, Some(refused), Deletion::NotHeld),
        (true, 0, None, Deletion::Sweep),
        (true, 600, None, Deletion::Sweep),
        (true, 0, Some(refused), waiting.clone()),
        (true, 299, Some(refused), waiting),
        (true, 300, Some(refused), Deletion::Abandon),
    ];
    for (holds, ago, error, expected) in table {
        let (metadata, now) = meta(holds, Some(ago));
        assert_eq!(
            deletion(&metadata, "edge", error, &now),
            expected,
            "finalizer {holds}, {ago} s ago, error {error:?}"
        );
    }
}

#[test]
fn opening_no_ref_opens_nothing_and_an_unregistered_name_gives_the_hosts_text() {
    let cluster = FakeCluster::new();
    let none = open(&cluster, None);
    assert!(none.target.is_none() && none.error.is_none());
    let refused = open(&cluster, Some("edge"));
    assert!(refused.target.is_none());
    assert_eq!(
        refused.error.as_deref(),
        Some("target cluster \"edge\" is not registered")
    );
}
