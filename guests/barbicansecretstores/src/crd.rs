//! The BarbicanSecretStore CRD, generated from [`crate::types`] (native tests only).
//!
//! The schema rules (required fields, the enums, bounds, pattern, default and the CEL
//! `x-kubernetes-validations` with CobaltCore's messages) are attached to the types; this
//! module adds the printer columns, and drops the `default` schemars derives from a serde
//! default where the field is required: the API server would fill a missing required
//! field with it (an empty name, which then fails its own `minLength`). The committed YAML
//! ([`crate::CRD_YAML`]) is compared with the generated one; regenerate it with
//! `UPDATE_CRDS=1 cargo test -p barbicansecretstores`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;
use wasm_operator_sdk::crd::{Crd, schema_of};

use crate::types::{
    BarbicanSecretStoreSpec, BarbicanSecretStoreStatus, GROUP, KIND, PLURAL, VERSION,
};

/// The committed CRD, relative to this crate.
pub(crate) const CRD_PATH: &str = "../../crds/barbican.openstack.c5c3.io_barbicansecretstores.yaml";
/// How to regenerate it.
pub(crate) const REGENERATE: &str = "UPDATE_CRDS=1 cargo test -p barbicansecretstores";

/// Removes the `default` of every property its object requires, throughout `node`.
fn drop_required_defaults(node: &mut Value) {
    let required: Vec<String> = node
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect();
    if let Some(Value::Object(properties)) = node.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if required.contains(name)
                && let Some(map) = property.as_object_mut()
            {
                map.remove("default");
            }
            drop_required_defaults(property);
        }
    }
    for child in ["items", "additionalProperties"] {
        if let Some(inner) = node.get_mut(child) {
            drop_required_defaults(inner);
        }
    }
}

/// The BarbicanSecretStore CRD.
pub(crate) fn crd() -> CustomResourceDefinition {
    let mut spec = schema_of::<BarbicanSecretStoreSpec>();
    drop_required_defaults(&mut spec);
    Crd {
        group: GROUP,
        version: VERSION,
        kind: KIND,
        plural: PLURAL,
        namespaced: true,
        description: "A secret store of a Barbican: an OpenBao (or Vault) server the Barbican \
            renders as one [secretstore:<name>] section, the one marked isDefault its global \
            default store; managed (an OpenBaoCluster whose AppRole credentials the operator \
            mints) or brownfield (a server provisioned elsewhere, only validated).",
        printer_columns: &[
            (
                "Ready",
                "string",
                ".status.conditions[?(@.type=='Ready')].status",
            ),
            ("Type", "string", ".spec.type"),
            ("Default", "boolean", ".spec.isDefault"),
            ("Barbican", "string", ".spec.barbicanRef.name"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ],
        spec,
        status: schema_of::<BarbicanSecretStoreStatus>(),
        spec_required: true,
    }
    .build()
}

#[cfg(test)]
#[path = "crd_tests.rs"]
mod tests;
