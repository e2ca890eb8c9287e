use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::blocks::conditions::{NewCondition, find, set_condition};
use crate::testing::{Call, FakeCluster, Op};

/// A parent kind with an optional `spec.targetClusterRef`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Parent {
    metadata: ObjectMeta,
    #[serde(default)]
    spec: ParentSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ParentSpec {
    target_cluster_ref: Option<TargetClusterRefSpec>,
}

crate::external::external_kind!(
    Parent,
    "glance.openstack.c5c3.io",
    "v1alpha1",
    "Glance",
    "glances",
    NamespaceResourceScope
);

fn target(parent: &Parent) -> Option<TargetClusterRefSpec> {
    parent.spec.target_cluster_ref.clone()
}

/// Resolves `remote` to a marker cluster and anything else to an error text.
struct Resolver {
    remote: FakeCluster,
}

impl ClusterResolver for Resolver {
    fn resolve(&self, target: &TargetClusterRefSpec) -> Result<Box<dyn Cluster + '_>, String> {
        if target.name == "remote" {
            Ok(Box::new(&self.remote))
        } else {
            Err(format!("cluster {:?} is not registered", target.name))
        }
    }
}

fn params<'a, 'c>(
    client: &'a FakeCluster,
    resolver: Option<&'a dyn ClusterResolver>,
    conditions: &'c mut Vec<Condition>,
    projection: &'a str,
) -> ResolveParams<'a, 'c, Parent> {
    ResolveParams {
        client,
        resolver,
        parent_namespace: "ns",
        parent_name: "glance",
        parent_kind: "Glance",
        target_cluster_ref: target,
        conditions,
        generation: 4,
        gate_condition_type: "CredentialsReady",
        waiting_for_parent_reason: "WaitingForParent",
        waiting_for_parent_message: "parent Glance glance not found",
        projection_condition_type: projection,
        projection_demotion_reason: "ParentMissing",
        projection_demotion_message: "parent gone",
        requeue_after: Duration::from_secs(15),
    }
}

fn parent(target: Option<&str>) -> serde_json::Value {
    let mut p = json!({"apiVersion": "glance.openstack.c5c3.io/v1alpha1", "kind": "Glance",
        "metadata": {"name": "glance", "namespace": "ns"}, "spec": {}});
    if let Some(t) = target {
        p["spec"]["targetClusterRef"] = json!({"name": t});
    }
    p
}

fn projected(status: &str) -> Vec<Condition> {
    let mut conditions = Vec::new();
    set_condition(
        &mut conditions,
        &NewCondition {
            type_: "ConfigProjected",
            status: if status == "True" { "True" } else { "False" },
            reason: "Before",
            message: "before",
            observed_generation: 3,
        },
    );
    conditions
}

fn is_local(resolution: &Resolution<'_, Parent>, client: &FakeCluster) -> bool {
    match resolution {
        Resolution::Resolved {
            children: Children::Local(c),
            ..
        } => std::ptr::addr_eq(*c as *const dyn Cluster, client as *const FakeCluster),
        _ => false,
    }
}

#[test]
fn a_non_not_found_read_of_the_parent_is_an_error_and_no_client() {
    let client = FakeCluster::new().failing(Op::Get, "glance", ApiError::Forbidden("no".into()));
    let mut conditions = Vec::new();
    let err = resolve_parent_children(params(&client, None, &mut conditions, ""))
        .err()
        .expect("fails");
    assert_eq!(
        err.to_string(),
        "fetching parent Glance ns/glance: forbidden: no"
    );
    assert!(conditions.is_empty());
}

#[test]
fn a_missing_parent_sets_the_gate_false_and_requeues_without_a_local_fallback() {
    let client = FakeCluster::new();
    let mut conditions = Vec::new();
    let resolution =
        resolve_parent_children(params(&client, None, &mut conditions, "")).expect("no error");
    assert!(matches!(resolution, Resolution::Requeue(d) if d == Duration::from_secs(15)));
    let gate = find(&conditions, "CredentialsReady").expect("set");
    assert_eq!(
        (
            gate.status.as_str(),
            gate.reason.as_str(),
            gate.message.as_str()
        ),
        (
            "False",
            "WaitingForParent",
            "parent Glance glance not found"
        )
    );
    assert_eq!(gate.observed_generation, Some(4));
}

