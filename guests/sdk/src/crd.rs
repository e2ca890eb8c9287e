//! CRDs generated from a reconciler's Rust types (the `schemars` feature, tests only).
//!
//! A plugin declares its resource as serde types deriving `schemars::JsonSchema` under
//! `cfg_attr(test, …)`; its tests build the CRD with [`Crd::build`] and compare it with the
//! committed YAML ([`check_committed`]), so the shipped `.wasm` carries no schemars and the
//! YAML can never drift from the types. Schema rules kube-apiserver evaluates (CEL
//! `x-kubernetes-validations`) are attached to the types with
//! `#[schemars(extend("x-kubernetes-validations" = [...]))]`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// The structural schema of `T`: subschemas inlined, `nullable`, `null` enum members and
/// the integer formats schemars invents (`uint32`) removed, no title, no description at
/// the root.
pub fn schema_of<T: schemars::JsonSchema>() -> Value {
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
        map.remove("description");
    }
    schema
}

/// The schema of a field holding a Kubernetes type the CRD does not spell out (a
/// `LabelSelector`, `ResourceRequirements`, …): an object kept as written, checked where
/// it is used (the API server validates the Deployment or NetworkPolicy it ends up in).
pub fn embedded_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
}

/// [`embedded_object`] for a list of such objects.
pub fn embedded_objects(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "array", "items":
        {"type": "object", "x-kubernetes-preserve-unknown-fields": true}})
}

/// The schema of `status.conditions`: a list of `metav1.Condition`s keyed by `type`.
pub fn conditions(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
        "items": {
            "type": "object",
            "required": ["type", "status", "lastTransitionTime", "reason", "message"],
            "properties": {
                "type": {"type": "string", "maxLength": 316,
                    "description": "The condition's type, e.g. Ready."},
                "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0,
                    "description": "The metadata.generation the condition was set for."},
                "lastTransitionTime": {"type": "string", "format": "date-time",
                    "description": "When the status last changed."},
                "reason": {"type": "string", "minLength": 1, "maxLength": 1024,
                    "description": "Why, in CamelCase."},
                "message": {"type": "string", "maxLength": 32768,
                    "description": "Why, for people."},
            },
        },
    })
}

/// The extension marking a property required although its Rust field has a serde default
/// (schemars leaves such a field optional): `#[schemars(extend("x-required" = true))]`.
/// The marker is moved into the parent's `required` list.
pub const REQUIRED: &str = "x-required";

fn make_structural(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get_mut("properties") {
                let mut required: Vec<String> = Vec::new();
                for (name, property) in properties.iter_mut() {
                    if let Value::Object(p) = property
                        && p.remove(REQUIRED) == Some(Value::Bool(true))
                    {
                        required.push(name.clone());
                    }
                }
                if !required.is_empty() {
                    let list = map.entry("required").or_insert_with(|| json!([]));
                    if let Value::Array(list) = list {
                        for name in required {
                            if !list.iter().any(|n| n == name.as_str()) {
                                list.push(json!(name));
                            }
                        }
                    }
                }
            }
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
            // A unit enum with documented variants: `oneOf: [{enum: [A]}, {const: B}, …]`
            // → `type: string, enum: [A, B, …]`.
            if let Some(Value::Array(one_of)) = map.get("oneOf") {
                let values: Option<Vec<Value>> = one_of
                    .iter()
                    .map(|v| match (v.get("const"), v.get("enum")) {
                        (Some(c), _) => Some(c.clone()),
                        (None, Some(Value::Array(e))) if e.len() == 1 => Some(e[0].clone()),
                        _ => None,
                    })
                    .collect();
                if let Some(values) = values.filter(|v| v.iter().all(Value::is_string)) {
                    map.remove("oneOf");
                    map.insert("type".into(), json!("string"));
                    map.insert("enum".into(), Value::Array(values));
                }
            }
            map.remove("nullable");
            if matches!(
                map.get("format").and_then(Value::as_str),
                Some("uint32" | "uint64" | "uint8" | "uint16" | "uint")
            ) {
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

/// A CRD of one version with a status subresource.
pub struct Crd<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub plural: &'a str,
    pub namespaced: bool,
    /// What the resource is, for `kubectl explain`.
    pub description: &'a str,
    /// `additionalPrinterColumns`: (name, type, jsonPath).
    pub printer_columns: &'a [(&'a str, &'a str, &'a str)],
    /// The schemas of `spec` and `status` (e.g. [`schema_of`]).
    pub spec: Value,
    pub status: Value,
    /// Whether `spec` is required.
    pub spec_required: bool,
}

