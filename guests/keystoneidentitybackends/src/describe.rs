//! What the host loads the KeystoneIdentityBackend plugin with: its kind, watches,
//! permissions, egress and admission.
//!
//! Least privilege: exactly what the controller of facts §3.2 and the admission use.
//!
//! | Kind | Verbs | Why |
//! |---|---|---|
//! | KeystoneIdentityBackend | get, list, watch, patch, update-status | the primary; its finalizer is patched on and off; admission lists the siblings |
//! | Keystone | get, list, watch | the parent (step 2), watched: its status flips wake its backends |
//! | Secret | get | the admin password (step 3) and the projection Secret the Deployment mounts (step 7) |
//! | Deployment | get, list, watch | ConfigProjected reads the Keystone's Deployment (step 7) |
//!
//! Events are recorded about the backend itself, which needs no permission. The identity
//! client reaches the Keystone API at `http://{keystone}.{ns}.svc.cluster.local:5000`.
//!
//! DECISION: the Keystone's Deployment is watched (CobaltCore polls every 15 s only), so a
//! finished rollout turns ConfigProjected True without waiting for the poll; both watches
//! map through the [`KEYSTONE_REF`](crate::indexes::KEYSTONE_REF) field index, since the
//! Deployment carries the Keystone's name. The Keystone watch is optional: the plugin
//! loads, and its backends wait, while the Keystone CRD is not installed yet.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use wasm_operator_sdk::admission::{AdmittedKind, FailurePolicy, Operation};
use wasm_operator_sdk::blocks::apply::FIELD_MANAGER;
use wasm_operator_sdk::{
    Description, FieldIndex, KindRef, Mapping, Permission, Predicate, Verb, Watch,
};

use crate::indexes;
use crate::types::{API_VERSION, KEYSTONE_KIND, KEYSTONE_PLURAL, KeystoneIdentityBackend};

/// The plugin's name.
pub const NAME: &str = "keystoneidentitybackends";

/// Where the identity client sends its requests: the Keystone Services' API port. The
/// narrowest pattern the host accepts for a Service of any Keystone's name and namespace.
pub const API_EGRESS: &str = "*.svc.cluster.local:5000";

/// The Keystone kind (`keystone.openstack.c5c3.io/v1alpha1`).
pub fn keystone_kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: KEYSTONE_KIND.into(),
        plural: KEYSTONE_PLURAL.into(),
        namespaced: true,
    }
}

fn permission(kind: KindRef, verbs: &[Verb]) -> Permission {
    Permission {
        kind,
        verbs: verbs.to_vec(),
    }
}

/// The plugin's description.
pub fn describe() -> Description {
    use Verb::{Get, List, Patch, UpdateStatus, Watch as W};
    let primary = KindRef::of::<KeystoneIdentityBackend>();
    let by_keystone = || Mapping::FieldIndex(indexes::KEYSTONE_REF.into());
    Description {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        field_manager: FIELD_MANAGER.into(),
        primary: primary.clone(),
        primary_predicates: vec![Predicate::GenerationChanged],
        watches: vec![
            Watch::new(keystone_kind(), by_keystone()).optional(),
            Watch::new(KindRef::of::<Deployment>(), by_keystone()),
        ],
        indexes: vec![FieldIndex {
            name: indexes::KEYSTONE_REF.into(),
            description: "namespace/name of the Keystone spec.keystoneRef.name names".into(),
        }],
        permissions: vec![
            permission(primary.clone(), &[Get, List, W, Patch, UpdateStatus]),
            permission(keystone_kind(), &[Get, List, W]),
            permission(KindRef::of::<Secret>(), &[Get]),
            permission(KindRef::of::<Deployment>(), &[Get, List, W]),
        ],
        watched_indexes: vec![],
        subresources: vec![],
        egress: vec![API_EGRESS.into()],
        admission: vec![AdmittedKind {
            kind: primary,
            default_on: vec![Operation::Create, Operation::Update],
            validate_on: vec![Operation::Create, Operation::Update],
            failure_policy: FailurePolicy::Fail,
        }],
        // It opens its Keystone's target cluster to read the Keystone's Deployment and admin
        // Secret there and to reach its API; it writes nothing there.
        targets: wasm_operator_sdk::TargetDescription {
            owner_label_prefix: "openstack.c5c3.io".into(),
            watches: Vec::new(),
        },
        primary_selector: None,
    }
}

#[cfg(test)]
#[path = "describe_tests.rs"]
mod tests;
