use wasm_operator_sdk::admission::{AdmittedKind, FailurePolicy, Operation};

use super::*;

#[test]
fn it_declares_the_store_and_exactly_the_verbs_its_controller_and_admission_use() {
    let d = describe();
    assert_eq!(d.name, "barbicansecretstores");
    assert_eq!(
        (
            d.primary.api_version.as_str(),
            d.primary.kind.as_str(),
            d.primary.plural.as_str()
        ),
        (
            "barbican.openstack.c5c3.io/v1alpha1",
            "BarbicanSecretStore",
            "barbicansecretstores"
        )
    );
    assert!(d.primary.namespaced);
    assert_eq!(d.primary_predicates, [Predicate::GenerationChanged]);
    use Verb::{Create, Delete, Get, List, Patch, UpdateStatus, Watch};
    let table: Vec<(&str, &str, &str, Vec<Verb>)> = d
        .permissions
        .iter()
        .map(|p| {
            (
                p.kind.api_version.as_str(),
                p.kind.kind.as_str(),
                p.kind.plural.as_str(),
                p.verbs.clone(),
            )
        })
        .collect();
    assert_eq!(
        table,
        [
            (
                "barbican.openstack.c5c3.io/v1alpha1",
                "BarbicanSecretStore",
                "barbicansecretstores",
                vec![Get, List, Watch, Patch, UpdateStatus]
            ),
            (
                "barbican.openstack.c5c3.io/v1alpha1",
                "Barbican",
                "barbicans",
                vec![Get, List, Watch]
            ),
            ("v1", "Secret", "secrets", vec![Get, List, Patch, Delete]),
            (
                "apps/v1",
                "Deployment",
                "deployments",
                vec![Get, List, Watch]
            ),
            (
                "openbao.org/v1alpha1",
                "OpenBaoCluster",
                "openbaoclusters",
                vec![Get, List, Watch]
            ),
        ]
    );
    let subresources: Vec<(&str, &str, Vec<Verb>)> = d
        .subresources
        .iter()
        .map(|s| {
            (
                s.kind.kind.as_str(),
                s.subresource.as_str(),
                s.verbs.clone(),
            )
        })
        .collect();
    assert_eq!(subresources, [("ServiceAccount", "token", vec![Create])]);
    assert_eq!(d.egress, ["*.svc:8200", "*.svc.cluster.local:8200"]);
}

#[test]
fn a_barbican_its_deployment_and_an_openbao_cluster_wake_the_stores_naming_them() {
    let d = describe();
    let watched: Vec<(&str, &Mapping, bool)> = d
        .watches
        .iter()
        .map(|w| (w.kind.kind.as_str(), &w.mapping, w.optional))
        .collect();
    let by_barbican = Mapping::FieldIndex(indexes::BARBICAN_REF.into());
    let by_instance = Mapping::FieldIndex(indexes::INSTANCE_REF.into());
    assert_eq!(
        watched,
        [
            ("Barbican", &by_barbican, true),
            ("Deployment", &by_barbican, false),
            ("OpenBaoCluster", &by_instance, true),
        ]
    );
    assert_eq!(
        d.indexes
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>(),
        [indexes::BARBICAN_REF, indexes::INSTANCE_REF]
    );
    assert!(d.watched_indexes.is_empty());
}

#[test]
fn writes_of_stores_are_defaulted_and_validated_failing_closed() {
    let d = describe();
    assert_eq!(
        d.admission,
        [AdmittedKind {
            kind: d.primary.clone(),
            default_on: vec![Operation::Create, Operation::Update],
            validate_on: vec![Operation::Create, Operation::Update],
            failure_policy: FailurePolicy::Fail,
        }]
    );
}

#[test]
fn every_kind_the_plugin_watches_it_may_list_and_watch() {
    let d = describe();
    for watch in &d.watches {
        let permission = d
            .permissions
            .iter()
            .find(|p| p.kind == watch.kind)
            .unwrap_or_else(|| panic!("no permission on {}", watch.kind.kind));
        for verb in [Verb::List, Verb::Watch] {
            assert!(
                permission.verbs.contains(&verb),
                "{} {verb:?}",
                watch.kind.kind
            );
        }
    }
}

#[test]
fn a_store_can_sweep_its_secrets_from_a_target_cluster() {
    use wasm_operator_sdk::KindRef;
    use wasm_operator_sdk::k8s_openapi::api::core::v1::Secret;
    wasm_operator_sdk::testing::assert_can_sweep(&describe(), &[KindRef::of::<Secret>()]);
}
