//! What the host loads the Keystone plugin with: its kinds, watches and permissions.
//!
//! Permissions are exactly the verbs the steps use: a step that starts writing a kind adds
//! it here, and the test below lists them.

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use wasm_operator_sdk::admission::{AdmittedKind, FailurePolicy, Operation};
use wasm_operator_sdk::blocks::apply::FIELD_MANAGER;
use wasm_operator_sdk::external::certmanager::Certificate;
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
            ]
        );
    }
}
