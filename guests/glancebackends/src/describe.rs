//! What the host loads the GlanceBackend plugin with: its kind, watches, permissions and
//! admission.
//!
//! Least privilege: exactly what the controller of facts §3.3 and the admission use.
//!
//! | Kind | Verbs | Why |
//! |---|---|---|
//! | GlanceBackend | get, list, watch, update-status | the primary; its status is written; admission lists the siblings (the isDefault check) |
//! | Glance | get, list, watch | the parent (step 1), watched (optional): its creation and changes wake its backends |
//! | Secret | get | the S3 credentials (step 2) and the projection Secret the Deployment mounts (step 3) |
//! | ExternalSecret | get | why the credentials are not there yet (the shared credential gate) |
//! | Deployment | get, list, watch | ConfigProjected reads the Glance's Deployment (step 3), watched |
//!
//! No finalizer (nothing to clean up), so no patch; no events, no egress.
//!
//! DECISION: the Glance's Deployment is watched (CobaltCore wakes on the Glance only and
//! polls every 15 s), so a rollout that mounts the store section turns ConfigProjected
//! True without waiting for the poll; both watches map through the
//! [`GLANCE_REF`](crate::indexes::GLANCE_REF) field index over `spec.glanceRef.name`, since
//! the Deployment carries the Glance's name. The Glance watch is optional: the plugin
//! loads, and its backends wait, while the Glance CRD is not installed yet. The
//! credentials Secret is not watched (as in CobaltCore): the gate polls while it holds.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use wasm_operator_sdk::admission::{AdmittedKind, FailurePolicy, Operation};
use wasm_operator_sdk::blocks::apply::FIELD_MANAGER;
use wasm_operator_sdk::external::eso::ExternalSecret;
use wasm_operator_sdk::{
    Description, FieldIndex, KindRef, Mapping, Permission, Predicate, Verb, Watch,
};

use crate::glance_ref::{GLANCE_KIND, GLANCE_PLURAL};
use crate::indexes;
use crate::types::{API_VERSION, GlanceBackend};

/// The plugin's name.
pub const NAME: &str = "glancebackends";

/// The Glance kind (`glance.openstack.c5c3.io/v1alpha1`).
pub fn glance_kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: GLANCE_KIND.into(),
        plural: GLANCE_PLURAL.into(),
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
    let primary = KindRef::of::<GlanceBackend>();
    let by_glance = || Mapping::FieldIndex(indexes::GLANCE_REF.into());
    Description {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        field_manager: FIELD_MANAGER.into(),
        primary: primary.clone(),
        primary_predicates: vec![Predicate::GenerationChanged],
        watches: vec![
            Watch::new(glance_kind(), by_glance()).optional(),
            Watch::new(KindRef::of::<Deployment>(), by_glance()),
        ],
        indexes: vec![FieldIndex {
            name: indexes::GLANCE_REF.into(),
            description: "namespace/name of the Glance spec.glanceRef.name names".into(),
        }],
        permissions: vec![
            permission(primary.clone(), &[Get, List, W, UpdateStatus]),
            permission(glance_kind(), &[Get, List, W]),
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
        // The backend's credentials and its Glance's Deployment live on the Glance's target
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