impl Crd<'_> {
    /// The CustomResourceDefinition.
    pub fn build(self) -> CustomResourceDefinition {
        let columns: Vec<Value> = self
            .printer_columns
            .iter()
            .map(|(name, type_, path)| json!({"name": name, "type": type_, "jsonPath": path}))
            .collect();
        let mut root = Map::new();
        root.insert("description".into(), json!(self.description));
        root.insert("type".into(), json!("object"));
        if self.spec_required {
            root.insert("required".into(), json!(["spec"]));
        }
        root.insert(
            "properties".into(),
            json!({
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"type": "object"},
                "spec": self.spec,
                "status": self.status,
            }),
        );
        let value = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{}.{}", self.plural, self.group)},
            "spec": {
                "group": self.group,
                "names": {
                    "kind": self.kind,
                    "listKind": format!("{}List", self.kind),
                    "plural": self.plural,
                    "singular": self.kind.to_lowercase(),
                },
                "scope": if self.namespaced { "Namespaced" } else { "Cluster" },
                "versions": [{
                    "name": self.version,
                    "served": true,
                    "storage": true,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": columns,
                    "schema": {"openAPIV3Schema": Value::Object(root)},
                }],
            },
        });
        serde_json::from_value(value).expect("the CRD built here decodes as a CRD")
    }
}

/// The CRD as committed: YAML under a header naming its source and how to regenerate it.
pub fn crd_yaml(crd: &CustomResourceDefinition, source: &str, regenerate: &str) -> String {
    let body = serde_yaml_ng::to_string(crd).expect("a CRD encodes as YAML");
    format!("# Generated from {source}; do not edit.\n# Regenerate: {regenerate}\n{body}")
}

/// Panics unless `committed` (the YAML compiled into the plugin) equals `generated`. With
/// `UPDATE_CRDS` set a stale file at `path` is rewritten first, and the check still fails:
/// the crate compiled the old YAML in, so only the next run can pass.
pub fn check_committed(committed: &str, generated: &str, path: &std::path::Path, regenerate: &str) {
    if committed != generated && std::env::var_os("UPDATE_CRDS").is_some() {
        std::fs::write(path, generated).expect("writes the CRD");
        panic!(
            "{} was stale and is regenerated: commit it and run the tests again",
            path.display()
        );
    }
    assert!(
        committed == generated,
        "{} is stale: run `{regenerate}` and commit it",
        path.display()
    );
}

/// The paths of `schema` where it is not structural: a node using a keyword a structural
/// schema forbids, or one with neither a type nor `x-kubernetes-preserve-unknown-fields`.
pub fn structural_errors(schema: &Value) -> Vec<String> {
    fn walk(path: &str, node: &Value, errors: &mut Vec<String>) {
        let Value::Object(map) = node else { return };
        for forbidden in ["anyOf", "oneOf", "allOf", "not", "$ref", "nullable"] {
            if map.contains_key(forbidden) {
                errors.push(format!("{path}: {forbidden}"));
            }
        }
        if !map.contains_key("type") && !map.contains_key("x-kubernetes-preserve-unknown-fields") {
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
        if let Some(Value::Object(_)) = map.get("additionalProperties") {
            walk(&format!("{path}{{}}"), &map["additionalProperties"], errors);
        }
    }
    let mut errors = Vec::new();
    walk("", schema, &mut errors);
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Example {
        size: Option<u32>,
        #[schemars(schema_with = "embedded_object")]
        selector: Value,
        names: Vec<String>,
    }

    #[test]
    fn a_schema_of_rust_types_is_structural_and_an_option_is_its_inner_type() {
        let schema = schema_of::<Example>();
        assert_eq!(structural_errors(&schema), Vec::<String>::new());
        assert_eq!(schema["properties"]["size"]["type"], "integer");
        assert!(schema["properties"]["size"].get("format").is_none());
        assert_eq!(
            schema["properties"]["selector"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
    }

    #[test]
    fn a_node_without_a_type_or_with_any_of_is_not_structural() {
        let schema = json!({"type": "object", "properties": {
            "a": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "b": {"description": "no type"},
            "c": {"type": "string"},
        }});
        assert_eq!(
            structural_errors(&schema),
            vec![".a: anyOf", ".a: no type", ".b: no type"]
        );
    }
}
