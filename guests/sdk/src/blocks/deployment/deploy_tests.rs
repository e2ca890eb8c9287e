use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentCondition, DeploymentSpec, DeploymentStatus,
};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    FieldsV1, LabelSelector, ManagedFieldsEntry, ObjectMeta,
};
use serde_json::json;

use super::*;
use crate::object::ObjectRef;
use crate::testing::{Call, FakeCluster, owner};

fn labels(app: &str) -> Option<BTreeMap<String, String>> {
    Some(BTreeMap::from([("app".to_owned(), app.to_owned())]))
}

/// A Deployment `api` selecting `app=<app>`, with `replicas`.
fn deployment(app: &str, replicas: Option<i32>) -> Deployment {
    Deployment {
        metadata: ObjectMeta {
            name: Some("api".into()),
            namespace: Some("ns".into()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas,
            selector: LabelSelector {
                match_labels: labels(app),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: labels(app),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "api".into(),
                        image: Some("keystone:1".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    }
}

/// `d` with managedFields entries of `operations` owning `spec.replicas`.
fn owning_replicas(mut d: Deployment, operations: &[&str]) -> Deployment {
    d.metadata.managed_fields = Some(
        operations
            .iter()
            .map(|operation| ManagedFieldsEntry {
                manager: Some(format!("{operation}-manager")),
                operation: Some((*operation).to_owned()),
                api_version: Some("apps/v1".into()),
                fields_type: Some("FieldsV1".into()),
                fields_v1: Some(FieldsV1(json!({"f:spec": {"f:replicas": {}}}))),
                ..Default::default()
            })
            .collect(),
    );
    d
}

fn with_status(mut d: Deployment, ready: Option<i32>, available: Option<&str>) -> Deployment {
    d.status = Some(DeploymentStatus {
        ready_replicas: ready,
        conditions: available.map(|status| {
            vec![DeploymentCondition {
                type_: Some("Available".into()),
                status: Some(status.into()),
                ..Default::default()
            }]
        }),
        ..Default::default()
    });
    d
}

#[test]
fn is_deployment_ready_follows_its_table() {
    let cases = [
        (
            "spec.replicas unset defaults to 1: one ready replica and Available is ready",
            with_status(deployment("a", None), Some(1), Some("True")),
            true,
        ),
        (
            "spec.replicas unset defaults to 1: no ready replica is not ready",
            with_status(deployment("a", None), None, Some("True")),
            false,
        ),
        (
            "no Available condition is not ready",
            with_status(deployment("a", Some(1)), Some(1), None),
            false,
        ),
        (
            "Available=False is not ready",
            with_status(deployment("a", Some(1)), Some(1), Some("False")),
            false,
        ),
        (
            "readyReplicas below the desired count is not ready",
            with_status(deployment("a", Some(3)), Some(2), Some("True")),
            false,
        ),
        (
            "readyReplicas at the desired count and Available=True is ready",
            with_status(deployment("a", Some(3)), Some(3), Some("True")),
            true,
        ),
        (
            "readyReplicas above the desired count and Available=True is ready",
            with_status(deployment("a", Some(2)), Some(3), Some("True")),
            true,
        ),
        (
            "no status at all is not ready",
            deployment("a", Some(1)),
            false,
        ),
    ];
    for (case, d, ready) in cases {
        assert_eq!(is_deployment_ready(&d), ready, "{case}");
    }
}

#[test]
fn plan_deployment_decides_recreate_and_kept_replicas() {
    let cases = [
        (
            "no existing Deployment: nothing to do before the apply",
            None,
            deployment("a", None),
            DeploymentPlan::default(),
        ),
        (
            "an unchanged selector with replicas set applies as is",
            Some(deployment("a", Some(5))),
            deployment("a", Some(3)),
            DeploymentPlan::default(),
        ),
        (
            "replicas unset that only an applier owns (an earlier builder) keep the count",
            Some(owning_replicas(deployment("a", Some(5)), &["Apply"])),
            deployment("a", None),
            DeploymentPlan {
                recreate: false,
                keep_replicas: Some(5),
            },
        ),
        (
            "replicas unset that an updater owns (the HPA) are left to it",
            Some(owning_replicas(
                deployment("a", Some(5)),
                &["Apply", "Update"],
            )),
            deployment("a", None),
            DeploymentPlan::default(),
        ),
        (
            "replicas unset that no one owns (the server's default) stay as defaulted",
            Some(deployment("a", Some(1))),
            deployment("a", None),
            DeploymentPlan::default(),
        ),
        (
            "a changed selector deletes and re-creates",
            Some(deployment("a", Some(5))),
            deployment("b", Some(3)),
            DeploymentPlan {
                recreate: true,
                keep_replicas: None,
            },
        ),
        (
            "a changed selector with replicas unset re-creates without keeping a count",
            Some(deployment("a", Some(5))),
            deployment("b", None),
            DeploymentPlan {
                recreate: true,
                keep_replicas: None,
            },
        ),
    ];
    for (case, existing, desired, plan) in cases {
        assert_eq!(plan_deployment(existing.as_ref(), &desired), plan, "{case}");
    }
}

#[test]
fn an_empty_expression_list_and_an_absent_one_are_the_same_selector() {
    let mut desired = deployment("a", Some(1));
    desired.spec.selector.match_expressions = Some(vec![]);
    let plan = plan_deployment(Some(&deployment("a", Some(1))), &desired);
    assert!(!plan.recreate);
}

fn stored(d: &Deployment) -> serde_json::Value {
    serde_json::to_value(d).expect("encodes")
}

#[test]
fn a_new_deployment_is_applied_with_the_owner_and_is_not_ready_yet() {
    let cluster = FakeCluster::new();
    let stored = ensure_deployment(&cluster, &owner(), &deployment("a", Some(1))).expect("ok");
    assert!(!is_deployment_ready(&stored));
    let object = cluster
        .object(&ObjectRef::of::<Deployment>(Some("ns"), "api"))
        .expect("stored");
    assert_eq!(object["metadata"]["ownerReferences"][0]["uid"], "owner-uid");
}

#[test]
fn readiness_is_read_off_the_server_response() {
    let existing = with_status(deployment("a", Some(1)), Some(1), Some("True"));
    let cluster = FakeCluster::new().with(stored(&existing));
    let stored = ensure_deployment(&cluster, &owner(), &deployment("a", Some(1))).expect("ok");
    assert!(is_deployment_ready(&stored));
    assert_eq!(
        stored.status.as_ref().and_then(|s| s.ready_replicas),
        Some(1),
        "the stored status"
    );
}

#[test]
fn a_converged_deployment_is_not_rewritten() {
    let cluster = FakeCluster::new();
    ensure_deployment(&cluster, &owner(), &deployment("a", Some(2))).expect("1");
    ensure_deployment(&cluster, &owner(), &deployment("a", Some(2))).expect("2");
    assert_eq!(cluster.writes().len(), 1, "{:?}", cluster.writes());
}

#[test]
fn a_selector_change_deletes_then_applies_the_new_deployment() {
    let cluster = FakeCluster::new().with(stored(&deployment("a", Some(1))));
    ensure_deployment(&cluster, &owner(), &deployment("b", Some(1))).expect("ok");
    let writes = cluster.writes();
    assert!(
        matches!(
            &writes[..],
            [
                Call::Delete(
                    _,
                    crate::cluster::DeleteOptions {
                        propagation: Propagation::Background,
                        ..
                    }
                ),
                Call::Apply { .. }
            ]
        ),
        "{writes:?}"
    );
    let object = cluster
        .object(&ObjectRef::of::<Deployment>(Some("ns"), "api"))
        .expect("stored");
    assert_eq!(
        object["spec"]["selector"],
        json!({"matchLabels": {"app": "b"}})
    );
}

#[test]
fn unset_replicas_this_operator_still_owns_apply_the_count_the_server_holds() {
    let cluster = FakeCluster::new().with(stored(&deployment("a", Some(7))));
    // The host's cache keeps no managedFields; the server says the operator's earlier
    // apply owns the count.
    cluster.freeze_cache();
    let owned = owning_replicas(deployment("a", Some(7)), &["Apply"]);
    cluster.change("Deployment", "api", |d| {
        d["metadata"]["managedFields"] = stored(&owned)["metadata"]["managedFields"].clone();
    });
    ensure_deployment(&cluster, &owner(), &deployment("a", None)).expect("ok");
    assert_eq!(cluster.applied()[0]["spec"]["replicas"], 7);
}

#[test]
fn unset_replicas_an_hpa_owns_are_left_out_of_the_apply() {
    let existing = owning_replicas(deployment("a", Some(7)), &["Update"]);
    let cluster = FakeCluster::new().with(stored(&existing));
    ensure_deployment(&cluster, &owner(), &deployment("a", None)).expect("ok");
    let applied = &cluster.applied()[0];
    assert!(applied["spec"].get("replicas").is_none(), "{applied}");
}

#[test]
fn unset_replicas_are_left_out_of_the_apply_when_the_server_shows_the_hpa_took_them_over() {
    let existing = owning_replicas(deployment("a", Some(1)), &["Apply"]);
    let cluster = FakeCluster::new().with(stored(&existing));
    cluster.freeze_cache();
    // The HPA scales to 5 and owns the count now; the cache still shows 1, owned by the
    // operator's earlier apply.
    cluster.change("Deployment", "api", |d| {
        d["spec"]["replicas"] = json!(5);
        d["metadata"]["managedFields"][0]["operation"] = json!("Update");
    });
    ensure_deployment(&cluster, &owner(), &deployment("a", None)).expect("ok");
    let applied = &cluster.applied()[0];
    assert!(applied["spec"].get("replicas").is_none(), "{applied}");
}

#[test]
fn a_lagging_cache_never_deletes_the_deployment_just_recreated() {
    let cluster = FakeCluster::new().with(stored(&deployment("a", Some(1))));
    cluster.freeze_cache();
    ensure_deployment(&cluster, &owner(), &deployment("b", Some(1))).expect("recreate");
    let api = ObjectRef::of::<Deployment>(Some("ns"), "api");
    let recreated = cluster.object(&api).expect("stored")["metadata"]["uid"].clone();
    cluster.clear_calls();
    // The cache still shows the Deployment with the old selector.
    ensure_deployment(&cluster, &owner(), &deployment("b", Some(1))).expect("second pass");
    assert_eq!(
        cluster.object(&api).expect("stored")["metadata"]["uid"],
        recreated
    );
    assert!(
        !cluster
            .writes()
            .iter()
            .any(|c| matches!(c, Call::Delete(..))),
        "{:?}",
        cluster.writes()
    );
}

#[test]
fn a_selector_change_deletes_with_the_uid_and_resource_version_read_on_the_server() {
    let cluster = FakeCluster::new().with(stored(&deployment("a", Some(1))));
    let api = ObjectRef::of::<Deployment>(Some("ns"), "api");
    let before = cluster.object(&api).expect("stored");
    ensure_deployment(&cluster, &owner(), &deployment("b", Some(1))).expect("recreate");
    let preconditions: Vec<_> = cluster
        .writes()
        .into_iter()
        .filter_map(|c| match c {
            Call::Delete(_, options) => Some(options.preconditions),
            _ => None,
        })
        .collect();
    assert_eq!(
        preconditions,
        [crate::cluster::Preconditions {
            uid: before["metadata"]["uid"].as_str().map(str::to_owned),
            resource_version: before["metadata"]["resourceVersion"]
                .as_str()
                .map(str::to_owned),
        }]
    );
}