#[test]
fn the_projection_demotion_is_opt_in_and_only_demotes_a_true_condition() {
    type Case = (
        &'static str,
        &'static str,
        Vec<Condition>,
        Option<(&'static str, &'static str)>,
    );
    let cases: [Case; 4] = [
        (
            "a named projection condition standing True is demoted",
            "ConfigProjected",
            projected("True"),
            Some(("False", "ParentMissing")),
        ),
        (
            "an empty projection type demotes nothing",
            "",
            projected("True"),
            Some(("True", "Before")),
        ),
        (
            "an already False projection condition is left untouched",
            "ConfigProjected",
            projected("False"),
            Some(("False", "Before")),
        ),
        (
            "an absent projection condition stays absent",
            "ConfigProjected",
            Vec::new(),
            None,
        ),
    ];
    for (case, projection, mut conditions, expected) in cases {
        let client = FakeCluster::new();
        resolve_parent_children(params(&client, None, &mut conditions, projection)).expect(case);
        let got =
            find(&conditions, "ConfigProjected").map(|c| (c.status.as_str(), c.reason.as_str()));
        assert_eq!(got, expected, "{case}");
    }
}

#[test]
fn without_a_resolver_or_a_target_the_children_are_local() {
    for (case, target, with_resolver) in [
        ("no resolver keeps everything local", Some("remote"), false),
        ("a parent without targetClusterRef is local", None, true),
    ] {
        let client = FakeCluster::new().with(parent(target));
        let resolver = Resolver {
            remote: FakeCluster::new(),
        };
        let resolver: Option<&dyn ClusterResolver> = with_resolver.then_some(&resolver as _);
        let mut conditions = Vec::new();
        let resolution =
            resolve_parent_children(params(&client, resolver, &mut conditions, "")).expect(case);
        assert!(is_local(&resolution, &client), "{case}");
        assert!(conditions.is_empty(), "{case}");
    }
}

#[test]
fn a_resolved_target_hands_back_the_parent_and_the_remote_cluster() {
    let client = FakeCluster::new().with(parent(Some("remote")));
    let resolver = Resolver {
        remote: FakeCluster::new(),
    };
    let mut conditions = Vec::new();
    let resolution = resolve_parent_children(params(&client, Some(&resolver), &mut conditions, ""))
        .expect("resolves");
    let Resolution::Resolved { parent, children } = resolution else {
        panic!("not resolved");
    };
    assert_eq!(parent.metadata.name.as_deref(), Some("glance"));
    assert!(matches!(children, Children::Remote(_)));
    let _ = children.get(
        &crate::object::ObjectRef::of::<k8s_openapi::api::core::v1::Secret>(Some("ns"), "x"),
        crate::cluster::ReadFrom::Cache,
    );
    assert!(
        matches!(&resolver.remote.calls()[..], [Call::Get(..)]),
        "reads go to the remote cluster"
    );
}

#[test]
fn an_unresolvable_target_sets_target_cluster_unavailable_with_the_resolver_text() {
    let client = FakeCluster::new().with(parent(Some("elsewhere")));
    let resolver = Resolver {
        remote: FakeCluster::new(),
    };
    let mut conditions = Vec::new();
    let resolution = resolve_parent_children(params(&client, Some(&resolver), &mut conditions, ""))
        .expect("no error");
    assert!(matches!(resolution, Resolution::Requeue(d) if d == Duration::from_secs(15)));
    let gate = find(&conditions, "CredentialsReady").expect("set");
    assert_eq!(gate.reason, REASON_TARGET_CLUSTER_UNAVAILABLE);
    assert_eq!(gate.message, "cluster \"elsewhere\" is not registered");
}
