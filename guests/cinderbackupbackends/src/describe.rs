//! What the host loads the CinderBackupBackend plugin with: its kind, watches, permissions and
//! admission.
//!
//! Least privilege: exactly what the controller of facts §3.5 and the admission use.
//!
//! | Kind | Verbs | Why |
//! |---|---|---|
//! | CinderBackupBackend | get, list, watch, update-status | the primary; its status is written; admission lists the namespace's targets (one per Cinder) |
//! | Cinder | get, list, watch | the parent (step 1), watched (optional): its creation and changes wake its target |
//! | Secret | get | the RBD key (step 2); the projection Secret is named, never read |
//! | ExternalSecret | get | why the RBD key is not there yet (the shared credential gate) |
//! | Deployment | get, list, watch | ConfigProjected reads the Cinder's backup Deployment (step 3), watched |
//!
//! No finalizer (nothing to unregister: the backup service registers under the Cinder's
//! identity), so no patch; no events, no egress.
//!
//! DECISION: the Cinder's backup Deployment `{cinder}-backup` is watched (CobaltCore
//! wakes on the Cinder only and polls every 15 s), so a rollout that mounts the target's
//! Secret turns ConfigProjected True without waiting for the poll. Both watches map
//! through the [`CINDER_REF`](crate::indexes::CINDER_REF) field index, whose keys on a
//! target are its Cinder and that Deployment. The Cinder watch is optional: the plugin
//! loads, and its targets wait, while the Cinder CRD is not installed yet. The RBD key Secret is not
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
use crate::types::{API_VERSION, CinderBackupBackend};

/// The plugin's name.
pub const NAME: &str = "cinderbackupbackends";

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
    use Verb::{Get, List, UpdateStatus, Watch as W};
    let primary = KindRef::of::<CinderBackupBackend>();
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
            description: "namespace/name of the Cinder spec.cinderRef.name names, and of its \
                backup Deployment {cinder}-backup"
                .into(),
        }],
        permissions: vec![
            permission(primary.clone(), &[Get, List, W, UpdateStatus]),
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
