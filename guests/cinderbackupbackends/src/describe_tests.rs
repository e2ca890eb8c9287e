use serde_json::json;
use wasm_operator_sdk::object::object_key;

use super::*;

#[test]
fn it_declares_the_target_and_exactly_the_verbs_its_controller_and_admission_use() {
    let d = describe();
    assert_eq!(d.name, "cinderbackupbackends");
    assert_eq!(
        (
            d.primary.api_version.as_str(),
            d.primary.kind.as_str(),
            d.primary.plural.as_str()
        ),
        (
            "cinder.openstack.c5c3.io/v1alpha1",
            "CinderBackupBackend",
            "cinderbackupbackends"
        )
    );
    assert!(d.primary.namespaced);
    assert_eq!(d.primary_predicates, [Predicate::GenerationChanged]);
    use Verb::{Get, List, UpdateStatus, Watch};
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
                "cinder.openstack.c5c3.io/v1alpha1",
                "CinderBackupBackend",
                vec![Get, List, Watch, UpdateStatus]
            ),
            (
                "cinder.openstack.c5c3.io/v1alpha1",
                "Cinder",
                vec![Get, List, Watch]
            ),
            ("v1", "Secret", vec![Get]),
            ("external-secrets.io/v1", "ExternalSecret", vec![Get]),
            ("apps/v1", "Deployment", vec![Get, List, Watch]),
        ]
    );
    assert!(d.subresources.is_empty());
    assert!(d.egress.is_empty(), "no HTTP egress");
}

#[test]
fn a_cinder_and_its_backup_deployment_wake_the_target_naming_that_cinder() {
    let d = describe();
    let watched: Vec<(&str, &Mapping, bool)> = d
        .watches
        .iter()
        .map(|w| (w.kind.kind.as_str(), &w.mapping, w.optional))
        .collect();
    let by_cinder = Mapping::FieldIndex(indexes::CINDER_REF.into());
    assert_eq!(
        watched,
        [
            ("Cinder", &by_cinder, true),
            ("Deployment", &by_cinder, false)
        ]
    );
    assert_eq!(
        d.indexes
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>(),
        [indexes::CINDER_REF]
    );
    assert!(d.watched_indexes.is_empty());
    // The host maps a watched object by its own key: the Cinder `cinder` and its
    // Deployment `cinder-backup` both find the target.
    let target = json!({"metadata": {"name": "nfsbk", "namespace": "openstack"},
                         "spec": {"cinderRef": {"name": "cinder"}}});
    assert_eq!(
        indexes::keys(indexes::CINDER_REF, &target),
        [
            object_key(Some("openstack"), "cinder"),
            object_key(Some("openstack"), "cinder-backup")
        ]
    );
}

#[test]
fn writes_of_targets_are_defaulted_and_validated_failing_closed() {
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
