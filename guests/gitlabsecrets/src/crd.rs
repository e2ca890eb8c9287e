//! The CRD, generated from the Rust types of [`crate::types`] (native tests only).
//!
//! `spec` and `status` are the structural schemas ([`wasm_operator_sdk::crd::schema_of`])
//! of [`GitLabSecretsSpec`] and [`GitLabSecretsStatus`]. The committed YAML (compiled in as [`crate::CRD_YAML`]) is compared with the
//! generated one; to regenerate it run `UPDATE_CRDS=1 cargo test -p gitlabsecrets`.
//!
//! DECISION: generation lives in tests so the wasm build carries no schemars; the host
//! takes the committed YAML through [`crate::CRD_YAML`].

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;
use wasm_operator_sdk::crd::{Crd, schema_of};

use crate::types::{GROUP, GitLabSecretsSpec, GitLabSecretsStatus, KIND, PLURAL, VERSION};

/// The committed CRD, relative to this crate.
const CRD_PATH: &str = "../../crds/apps.gitlab.com_gitlabsecrets.yaml";
/// How to regenerate it.
const REGENERATE: &str = "UPDATE_CRDS=1 cargo test -p gitlabsecrets";

/// The GitLabSecrets CRD.
pub(crate) fn crd() -> CustomResourceDefinition {
    let mut spec = schema_of::<GitLabSecretsSpec>();
    // Key sizes per algorithm; CEL, so kube-apiserver checks it (the structural bounds are
    // the union of both algorithms').
    spec["properties"]["certificates"]["items"]["properties"]["authority"]["x-kubernetes-validations"] = json!([{
        "rule": "!has(self.keySize) || (self.algorithm == 'rsa' ? self.keySize >= 2048 : self.keySize in [256, 384, 521])",
        "message": "keySize must be 2048 to 8192 for rsa, and 256, 384 or 521 for ecdsa",
    }]);
    // base64 as the Job encoded it: at most 57 characters (CEL, so kube-apiserver refuses
    // it at admission; the planner reports it too).
    spec["properties"]["secrets"]["items"]["properties"]["generators"]["items"]["x-kubernetes-validations"] = json!([{
        "rule": "self.type != 'random' || !has(self.encoding) || self.encoding != 'base64' || !has(self.length) || self.length <= 57",
        "message": "encoding base64 takes at most 57 characters, as the Job did; use base64-nowrap",
    }]);
    Crd {
        group: GROUP,
        version: VERSION,
        kind: KIND,
        plural: PLURAL,
        namespaced: true,
        description: "The Secrets one GitLab release needs, created and filled in place of \
            the chart's shared-secrets Job. Keys are added, never changed or removed; \
            deleting the resource leaves every Secret.",
        printer_columns: &[
            (
                "Ready",
                "string",
                ".status.conditions[?(@.type==\"Ready\")].status",
            ),
            (
                "Reason",
                "string",
                ".status.conditions[?(@.type==\"Ready\")].reason",
            ),
            ("Age", "date", ".metadata.creationTimestamp"),
        ],
        spec,
        status: schema_of::<GitLabSecretsStatus>(),
        spec_required: true,
    }
    .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::GitLabSecrets;
    use serde_json::Value;

    #[test]
    fn the_committed_crd_is_generated_from_the_types() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CRD_PATH);
        let generated = wasm_operator_sdk::crd::crd_yaml(
            &crd(),
            "guests/gitlabsecrets/src/types.rs",
            REGENERATE,
        );
        wasm_operator_sdk::crd::check_committed(crate::CRD_YAML, &generated, &path, REGENERATE);
    }

    #[test]
    fn the_crd_declares_neither_policy_nor_expiry() {
        let schema = serde_json::to_value(crd()).expect("encodes");
        let spec = &schema["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            ["properties"];
        assert!(spec.get("policy").is_none());
        let authority = &spec["certificates"]["items"]["properties"]["authority"]["properties"];
        assert!(authority.get("algorithm").is_some());
        assert!(authority.get("expiry").is_none());
    }

    #[test]
    fn the_crd_carries_the_bounds_and_enums_of_the_schema_page() {
        let crd = serde_json::to_value(crd()).expect("encodes");
        let root = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
        let generator = "/spec/properties/secrets/items/properties/generators/items/properties";
        let authority = "/spec/properties/certificates/items/properties/authority/properties";
        let cases: &[(&str, &str, Value)] = &[
            (&format!("{generator}/length"), "minimum", json!(1.0)),
            (&format!("{generator}/bits"), "minimum", json!(2048.0)),
            (&format!("{generator}/bits"), "maximum", json!(8192.0)),
            (&format!("{generator}/days"), "minimum", json!(1.0)),
            (
                &format!("{generator}/charset"),
                "enum",
                json!(["alphanumeric", "hex", "lowerAlphanumeric"]),
            ),
            (
                &format!("{generator}/encoding"),
                "enum",
                json!(["none", "base64", "base64-nowrap", "raw"]),
            ),
            (
                &format!("{generator}/wrap"),
                "enum",
                json!(["none", "jsonArray"]),
            ),
            (
                &format!("{generator}/type"),
                "enum",
                json!([
                    "random",
                    "bytes",
                    "static",
                    "rsa",
                    "x509",
                    "sshHostKeys",
                    "railsSecrets"
                ]),
            ),
            (
                &format!("{generator}/fields/items/properties/shape"),
                "enum",
                json!(["scalar", "pem", "list"]),
            ),
            (
                &format!("{authority}/algorithm"),
                "enum",
                json!(["rsa", "ecdsa"]),
            ),
            (&format!("{authority}/keySize"), "minimum", json!(256.0)),
            (&format!("{authority}/keySize"), "maximum", json!(8192.0)),
            (
                "/spec/properties/secrets/items/properties/generators",
                "minItems",
                json!(1),
            ),
            (
                "/spec/properties/secrets/items/properties/type",
                "default",
                json!("Opaque"),
            ),
            (
                "/status/properties/secrets/items/properties/readyUnits",
                "maxItems",
                json!(crate::types::MAX_READY_UNITS),
            ),
        ];
        for (path, keyword, expected) in cases {
            let node = root.pointer(path).unwrap_or_else(|| panic!("no {path}"));
            assert_eq!(node.get(*keyword), Some(expected), "{path} {keyword}");
        }
    }

    #[test]
    fn the_crd_is_structural() {
        let crd = serde_json::to_value(crd()).expect("encodes");
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert_eq!(
            wasm_operator_sdk::crd::structural_errors(schema),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_chart_defaults_render_decodes_into_the_types() {
        let yaml = include_str!("../testdata/chart-defaults.yaml");
        let object: GitLabSecrets = serde_yaml_ng::from_str(yaml).expect("decodes");
        assert_eq!(object.metadata.name.as_deref(), Some("demo"));
        assert_eq!(object.spec.secrets.len(), 13);
        assert_eq!(object.spec.certificates.len(), 1);
        let rails = &object.spec.secrets[8].generators[0];
        assert_eq!(rails.fields.as_ref().map(Vec::len), Some(8));
        // Serializing back gives the same spec (what the planner receives).
        let raw: Value = serde_yaml_ng::from_str(yaml).expect("decodes as JSON");
        let round_trip = serde_json::to_value(&object.spec).expect("encodes");
        assert_eq!(round_trip, raw["spec"]);
    }
}
