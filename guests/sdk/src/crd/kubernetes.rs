//! The schemas of Kubernetes types a spec embeds (a `ResourceRequirements`, a
//! `LabelSelector`, …), as controller-gen spells them in a CRD.
//!
//! The properties, types, formats, required fields and descriptions are k8s-openapi's
//! (its `schemars` feature, generated from the Kubernetes OpenAPI definitions). What those
//! schemas leave out is added from the same definitions, per definition name
//! ([`EXTENSIONS`]): the list types of `+listType` fields (`atomic`, or `map` with its
//! keys), the `atomic` map type of `+structType=atomic` structs, and the two scalar types
//! controller-gen writes out itself: `IntOrString` (`anyOf: [integer, string]` with
//! `x-kubernetes-int-or-string`) and `Quantity` (the same with kube's quantity pattern).
//!
//! A type newly embedded needs the `+listType` / `+structType` markers of every
//! definition it reaches in [`EXTENSIONS`]; k8s-openapi's `DeepMerge` impls name the
//! same strategies (`merge_strategies::list::atomic`, `list::map`).

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use super::structural::int_or_string_any_of;

/// `io.k8s.apimachinery.pkg.api.resource.Quantity`.
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
/// `io.k8s.apimachinery.pkg.util.intstr.IntOrString`.
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
/// `io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector`.
const LABEL_SELECTOR: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector";

/// The pattern of a Quantity, as kube-openapi and controller-gen write it.
const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// What the Kubernetes OpenAPI definitions add to k8s-openapi's schemas:
/// (definition, property — empty for the definition itself, extensions).
const EXTENSIONS: &[(&str, &str, Extension)] = &[
    (LABEL_SELECTOR, "", Extension::AtomicStruct),
    (LABEL_SELECTOR, "matchExpressions", Extension::AtomicList),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
        "values",
        Extension::AtomicList,
    ),
    (
        "io.k8s.api.core.v1.ResourceRequirements",
        "claims",
        Extension::MapList("name"),
    ),
    (
        "io.k8s.api.core.v1.TopologySpreadConstraint",
        "matchLabelKeys",
        Extension::AtomicList,
    ),
    (
        "io.k8s.api.networking.v1.NetworkPolicyEgressRule",
        "ports",
        Extension::AtomicList,
    ),
    (
        "io.k8s.api.networking.v1.NetworkPolicyEgressRule",
        "to",
        Extension::AtomicList,
    ),
    (
        "io.k8s.api.networking.v1.IPBlock",
        "except",
        Extension::AtomicList,
    ),
];

/// A marker of the Kubernetes OpenAPI definitions.
#[derive(Debug, Clone, Copy)]
enum Extension {
    /// `+listType=atomic`.
    AtomicList,
    /// `+listType=map` keyed by the field named.
    MapList(&'static str),
    /// `+structType=atomic`.
    AtomicStruct,
}

impl Extension {
    fn keywords(self) -> Value {
        match self {
            Self::AtomicList => json!({"x-kubernetes-list-type": "atomic"}),
            Self::MapList(key) => {
                json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": [key]})
            }
            Self::AtomicStruct => json!({"x-kubernetes-map-type": "atomic"}),
        }
    }
}

/// The schema of a field holding the Kubernetes type `T` (a k8s-openapi type, or a `Vec`
/// of one), for `#[schemars(schema_with = "wasm_operator_sdk::crd::kubernetes::<T>")]`:
/// every definition it reaches inlined, with the extensions of the Kubernetes OpenAPI
/// definitions. The field's doc comment becomes the description, as for any field.
pub fn kubernetes<T: schemars::JsonSchema>(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = false;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.subschema_for::<T>().to_value();
    let definitions = generator.take_definitions(true);
    inline(&mut schema, &definitions);
    schema
        .try_into()
        .unwrap_or_else(|e| panic!("the schema of {} is an object: {e}", T::schema_name()))
}

/// Replaces every `$ref` below `node` with the definition it names (its siblings, a
/// field's description, win over the definition's keywords).
fn inline(node: &mut Value, definitions: &Map<String, Value>) {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.remove("$ref") {
                let name = reference.rsplit('/').next().unwrap_or_default();
                let mut resolved = definition(name, definitions);
                if let Value::Object(resolved) = &mut resolved {
                    resolved.extend(std::mem::take(map));
                }
                *node = resolved;
                inline(node, definitions);
                return;
            }
            map.values_mut().for_each(|v| inline(v, definitions));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| inline(v, definitions)),
        _ => {}
    }
}

/// The definition `name` with its extensions; the two scalar types as controller-gen
/// writes them (no description: the field's own is kept).
fn definition(name: &str, definitions: &Map<String, Value>) -> Value {
    match name {
        QUANTITY => json!({
            "anyOf": int_or_string_any_of(),
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": true,
        }),
        INT_OR_STRING => json!({
            "anyOf": int_or_string_any_of(),
            "x-kubernetes-int-or-string": true,
        }),
        _ => {
            let mut schema = definitions.get(name).cloned().unwrap_or_else(|| {
                panic!("k8s-openapi's schema refers to {name} it does not define")
            });
            for (_, property, extension) in EXTENSIONS.iter().filter(|(d, ..)| *d == name) {
                let target = if property.is_empty() {
                    Some(&mut schema)
                } else {
                    schema.pointer_mut(&format!("/properties/{property}"))
                };
                let Some(Value::Object(target)) = target else {
                    panic!("{name} has no property {property} to mark {extension:?}");
                };
                if let Value::Object(keywords) = extension.keywords() {
                    target.extend(keywords);
                }
            }
            schema
        }
    }
}

#[cfg(test)]
#[path = "kubernetes_tests.rs"]
mod tests;
