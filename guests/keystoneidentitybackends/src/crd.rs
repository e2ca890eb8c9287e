//! The KeystoneIdentityBackend CRD, generated from [`crate::types`] (native tests only).
//!
//! The schema rules (required fields, enums, bounds, patterns, defaults and the CEL
//! `x-kubernetes-validations` with CobaltCore's messages) are attached to the types; this
//! module adds the printer columns, and drops the `default` schemars derives from a serde
//! default where the field is required ([`drop_required_defaults`]). The committed YAML
//! ([`crate::CRD_YAML`]) is compared with the generated one; regenerate it with
//! `UPDATE_CRDS=1 cargo test -p keystoneidentitybackends`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use wasm_operator_sdk::crd::{Crd, drop_required_defaults, schema_of};

use crate::types::{
    GROUP, KIND, KeystoneIdentityBackendSpec, KeystoneIdentityBackendStatus, PLURAL, VERSION,
};

/// The committed CRD, relative to this crate.
pub(crate) const CRD_PATH: &str =
    "../../crds/keystone.openstack.c5c3.io_keystoneidentitybackends.yaml";
/// How to regenerate it.
pub(crate) const REGENERATE: &str = "UPDATE_CRDS=1 cargo test -p keystoneidentitybackends";

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
