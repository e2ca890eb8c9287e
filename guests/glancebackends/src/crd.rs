//! The GlanceBackend CRD, generated from [`crate::types`] (native tests only).
//!
//! The schema rules (required fields, the enums, bounds, pattern, default and the CEL
//! `x-kubernetes-validations` with CobaltCore's messages) are attached to the types; this
//! module adds the printer columns, and drops the `default` schemars derives from a serde
//! default where the field is required: the API server would fill a missing required
//! field with it (an empty name, which then fails its own `minLength`). The committed YAML
//! ([`crate::CRD_YAML`]) is compared with the generated one; regenerate it with
//! `UPDATE_CRDS=1 cargo test -p glancebackends`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use wasm_operator_sdk::crd::{Crd, drop_required_defaults, schema_of};

use crate::types::{GROUP, GlanceBackendSpec, GlanceBackendStatus, KIND, PLURAL, VERSION};

/// The committed CRD, relative to this crate.
pub(crate) const CRD_PATH: &str = "../../crds/glance.openstack.c5c3.io_glancebackends.yaml";
/// How to regenerate it.
pub(crate) const REGENERATE: &str = "UPDATE_CRDS=1 cargo test -p glancebackends";

/// The GlanceBackend CRD.
pub(crate) fn crd() -> CustomResourceDefinition {
    let mut spec = schema_of::<GlanceBackendSpec>();
    drop_required_defaults(&mut spec);
    Crd {
        group: GROUP,
        version: VERSION,
        kind: KIND,
        plural: PLURAL,
        namespaced: true,
        description: "An image store of a Glance: an S3-compatible object store the Glance \
            renders as one store section, the one marked isDefault its default store.",
        printer_columns: &[
            (
                "Ready",
                "string",
                ".status.conditions[?(@.type=='Ready')].status",
            ),
            ("Type", "string", ".spec.type"),
            ("Default", "boolean", ".spec.isDefault"),
            ("Glance", "string", ".spec.glanceRef.name"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ],
        spec,
        status: schema_of::<GlanceBackendStatus>(),
        spec_required: true,
    }
    .build()
}

#[cfg(test)]
#[path = "crd_tests.rs"]
mod tests;
