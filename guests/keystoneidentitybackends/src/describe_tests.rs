use serde_json::json;
use wasm_operator_sdk::object::object_key;

use super::*;

#[test]
fn it_declares_the_backend_and_exactly_the_verbs_its_controller_and_admission_use() {
    let d = describe();
    assert_eq!(d.name, "keystoneidentitybackends");
    assert_eq!(
        (
            d.primary.api_version.as_str(),
            d.primary.kind.as_str(),
            d.primary.plural.as_str()
        ),
        (
            "keystone.openstack.c5c3.io/v1alpha1",
            "KeystoneIdentityBackend",
            "keystoneidentitybackends"
        )
    );
    assert!(d.primary.namespaced);
    assert_eq!(d.primary_predicates, [Predicate::GenerationChanged]);
    use Verb::{Get, List, Patch, UpdateStatus, Watch};
    let table: Vec<(&str, &str, Vec<Verb>)> = d
        .permissions
        .iter()
        .map(|p| {
            (
                p.kind.api_version.as_str(),
                p.kind.kind.as_str(),
                p.verbs.clone(),
            )
        })
        .collect();
    assert_eq!(
        table,
        [
            (
                "keystone.openstack.c5c3.io/v1alpha1",
                "KeystoneIdentityBackend",
                vec![Get, List, Watch, Patch, UpdateStatus]
            ),
            (
                "keystone.openstack.c5c3.io/v1alpha1",
                "Keystone",
                vec![Get, List, Watch]
            ),
            ("v1", "Secret", vec![Get]),
            ("apps/v1", "Deployment", vec![Get, List, Watch]),
        ]
    );
    assert!(d.subresources.is_empty());
}

#[test]
fn a_keystone_and_its_deployment_wake_the_backends_naming_that_keystone() {
    let d = describe();
    let watched: Vec<(&str, &Mapping, bool)> = d
        .watches
        .iter()
        .map(|w| (w.kind.kind.as_str(), &w.mapping, w.optional))
        .collect();
    let by_keystone = Mapping::FieldIndex(indexes::KEYSTONE_REF.into());
    assert_eq!(
        watched,
        [
            ("Keystone", &by_keystone, true),
            ("Deployment", &by_keystone, false),
        ]
    );
    assert_eq!(
        d.indexes
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>(),
        [indexes::KEYSTONE_REF]
    );
    assert!(d.watched_indexes.is_empty());
    // The host maps a watched object by its own key: the Keystone `keystone` and its
    // Deployment `keystone` both find the backend naming it.
    let backend = json!({"metadata": {"name": "corp", "namespace": "openstack"},
                         "spec": {"keystoneRef": {"name": "keystone"}}});
    assert_eq!(
        indexes::keys(indexes::KEYSTONE_REF, &backend),
        [object_key(Some("openstack"), "keystone")]
    );
}

#[test]
fn it_may_reach_only_the_keystone_api_port_of_services() {
    assert_eq!(describe().egress, ["*.svc.cluster.local:5000"]);
}

#[test]
fn writes_of_backends_are_defaulted_and_validated_failing_closed() {
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
