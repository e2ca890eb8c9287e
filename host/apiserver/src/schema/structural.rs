//! The checks kube-apiserver runs on a CRD version's `openAPIV3Schema` when
//! the CRD is created or updated: structural invariants
//! (`structuralschema.ValidateStructural`) and the OpenAPI restrictions of
//! `ValidateCustomResourceDefinitionOpenAPISchema`. Any error means 422.

use serde_json::Value;

use super::errors::FieldError;
use super::node::{self, Additional};
use super::validate::compile_go_regex;

/// Where a node sits, which decides the wording of a missing `type`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Checks `schema` and returns its errors with paths under `path`, the
/// schema's own location in the CRD (e.g.
/// `spec.versions[0].schema.openAPIV3Schema`).
///
/// Order as kube: `nullable` at the root, then the structural errors sorted
/// by message, then the OpenAPI errors in schema order.
pub(crate) fn check_structural(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut out = Vec::new();
    if node::flag(schema, "nullable") {
        out.push(FieldError::forbidden(
            &node::child(path, "nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let mut structural = Vec::new();
    invariants(schema, Level::Root, path, &mut structural);
    structural.sort_by_key(ToString::to_string);
    out.extend(structural);
    openapi(schema, path, true, None, &mut out);
    out
}

fn invariants(s: &Value, lvl: Level, path: &str, out: &mut Vec<FieldError>) {
    let ty = node::type_of(s);
    let int_or_string = node::flag(s, "x-kubernetes-int-or-string");
    let preserve = node::flag(s, "x-kubernetes-preserve-unknown-fields");
    let embedded = node::flag(s, "x-kubernetes-embedded-resource");
    if ty == "array" && node::items(s).is_none() {
        out.push(FieldError::required(
            &node::child(path, "items"),
            "must be specified",
        ));
    }
    if let Some(items) = node::items(s) {
        invariants(items, Level::Item, &node::child(path, "items"), out);
    }
    for (k, v) in node::properties(s).into_iter().flatten() {
        invariants(v, Level::Field, &props_key(path, k), out);
    }
    let ap = node::additional(s);
    if !matches!(ap, Additional::Absent) && lvl == Level::Root {
        let p = node::child(path, "additionalProperties");
        out.push(FieldError::forbidden(&p, "must not be used at the root"));
    }
    if let Additional::Schema(ap) = ap {
        invariants(
            ap,
            Level::Field,
            &node::child(path, "additionalProperties"),
            out,
        );
    }
    if int_or_string && preserve {
        let p = node::child(path, "x-kubernetes-preserve-unknown-fields");
        let msg = "must be false if x-kubernetes-int-or-string is true";
        out.push(FieldError::invalid(&p, Value::Bool(true), msg));
    }
    if int_or_string && embedded {
        let p = node::child(path, "x-kubernetes-embedded-resource");
        let msg = "must be false if x-kubernetes-int-or-string is true";
        out.push(FieldError::invalid(&p, Value::Bool(true), msg));
    }
    value_validations(s, path, out);
    let type_path = node::child(path, "type");
    if embedded && ty != "object" {
        let msg = "must be object if x-kubernetes-embedded-resource is true";
        out.push(type_error(&type_path, ty, msg));
    } else if ty.is_empty() && !int_or_string && !preserve {
        let msg = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        out.push(FieldError::required(&type_path, msg));
    }
    if embedded && !matches!(ap, Additional::Absent) {
        let p = node::child(path, "additionalProperties");
        let msg = "must not be used if x-kubernetes-embedded-resource is set";
        out.push(FieldError::forbidden(&p, msg));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        out.push(FieldError::invalid(
            &type_path,
            Value::from(ty),
            "must be object at the root",
        ));
    }
    let check_meta = lvl == Level::Root || embedded;
    for k in ["kind", "apiVersion"] {
        if let Some(p) = node::property(s, k).filter(|_| check_meta) {
            let t = node::type_of(p);
            if t != "string" {
                let tp = node::child(&props_key(path, k), "type");
                out.push(FieldError::invalid(&tp, Value::from(t), "must be string"));
            }
        }
    }
    if let Some(meta) = node::property(s, "metadata") {
        metadata(meta, check_meta, lvl, &props_key(path, "metadata"), out);
    }
    if embedded && !preserve && node::properties(s).is_none_or(|p| p.is_empty()) {
        let msg = "must not be empty if x-kubernetes-embedded-resource is true without \
                   x-kubernetes-preserve-unknown-fields";
        out.push(FieldError::required(&node::child(path, "properties"), msg));
    }
}

fn props_key(path: &str, k: &str) -> String {
    node::key(&node::child(path, "properties"), k)
}

fn type_error(type_path: &str, ty: &str, msg: &str) -> FieldError {
    if ty.is_empty() {
        FieldError::required(type_path, msg)
    } else {
        FieldError::invalid(type_path, Value::from(ty), msg)
    }
}

/// `metadata` at the root may be `type: object` and may restrict only
/// `name` and/or `generateName`; anything else is forbidden.
fn metadata(s: &Value, check_meta: bool, lvl: Level, path: &str, out: &mut Vec<FieldError>) {
    let ty = node::type_of(s);
    if check_meta && ty != "object" {
        let msg = "must be object";
        out.push(FieldError::invalid(
            &node::child(path, "type"),
            Value::from(ty),
            msg,
        ));
    }
    if lvl != Level::Root {
        return;
    }
    let props_ok =
        node::properties(s).is_none_or(|p| p.keys().all(|k| k == "name" || k == "generateName"));
    let others_ok = s.as_object().is_none_or(|m| {
        m.keys()
            .all(|k| ["type", "properties", "default"].contains(&k.as_str()))
    });
    if !(props_ok && others_ok) {
        let msg = "must not specify anything other than name and generateName, but metadata is \
                   implicitly specified";
        out.push(FieldError::forbidden(path, msg));
    }
}

/// Keywords that make a schema non-structural inside `allOf`, `anyOf`,
/// `oneOf` and `not`, with kube's wording.
const NESTED_FORBIDDEN: [(&str, &str); 13] = [
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    (
        "x-kubernetes-preserve-unknown-fields",
        "must be false to be structural",
    ),
    (
        "x-kubernetes-embedded-resource",
        "must be false to be structural",
    ),
    (
        "x-kubernetes-int-or-string",
        "must be false to be structural",
    ),
    (
        "x-kubernetes-list-map-keys",
        "must be empty to be structural",
    ),
    (
        "x-kubernetes-list-type",
        "must be undefined to be structural",
    ),
    (
        "x-kubernetes-map-type",
        "must be undefined to be structural",
    ),
    ("x-kubernetes-validations", "must be empty to be structural"),
];

/// Whether `anyOf` is exactly `[{type: integer}, {type: string}]`, the
/// int-or-string pattern kube tolerates.
fn is_int_or_string_any_of(v: Option<&Value>) -> bool {
    let want = serde_json::json!([{"type": "integer"}, {"type": "string"}]);
    v == Some(&want)
}

fn value_validations(s: &Value, path: &str, out: &mut Vec<FieldError>) {
    let skip_any_of = is_int_or_string_any_of(s.get("anyOf"));
    if !skip_any_of {
        nested_list(s, "anyOf", path, None, out);
    }
    let first_all_of_skip = s
        .get("allOf")
        .and_then(|a| a.get(0))
        .is_some_and(|first| is_int_or_string_any_of(first.get("anyOf")));
    nested_list(s, "allOf", path, first_all_of_skip.then_some(0), out);
    nested_list(s, "oneOf", path, None, out);
    if let Some(not) = s.get("not") {
        nested(not, &node::child(path, "not"), false, out);
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str)
        && let Err(e) = compile_go_regex(p)
    {
        let msg = format!("must be a valid regular expression, but isn't: {e}");
        out.push(FieldError::invalid(
            &node::child(path, "pattern"),
            Value::from(p),
            &msg,
        ));
    }
}

fn nested_list(
    s: &Value,
    kw: &str,
    path: &str,
    skip_any_of_at: Option<usize>,
    out: &mut Vec<FieldError>,
) {
    for (i, sub) in s
        .get(kw)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = node::index(&node::child(path, kw), i);
        nested(sub, &p, skip_any_of_at == Some(i), out);
    }
}

fn nested(v: &Value, path: &str, skip_any_of: bool, out: &mut Vec<FieldError>) {
    if !skip_any_of {
        nested_list(v, "anyOf", path, None, out);
    }
    nested_list(v, "allOf", path, None, out);
    nested_list(v, "oneOf", path, None, out);
    if let Some(not) = v.get("not") {
        nested(not, &node::child(path, "not"), false, out);
    }
    if let Some(items) = node::items(v) {
        nested(items, &node::child(path, "items"), false, out);
    }
    for (k, p) in node::properties(v).into_iter().flatten() {
        nested(p, &props_key(path, k), false, out);
    }
    for (kw, msg) in NESTED_FORBIDDEN {
        let set = match v.get(kw) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Array(a)) => !a.is_empty(),
            Some(_) => true,
        };
        if set {
            out.push(FieldError::forbidden(&node::child(path, kw), msg));
        }
    }
    if node::property(v, "metadata").is_some() {
        let msg = "must not be specified in a nested context";
        out.push(FieldError::forbidden(&props_key(path, "metadata"), msg));
    }
}

#[path = "structural_openapi.rs"]
mod openapi_checks;
use openapi_checks::openapi;

#[cfg(test)]
#[path = "structural_tests.rs"]
mod tests;
