//! Read-only accessors over one node of a CRD `openAPIV3Schema`, kept as a
//! plain [`serde_json::Value`], and the field-path spelling kube uses.
//!
//! Every accessor tolerates malformed input: a keyword of the wrong JSON
//! type reads as absent, so callers never panic on a user-supplied schema.

use serde_json::{Map, Value};

/// `type` of the node, `""` when absent or not a string.
pub(crate) fn type_of(s: &Value) -> &str {
    s.get("type").and_then(Value::as_str).unwrap_or("")
}

/// A boolean keyword (`nullable`, `x-kubernetes-*`), `false` when absent.
pub(crate) fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// `properties` of the node, when it is an object.
pub(crate) fn properties(s: &Value) -> Option<&Map<String, Value>> {
    s.get("properties").and_then(Value::as_object)
}

/// The schema of property `k`, when declared.
pub(crate) fn property<'a>(s: &'a Value, k: &str) -> Option<&'a Value> {
    properties(s).and_then(|p| p.get(k))
}

/// `items` of the node when it is a single schema (the only form a
/// structural schema allows).
pub(crate) fn items(s: &Value) -> Option<&Value> {
    s.get("items").filter(|v| v.is_object())
}

/// The three shapes of `additionalProperties`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Additional<'a> {
    /// Keyword not present.
    Absent,
    /// `additionalProperties: true|false`.
    Allows(bool),
    /// `additionalProperties: {schema}`.
    Schema(&'a Value),
}

/// Reads `additionalProperties`.
pub(crate) fn additional(s: &Value) -> Additional<'_> {
    match s.get("additionalProperties") {
        Some(Value::Bool(b)) => Additional::Allows(*b),
        Some(v @ Value::Object(_)) => Additional::Schema(v),
        _ => Additional::Absent,
    }
}

/// The schema for an object member `k`: its property, else the
/// `additionalProperties` schema. `None` when neither applies.
pub(crate) fn member_schema<'a>(s: &'a Value, k: &str) -> Option<&'a Value> {
    property(s, k).or(match additional(s) {
        Additional::Schema(ap) => Some(ap),
        _ => None,
    })
}

/// The JSON Schema type name of a value, as kube-openapi infers it from
/// decoded JSON (integers stay `integer`, other numbers are `number`).
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `base.key` (or `key` at the root), as `field.Path.Child` prints it.
pub(crate) fn child(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

/// `base[i]`, as `field.Path.Index` prints it.
pub(crate) fn index(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// `base[key]`, as `field.Path.Key` prints it.
pub(crate) fn key(base: &str, key: &str) -> String {
    format!("{base}[{key}]")
}
