//! The KeystoneIdentityBackend CRD, generated from [`crate::types`] (native tests only).
//!
//! The schema rules (required fields, enums, bounds, patterns, defaults and the CEL
//! `x-kubernetes-validations` with CobaltCore's messages) are attached to the types; this
//! module adds the printer columns, and drops the `default` schemars derives from a serde
//! default where the field is required: the API server would fill a missing required
//! field with it (an empty name, which then fails its own `minLength`), and a
//! `default` that does not validate makes a real API server refuse the CRD. The committed YAML ([`crate::CRD_YAML`]) is compared
//! with the generated one; regenerate it with
//! `UPDATE_CRDS=1 cargo test -p keystoneidentitybackends`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;
use wasm_operator_sdk::crd::{Crd, schema_of};

use crate::types::{
    GROUP, KIND, KeystoneIdentityBackendSpec, KeystoneIdentityBackendStatus, PLURAL, VERSION,
};

/// The committed CRD, relative to this crate.
pub(crate) const CRD_PATH: &str =
    "../../crds/keystone.openstack.c5c3.io_keystoneidentitybackends.yaml";
/// How to regenerate it.
pub(crate) const REGENERATE: &str = "UPDATE_CRDS=1 cargo test -p keystoneidentitybackends";

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

/// The KeystoneIdentityBackend CRD.
pub(crate) fn crd() -> CustomResourceDefinition {
    let mut spec = schema_of::<KeystoneIdentityBackendSpec>();
    drop_required_defaults(&mut spec);
    Crd {
        group: GROUP,
        version: VERSION,
        kind: KIND,
        plural: PLURAL,
        namespaced: true,
        description: "An external identity backend of a Keystone: an LDAP directory, an OIDC \
            or a SAML identity provider serving one Keystone domain.",
        printer_columns: &[
            (
                "Ready",
                "string",
                ".status.conditions[?(@.type=='Ready')].status",
            ),
            ("Domain", "string", ".spec.domain.name"),
            ("Keystone", "string", ".spec.keystoneRef.name"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ],
        spec,
        status: schema_of::<KeystoneIdentityBackendStatus>(),
        spec_required: true,
    }
    .build()
}

#[cfg(test)]
#[path = "crd_tests.rs"]
mod tests;
