//! The Cinder CRD, generated from [`crate::types`] (native tests only). The committed YAML
//! ([`crate::CRD_YAML`]) is compared with the generated one; regenerate it with
//! `UPDATE_CRDS=1 cargo test -p cinder`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use wasm_operator_sdk::crd::{Crd, drop_required_defaults, schema_of};

use crate::types::{CinderSpec, CinderStatus, GROUP, KIND, PLURAL, VERSION};

/// The committed CRD, relative to this crate.
pub(crate) const CRD_PATH: &str = "../../crds/cinder.openstack.c5c3.io_cinders.yaml";
/// How to regenerate it.
pub(crate) const REGENERATE: &str = "UPDATE_CRDS=1 cargo test -p cinder";

/// The Cinder CRD.
pub(crate) fn crd() -> CustomResourceDefinition {
    let mut spec = schema_of::<CinderSpec>();
    drop_required_defaults(&mut spec);
    Crd {
        group: GROUP,
        version: VERSION,
        kind: KIND,
        plural: PLURAL,
        namespaced: true,
        description: "The OpenStack block storage service: its API, database and cache, the \
            Keystone it authenticates against, and the volume and backup backends its \
            CinderBackends and CinderBackupBackend attach.",
        printer_columns: &[
            (
                "Ready",
                "string",
                ".status.conditions[?(@.type=='Ready')].status",
            ),
            ("Release", "string", ".status.installedRelease"),
            ("Endpoint", "string", ".status.endpoint"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ],
        spec,
        status: schema_of::<CinderStatus>(),
        spec_required: true,
    }
    .build()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn the_committed_crd_is_generated_from_the_types() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CRD_PATH);
        let generated =
            wasm_operator_sdk::crd::crd_yaml(&crd(), "guests/cinder/src/types.rs", REGENERATE);
        wasm_operator_sdk::crd::check_committed(crate::CRD_YAML, &generated, &path, REGENERATE);
    }

    #[test]
    fn the_crd_is_structural_and_prints_ready_release_endpoint() {
        let crd = serde_json::to_value(crd()).expect("encodes");
        let version = &crd["spec"]["versions"][0];
        assert_eq!(
            wasm_operator_sdk::crd::structural_errors(&version["schema"]["openAPIV3Schema"]),
            Vec::<String>::new()
        );
        let columns: Vec<&str> = version["additionalPrinterColumns"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert_eq!(columns, ["Ready", "Release", "Endpoint", "Age"]);
        let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
        let required: Vec<&str> = spec["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for field in [
            "openStackRelease",
            "image",
            "database",
            "cache",
            "keystoneEndpoint",
            "serviceUser",
        ] {
            assert!(required.contains(&field), "{field} required: {required:?}");
        }
        assert_eq!(
            spec["properties"]["openStackRelease"]["pattern"],
            r"^\d{4}\.[12]$"
        );
    }
}
