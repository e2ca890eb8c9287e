//! What the host loads the Keystone plugin with: its kinds, watches and permissions.
//!
//! Permissions are exactly the verbs the steps use: a step that starts writing a kind adds
//! it here, and the test below lists them.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, Secret};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use wasm_operator_sdk::admission::{AdmittedKind, FailurePolicy, Operation};
use wasm_operator_sdk::blocks::apply::FIELD_MANAGER;
use wasm_operator_sdk::external::certmanager::Certificate;
use wasm_operator_sdk::external::mariadb::{Database, Grant, MariaDb, User};
use wasm_operator_sdk::{Description, KindRef, Mapping, Permission, Predicate, Verb, Watch};

use crate::types::Keystone;

/// The plugin's name.
pub const NAME: &str = "keystone";

fn permission(kind: KindRef, verbs: &[Verb]) -> Permission {
    Permission {
        kind,
        verbs: verbs.to_vec(),
    }
}

/// The plugin's description.
pub fn describe() -> Description {
    use Verb::{Create, Delete, Get, List, Patch, UpdateStatus, Watch as W};
    let primary = KindRef::of::<Keystone>();
    Description {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        field_manager: FIELD_MANAGER.into(),
        primary: primary.clone(),
        primary_predicates: vec![Predicate::GenerationChanged],
        watches: vec![
            Watch {
                kind: KindRef::of::<Secret>(),
                mapping: Mapping::Owner,
                optional: false,
            },
            Watch {
                kind: KindRef::of::<Certificate>(),
                mapping: Mapping::Owner,
                optional: true,
            },
            Watch {
                kind: KindRef::of::<Job>(),
                mapping: Mapping::Owner,
                optional: false,
            },
        ],
        watched_indexes: vec![],
        subresources: vec![],
        admission: vec![AdmittedKind {
            kind: primary.clone(),
            default_on: vec![Operation::Create, Operation::Update],
            validate_on: vec![Operation::Create, Operation::Update],
            failure_policy: FailurePolicy::Fail,
        }],
        egress: vec![],
        indexes: vec![],
        permissions: vec![
            permission(primary, &[Get, List, W, UpdateStatus]),
            permission(KindRef::of::<Secret>(), &[Get, List, W, Create, Patch]),
            permission(KindRef::of::<Certificate>(), &[Get, List, W, Patch, Delete]),
            // Admission checks that spec.deployment.priorityClassName exists.
            permission(KindRef::of::<PriorityClass>(), &[Get]),
            permission(KindRef::of::<MariaDb>(), &[Get]),
            permission(KindRef::of::<Database>(), &[Patch]),
            permission(KindRef::of::<User>(), &[Patch]),
            permission(KindRef::of::<Grant>(), &[Patch]),
            permission(KindRef::of::<Job>(), &[Get, List, W, Create, Delete]),
            permission(KindRef::of::<Pod>(), &[List]),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_declares_the_keystone_and_exactly_the_verbs_its_steps_use() {
        let d = describe();
        assert_eq!(d.primary.api_version, "keystone.openstack.c5c3.io/v1alpha1");
        assert_eq!(d.primary.plural, "keystones");
        let table: Vec<(String, Vec<Verb>)> = d
            .permissions
            .iter()
            .map(|p| (p.kind.kind.clone(), p.verbs.clone()))
            .collect();
        use Verb::{Create, Delete, Get, List, Patch, UpdateStatus, Watch};
        assert_eq!(
            table,
            vec![
                ("Keystone".into(), vec![Get, List, Watch, UpdateStatus]),
                ("Secret".into(), vec![Get, List, Watch, Create, Patch]),
                ("Certificate".into(), vec![Get, List, Watch, Patch, Delete]),
                ("PriorityClass".into(), vec![Get]),
                ("MariaDB".into(), vec![Get]),
                ("Database".into(), vec![Patch]),
                ("User".into(), vec![Patch]),
                ("Grant".into(), vec![Patch]),
                ("Job".into(), vec![Get, List, Watch, Create, Delete]),
                ("Pod".into(), vec![List]),
            ]
        );
        let watched: Vec<(&str, bool)> = d
            .watches
            .iter()
            .map(|w| (w.kind.kind.as_str(), w.optional))
            .collect();
        assert_eq!(
            watched,
            [("Secret", false), ("Certificate", true), ("Job", false)]
        );
        assert!(d.watches.iter().all(|w| w.mapping == Mapping::Owner));
    }

    /// The CRDs of the operators Keystone builds on, as the embedded API server installs
    /// them.
    const EXTERNAL_CRDS: &[&str] = &[
        include_str!("../../../crds/external/cert-manager.yaml"),
        include_str!("../../../crds/external/mariadb-operator.yaml"),
    ];

    #[test]
    fn every_external_kind_it_declares_is_served_under_that_group_plural_and_scope() {
        let crds: Vec<serde_json::Value> = EXTERNAL_CRDS
            .iter()
            .flat_map(|text| serde_yaml_ng::Deserializer::from_str(text))
            .map(|doc| serde::Deserialize::deserialize(doc).expect("a CRD"))
            .collect();
        let description = describe();
        let external: Vec<&KindRef> = description
            .permissions
            .iter()
            .map(|p| &p.kind)
            .filter(|k| {
                k.group().contains('.')
                    && !k.group().ends_with(".k8s.io")
                    && k.group() != crate::types::GROUP
            })
            .collect();
        let kinds: Vec<&str> = external.iter().map(|k| k.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["Certificate", "MariaDB", "Database", "User", "Grant"]
        );
        for kind in external {
            let crd = crds
                .iter()
                .find(|c| c["spec"]["names"]["kind"] == kind.kind.as_str())
                .unwrap_or_else(|| panic!("no CRD serves {kind}"));
            assert_eq!(crd["spec"]["group"], kind.group(), "{kind}");
            assert_eq!(
                crd["spec"]["names"]["plural"],
                kind.plural.as_str(),
                "{kind}"
            );
            assert_eq!(crd["spec"]["scope"], "Namespaced", "{kind}");
            assert!(kind.namespaced, "{kind}");
            let served = crd["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|v| v["name"] == kind.version() && v["served"] == true);
            assert!(served, "{kind}: version {} served", kind.version());
        }
    }
}
