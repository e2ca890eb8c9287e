//! The CRD, generated from the Rust types of [`crate::types`] (native tests only).
//!
//! `spec` and `status` are schemars schemas of [`GitLabSecretsSpec`] and
//! [`GitLabSecretsStatus`], made structural: subschemas inlined, `nullable`, `null` enum
//! members and integer formats schemars invents (`uint32`) removed. The CRD around them is
//! built here. The committed YAML (compiled in as [`crate::CRD_YAML`]) is compared with the
//! generated one; to regenerate it run `UPDATE_CRDS=1 cargo test -p gitlabsecrets`.
//!
//! DECISION: generation lives in tests so the wasm build carries no schemars; the host
//! takes the committed YAML through [`crate::CRD_YAML`].

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use crate::types::{GROUP, GitLabSecretsSpec, GitLabSecretsStatus, KIND, PLURAL, VERSION};

/// The committed CRD, relative to this crate.
const CRD_PATH: &str = "../../crds/apps.gitlab.com_gitlabsecrets.yaml";

/// The structural schema of `T`.
fn schema_of<T: schemars::JsonSchema>() -> Value {
    let generator = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    make_structural(&mut schema);
    if let Value::Object(map) = &mut schema {
        map.remove("title");
        map.remove("components");
    }
    schema
}

/// Drops what a structural schema must not or need not carry.
fn make_structural(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            // `Option<T>` of an inlined schema: `anyOf: [T, {enum: [null]}]` → T.
            if let Some(Value::Array(any_of)) = map.get("anyOf")
                && any_of.len() == 2
                && any_of[1].get("enum") == Some(&json!([null]))
            {
                let inner = any_of[0].clone();
                map.remove("anyOf");
                if let Value::Object(inner) = inner {
                    for (k, v) in inner {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            map.remove("nullable");
            if map.get("format").and_then(Value::as_str) == Some("uint32") {
                map.remove("format");
            }
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            if let Some(Value::Array(types)) = map.get("type").cloned() {
                let types: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
                if let [single] = types.as_slice() {
                    map.insert("type".into(), single.clone());
                }
            }
            for value in map.values_mut() {
                make_structural(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(make_structural),
        _ => {}
    }
}

/// The GitLabSecrets CRD.
pub(crate) fn crd() -> CustomResourceDefinition {
    let mut spec = schema_of::<GitLabSecretsSpec>();
    let mut status = schema_of::<GitLabSecretsStatus>();
    // Key sizes per algorithm; CEL, so kube-apiserver checks it (the structural bounds are
    // the union of both algorithms').
    spec["properties"]["certificates"]["items"]["properties"]["authority"]["x-kubernetes-validations"] = json!([{
        "rule": "!has(self.keySize) || (self.algorithm == 'rsa' ? self.keySize >= 2048 : self.keySize in [256, 384, 521])",
        "message": "keySize must be 2048 to 8192 for rsa, and 256, 384 or 521 for ecdsa",
    }]);
    for schema in [&mut spec, &mut status] {
        if let Value::Object(map) = schema {
            map.remove("description");
        }
    }
    let value = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{PLURAL}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": KIND,
                "listKind": format!("{KIND}List"),
                "plural": PLURAL,
                "singular": PLURAL,
            },
            "scope": "Namespaced",
            "versions": [{
                "name": VERSION,
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Ready", "type": "string",
                     "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
                    {"name": "Reason", "type": "string",
                     "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {"openAPIV3Schema": {
                    "description": "The Secrets one GitLab release needs, created and filled \
                        in place of the chart's shared-secrets Job. Keys are added, never \
                        changed or removed; deleting the resource leaves every Secret.",
                    "type": "object",
                    "required": ["spec"],
                    "properties": {
                        "apiVersion": {"type": "string"},
                        "kind": {"type": "string"},
                        "metadata": {"type": "object"},
                        "spec": spec,
                        "status": status,
                    },
                }},
            }],
        },
    });
    serde_json::from_value(value).expect("the CRD built here decodes as a CRD")
}

/// The CRD as committed: YAML with a header.
pub(crate) fn crd_yaml() -> String {
    let body = serde_yaml_ng::to_string(&crd()).expect("a CRD encodes as YAML");
    format!(
        "# Generated from guests/gitlabsecrets/src/types.rs; do not edit.\n\
         # Regenerate: UPDATE_CRDS=1 cargo test -p gitlabsecrets\n{body}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::GitLabSecrets;

    #[test]
    fn the_committed_crd_is_generated_from_the_types() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CRD_PATH);
        let generated = crd_yaml();
        // With UPDATE_CRDS a stale file is rewritten, and the test still fails: the crate
        // compiled the old YAML in, so only the next run can pass.
        if crate::CRD_YAML != generated && std::env::var_os("UPDATE_CRDS").is_some() {
            std::fs::write(&path, &generated).expect("writes the CRD");
            panic!(
                "{} was stale and is regenerated: commit it and run the tests again",
                path.display()
            );
        }
        assert!(
            crate::CRD_YAML == generated,
            "{} is stale: run `UPDATE_CRDS=1 cargo test -p gitlabsecrets` and commit it",
            path.display()
        );
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
        // Every node with properties or items declares its type, and no node uses the
        // keywords a structural schema forbids outside value validations.
        fn walk(path: &str, node: &Value, errors: &mut Vec<String>) {
            let Value::Object(map) = node else { return };
            for forbidden in ["anyOf", "oneOf", "allOf", "not", "$ref", "nullable"] {
                if map.contains_key(forbidden) {
                    errors.push(format!("{path}: {forbidden}"));
                }
            }
            if !map.contains_key("type")
                && !map.contains_key("x-kubernetes-preserve-unknown-fields")
            {
                errors.push(format!("{path}: no type"));
            }
            if let Some(Value::Object(properties)) = map.get("properties") {
                for (name, child) in properties {
                    walk(&format!("{path}.{name}"), child, errors);
                }
            }
            if let Some(items) = map.get("items") {
                walk(&format!("{path}[]"), items, errors);
            }
        }
        let crd = serde_json::to_value(crd()).expect("encodes");
        let mut errors = Vec::new();
        walk(
            "",
            &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
            &mut errors,
        );
        assert!(errors.is_empty(), "{errors:#?}");
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
