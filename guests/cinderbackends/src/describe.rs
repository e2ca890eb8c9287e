//! What the host loads the CinderBackend plugin with: its kind, watches, permissions and
//! admission.
//!
//! Least privilege: exactly what the controller of facts §3.4 and the admission use.
//!
//! | Kind | Verbs | Why |
//! |---|---|---|
//! | CinderBackend | get, list, watch, patch, update-status | the primary; the service-remove finalizer is patched on (and off when the Cinder is gone); its status is written |
//! | Cinder | get, list, watch | the parent (step 1, and while deleting), watched (optional): its creation and changes wake its backends |
//! | Secret | get | the RBD key (step 2) and the projection Secret the Deployment mounts (step 3) |
//! | ExternalSecret | get | why the RBD key is not there yet (the shared credential gate) |
//! | Deployment | get, list, watch | ConfigProjected reads the backend's cinder-volume Deployment (step 3), watched |
//!
//! The `ServiceRemoveSkipped` event is about the backend itself, which needs no
//! permission. No egress.
//!
//! DECISION: the backend's Deployment `{cinder}-volume-{name}` is watched (CobaltCore
//! wakes on the Cinder only and polls every 15 s), so a rollout that mounts the section
//! turns ConfigProjected True without waiting for the poll. Both watches map through the
//! [`CINDER_REF`](crate::indexes::CINDER_REF) field index, whose keys on a backend are
//! its Cinder and its Deployment. The Cinder watch is optional: the plugin loads, and its
//! backends wait, while the Cinder CRD is not installed yet. The RBD key Secret is not
//! watched (as in CobaltCore): the gate polls while it holds.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use wasm_operator_sdk::admission::{AdmittedKind, FailurePolicy, Operation};
use wasm_operator_sdk::blocks::apply::FIELD_MANAGER;
use wasm_operator_sdk::external::eso::ExternalSecret;
use wasm_operator_sdk::{
    Description, FieldIndex, KindRef, Mapping, Permission, Predicate, Verb, Watch,
};

use crate::cinder_ref::{CINDER_KIND, CINDER_PLURAL};
use crate::indexes;
use crate::types::{API_VERSION, CinderBackend};

/// The plugin's name.
pub const NAME: &str = "cinderbackends";

/// The Cinder kind (`cinder.openstack.c5c3.io/v1alpha1`).
pub fn cinder_kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: CINDER_KIND.into(),
        plural: CINDER_PLURAL.into(),
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
    let primary = KindRef::of::<CinderBackend>();
    let by_cinder = || Mapping::FieldIndex(indexes::CINDER_REF.into());
    Description {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        field_manager: FIELD_MANAGER.into(),
        primary: primary.clone(),
        primary_predicates: vec![Predicate::GenerationChanged],
        watches: vec![
            Watch::new(cinder_kind(), by_cinder()).optional(),
            Watch::new(KindRef::of::<Deployment>(), by_cinder()),
        ],
        indexes: vec![FieldIndex {
            name: indexes::CINDER_REF.into(),
            description: "namespace/name of the Cinder spec.cinderRef.name names, and of the \
                backend's cinder-volume Deployment {cinder}-volume-{name}"
                .into(),
        }],
        permissions: vec![
            permission(primary.clone(), &[Get, List, W, Patch, UpdateStatus]),
            permission(cinder_kind(), &[Get, List, W]),
            permission(KindRef::of::<Secret>(), &[Get]),
            permission(KindRef::of::<ExternalSecret>(), &[Get]),
            permission(KindRef::of::<Deployment>(), &[Get, List, W]),
        ],
        watched_indexes: vec![],
        subresources: vec![],
        egress: vec![],
        admission: vec![AdmittedKind {
            kind: primary,
            default_on: vec![Operation::Create, Operation::Update],
            validate_on: vec![Operation::Create, Operation::Update],
            failure_policy: FailurePolicy::Fail,
        }],
        // The backend's credentials and its Cinder's Deployments live on the Cinder's target
        // cluster when it names one; they are polled there (nothing on a target is the
        // backend's child, so no watch maps to it).
        targets: wasm_operator_sdk::TargetDescription {
            owner_label_prefix: wasm_operator_sdk::blocks::remote_children::OWNER_LABEL_PREFIX
                .into(),
            watches: Vec::new(),
        },
        primary_selector: None,
    }
}

#[cfg(test)]
#[path = "describe_tests.rs"]
mod tests;
