//! CRDs generated from a reconciler's Rust types (the `schemars` feature, tests only).
//!
//! A plugin declares its resource as serde types deriving `schemars::JsonSchema` under
//! `cfg_attr(test, …)`; its tests build the CRD with [`Crd::build`] and compare it with the
//! committed YAML ([`check_committed`]), so the shipped `.wasm` carries no schemars and the
//! YAML can never drift from the types. Schema rules kube-apiserver evaluates (CEL
//! `x-kubernetes-validations`) are attached to the types with
//! `#[schemars(extend("x-kubernetes-validations" = [...]))]`.
//!
//! A field holding a Kubernetes type (a `ResourceRequirements`, a `LabelSelector`) takes
//! its schema from [`kubernetes`], as controller-gen would spell it. [`structural_errors`]
//! finds where a schema is not structural; [`validate`] checks an object against a schema
//! as kube-apiserver does, for tests that a CRD refuses what it should.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

mod kubernetes;
mod structural;
mod validate;

pub use kubernetes::kubernetes;
use structural::make_structural;
pub use structural::structural_errors;
pub use validate::validate;

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

/// Removes the `default` of every property its object requires, throughout `node`.
///
/// A serde default on a required field makes schemars emit a `default`: the API server
/// would fill a missing required field with it (an empty name, which then fails its own
/// `minLength`), and a `default` that does not validate makes a real API server refuse the
/// CRD.
pub fn drop_required_defaults(node: &mut Value) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_required_property_loses_its_default_at_every_depth_and_an_optional_one_keeps_it() {
        let mut schema = json!({"required": ["name"], "properties": {
            "name": {"type": "string", "default": ""},
            "replicas": {"type": "integer", "default": 3},
            "items": {"type": "array", "items": {"required": ["key"], "properties": {
                "key": {"default": "", "type": "string"},
                "value": {"default": "v", "type": "string"}}}}}});
        drop_required_defaults(&mut schema);
        assert_eq!(
            schema,
            json!({"required": ["name"], "properties": {
                "name": {"type": "string"},
                "replicas": {"type": "integer", "default": 3},
                "items": {"type": "array", "items": {"required": ["key"], "properties": {
                    "key": {"type": "string"},
                    "value": {"default": "v", "type": "string"}}}}}})
        );
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Example {
        size: Option<u32>,
        names: Vec<String>,
    }

    #[test]
    fn a_schema_of_rust_types_is_structural_and_an_option_is_its_inner_type() {
        let schema = schema_of::<Example>();
        assert_eq!(structural_errors(&schema), Vec::<String>::new());
        assert_eq!(schema["properties"]["size"]["type"], "integer");
        assert!(schema["properties"]["size"].get("format").is_none());
    }
}
