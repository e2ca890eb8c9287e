//! The Keystone CRD, generated from [`crate::types`] (native tests only).
//!
//! The schema rules the Keystone adds to shared blocks (the database's TLS refs and
//! immutables, policyOverrides' "at least one") are appended to the block's own rules
//! here, since a field-level rule would replace the type's. The committed YAML
//! ([`crate::CRD_YAML`]) is compared with the generated one; regenerate it with
//! `UPDATE_CRDS=1 cargo test -p keystone`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};
use wasm_operator_sdk::crd::{Crd, drop_required_defaults, schema_of};

use crate::types::{GROUP, KIND, KeystoneSpec, KeystoneStatus, PLURAL, VERSION};

/// The committed CRD, relative to this crate.
pub(crate) const CRD_PATH: &str = "../../crds/keystone.openstack.c5c3.io_keystones.yaml";
/// How to regenerate it.
const REGENERATE: &str = "UPDATE_CRDS=1 cargo test -p keystone";

/// Appends `rules` to the `x-kubernetes-validations` of `node`.
fn add_rules(node: &mut Value, rules: Value) {
    let existing = node
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut all = existing;
    all.extend(rules.as_array().cloned().unwrap_or_default());
    node["x-kubernetes-validations"] = Value::Array(all);
}

/// The Keystone CRD.
pub(crate) fn crd() -> CustomResourceDefinition {
    let mut spec = schema_of::<KeystoneSpec>();
    // A real API server refuses a CRD whose defaults do not validate (an empty image
    // repository, a cache with neither clusterRef nor servers).
    drop_required_defaults(&mut spec);
    add_rules(
        &mut spec["properties"]["database"],
        json!([
            {"rule": "!has(self.tls) || self.tls.mode == '' || self.tls.mode == 'disabled' || (self.tls.caBundleSecretRef.name != '' && self.tls.clientCertSecretRef.name != '')",
             "message": "when database.tls is enabled (mode is neither empty nor 'disabled'), both database.tls.caBundleSecretRef.name and database.tls.clientCertSecretRef.name must be set"},
            {"rule": "self.database == oldSelf.database", "message": "database name is immutable"},
            {"rule": "has(self.clusterRef) == has(oldSelf.clusterRef)",
             "message": "database mode (managed clusterRef vs brownfield host) is immutable"},
        ]),
    );
    add_rules(
        &mut spec["properties"]["policyOverrides"],
        json!([{"rule": "(has(self.rules) && size(self.rules) > 0) || has(self.configMapRef)",
                "message": "at least one of rules or configMapRef must be set"}]),
    );
    Crd {
        group: GROUP,
        version: VERSION,
        kind: KIND,
        plural: PLURAL,
        namespaced: true,
        description: "An OpenStack Keystone identity service: its database, cache, keys, \
            configuration, Deployment and bootstrap.",
        printer_columns: &[
            (
                "Ready",
                "string",
                ".status.conditions[?(@.type=='Ready')].status",
            ),
            ("Endpoint", "string", ".status.endpoint"),
            ("Release", "string", ".status.installedRelease"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ],
        spec,
        status: schema_of::<KeystoneStatus>(),
        spec_required: true,
    }
    .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        let crd = serde_json::to_value(crd()).expect("encodes");
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
    }

    #[test]
    fn the_committed_crd_is_generated_from_the_types() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CRD_PATH);
        let generated =
            wasm_operator_sdk::crd::crd_yaml(&crd(), "guests/keystone/src/types.rs", REGENERATE);
        wasm_operator_sdk::crd::check_committed(crate::CRD_YAML, &generated, &path, REGENERATE);
    }

    #[test]
    fn the_crd_is_structural() {
        assert_eq!(
            wasm_operator_sdk::crd::structural_errors(&schema()),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_crd_carries_the_schema_rules_and_immutables_of_section_1_4() {
        let schema = schema();
        let spec = &schema["properties"]["spec"];
        let rules = |pointer: &str| -> Vec<String> {
            spec.pointer(pointer)
                .and_then(|n| n.get("x-kubernetes-validations"))
                .and_then(Value::as_array)
                .map(|rules| {
                    rules
                        .iter()
                        .map(|r| r["message"].as_str().unwrap_or_default().to_owned())
                        .collect()
                })
                .unwrap_or_default()
        };
        let table: &[(&str, &[&str])] = &[
            ("", &["targetClusterRef is immutable"]),
            (
                "/properties/database",
                &[
                    "exactly one of clusterRef or host must be set",
                    "credentialsMode Dynamic requires clusterRef (managed mode)",
                    "when database.tls is enabled (mode is neither empty nor 'disabled'), both database.tls.caBundleSecretRef.name and database.tls.clientCertSecretRef.name must be set",
                    "database name is immutable",
                    "database mode (managed clusterRef vs brownfield host) is immutable",
                ],
            ),
            (
                "/properties/bootstrap/properties/adminUser",
                &["bootstrap.adminUser is immutable"],
            ),
            (
                "/properties/bootstrap/properties/region",
                &["bootstrap.region is immutable"],
            ),
            (
                "/properties/image",
                &["exactly one of image.tag or image.digest must be set"],
            ),
            (
                "/properties/cache",
                &[
                    "exactly one of clusterRef or servers must be set",
                    "clusterRef.name must not contain a newline or carriage return",
                ],
            ),
            (
                "/properties/policyOverrides",
                &[
                    "policy rule name must not be empty",
                    "policy rule value must not be empty",
                    "at least one of rules or configMapRef must be set",
                ],
            ),
            (
                "/properties/deployment",
                &["preStopSleepSeconds must be strictly less than terminationGracePeriodSeconds"],
            ),
            (
                "/properties/autoscaling",
                &[
                    "at least one of targetCPUUtilization or targetMemoryUtilization must be set",
                    "minReplicas must not exceed maxReplicas",
                ],
            ),
            (
                "/properties/networkPolicy",
                &["at least one ingress source must be specified"],
            ),
            (
                "/properties/uwsgi",
                &["httpKeepAliveTimeout may only be set when httpKeepAlive is true"],
            ),
        ];
        for (pointer, expected) in table {
            assert_eq!(rules(pointer), *expected, "{pointer}");
        }
        // spec.image has no immutability rule.
        assert!(
            !rules("/properties/image")
                .iter()
                .any(|m| m.contains("immutable"))
        );
    }

    #[test]
    fn the_crd_carries_the_defaults_and_bounds_of_sections_1_1_and_1_3() {
        let schema = schema();
        let spec = "/properties/spec/properties";
        let table: &[(&str, &str, Value)] = &[
            (
                "/fernet/properties/rotationSchedule",
                "default",
                json!("0 0 * * 0"),
            ),
            ("/fernet/properties/maxActiveKeys", "minimum", json!(3.0)),
            (
                "/credentialKeys/properties/maxActiveKeys",
                "default",
                json!(3),
            ),
            (
                "/passwordRotation/properties/passwordLength",
                "minimum",
                json!(24.0),
            ),
            (
                "/passwordRotation/properties/schedule",
                "default",
                json!("0 0 1 * *"),
            ),
            (
                "/trustFlush/properties/schedule",
                "default",
                json!("0 * * * *"),
            ),
            (
                "/federation/properties/trustedDashboards",
                "maxItems",
                json!(8),
            ),
            ("/bootstrap/properties/adminUser", "default", json!("admin")),
            (
                "/bootstrap/properties/region",
                "default",
                json!("RegionOne"),
            ),
            (
                "/bootstrap/properties/publicEndpoint",
                "pattern",
                json!("^https?://"),
            ),
            ("/database/properties/port", "maximum", json!(65535.0)),
            ("/database/properties/database", "maxLength", json!(64)),
            (
                "/database/properties/storageSize",
                "default",
                json!("100Gi"),
            ),
            (
                "/database/properties/tls/properties/mode",
                "enum",
                json!(["disabled", "prefer", "require", "verify-ca", "verify-full"]),
            ),
            (
                "/database/properties/credentialsMode",
                "enum",
                json!(["Static", "Dynamic"]),
            ),
            (
                "/image/properties/digest",
                "pattern",
                json!("^sha256:[a-f0-9]{64}$"),
            ),
            ("/deployment/properties/replicas", "default", json!(3)),
            (
                "/deployment/properties/terminationGracePeriodSeconds",
                "minimum",
                json!(10.0),
            ),
            (
                "/logging/properties/level",
                "enum",
                json!(["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]),
            ),
            ("/uwsgi/properties/processes", "default", json!(2)),
            (
                "/secretStoreRef/properties/kind",
                "enum",
                json!(["ClusterSecretStore", "SecretStore"]),
            ),
            (
                "/plugins",
                "x-kubernetes-list-map-keys",
                json!(["configSection"]),
            ),
        ];
        for (path, keyword, expected) in table {
            let pointer = format!("{spec}{path}");
            let node = schema
                .pointer(&pointer)
                .unwrap_or_else(|| panic!("no {pointer}"));
            assert_eq!(node.get(*keyword), Some(expected), "{path} {keyword}");
        }
        let required = |pointer: &str| schema.pointer(pointer).cloned().unwrap_or_default();
        assert_eq!(
            required("/properties/spec/required"),
            json!(["bootstrap", "cache", "database", "image"])
        );
        assert_eq!(
            required("/properties/status/properties/conditions/x-kubernetes-list-map-keys"),
            json!(["type"])
        );
    }

    #[test]
    fn the_crd_prints_ready_endpoint_release_and_age() {
        let crd = serde_json::to_value(crd()).expect("encodes");
        let names: Vec<&str> = crd["spec"]["versions"][0]["additionalPrinterColumns"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert_eq!(names, ["Ready", "Endpoint", "Release", "Age"]);
    }
}

#[cfg(test)]
#[path = "crd_embedded_tests.rs"]
mod embedded_tests;
