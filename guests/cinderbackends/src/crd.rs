//! The CinderBackend CRD, generated from [`crate::types`] (native tests only).
//!
//! The schema rules (required fields, the enum, bounds, patterns, defaults and the CEL
//! `x-kubernetes-validations` with CobaltCore's messages) are attached to the types; this
//! module adds the printer columns, and drops the `default` schemars derives from a serde
//! default where the field is required. The committed YAML ([`crate::CRD_YAML`]) is
//! compared with the generated one; regenerate it with
//! `UPDATE_CRDS=1 cargo test -p cinderbackends`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use wasm_operator_sdk::crd::{Crd, drop_required_defaults, schema_of};

use crate::types::{CinderBackendSpec, CinderBackendStatus, GROUP, KIND, PLURAL, VERSION};

/// The committed CRD, relative to this crate.
pub(crate) const CRD_PATH: &str = "../../crds/cinder.openstack.c5c3.io_cinderbackends.yaml";
/// How to regenerate it.
pub(crate) const REGENERATE: &str = "UPDATE_CRDS=1 cargo test -p cinderbackends";

/// The CinderBackend CRD.
pub(crate) fn crd() -> CustomResourceDefinition {
    let mut spec = schema_of::<CinderBackendSpec>();
    drop_required_defaults(&mut spec);
    Crd {
        group: GROUP,
        version: VERSION,
        kind: KIND,
        plural: PLURAL,
        namespaced: true,
        description: "A volume backend of a Cinder: an NFS export or a Ceph RBD pool the \
            Cinder serves volumes from through a cinder-volume Deployment of its own.",
        printer_columns: &[
            (
                "Ready",
                "string",
                ".status.conditions[?(@.type=='Ready')].status",
            ),
            ("Type", "string", ".spec.type"),
            ("Cinder", "string", ".spec.cinderRef.name"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ],
        spec,
        status: schema_of::<CinderBackendStatus>(),
        spec_required: true,
    }
    .build()
}

#[cfg(test)]
#[path = "crd_tests.rs"]
mod tests;
