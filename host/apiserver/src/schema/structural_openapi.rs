//! The OpenAPI-level restrictions on a CRD schema
//! (`ValidateCustomResourceDefinitionOpenAPISchema`): unsupported keywords,
//! `uniqueItems`, `additionalProperties` beside `properties`, and the
//! list/map type extensions.

use serde_json::Value;

use super::super::errors::FieldError;
use super::super::node::{self, Additional};
use super::props_key;

const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Keywords kube refuses outright, with its wording.
const UNSUPPORTED: [(&str, &str); 7] = [
    ("id", "id is not supported"),
    ("$schema", "$schema is not supported"),
    ("$ref", "$ref is not supported"),
    ("additionalItems", "additionalItems is not supported"),
    ("patternProperties", "patternProperties is not supported"),
    ("definitions", "definitions is not supported"),
    ("dependencies", "dependencies is not supported"),
];

/// Appends the OpenAPI errors of `s` and its children. `forbid_default`
/// carries the reason defaults are refused here (top-level metadata,
/// apiVersion and kind), if any.
pub(in super::super) fn openapi(
    s: &Value,
    path: &str,
    is_root: bool,
    forbid_default: Option<&str>,
    out: &mut Vec<FieldError>,
) {
    let ty = node::type_of(s);
    if !ty.is_empty() && !TYPES.contains(&ty) {
        let supported: Vec<String> = TYPES.iter().map(|t| t.to_string()).collect();
        out.push(FieldError::not_supported(
            &node::child(path, "type"),
            Value::from(ty),
            &supported,
        ));
    }
    if let Some(reason) = forbid_default
        && s.get("default").is_some()
    {
        let msg = format!("must not be set {reason}");
        out.push(FieldError::forbidden(&node::child(path, "default"), &msg));
    }
    for (kw, msg) in UNSUPPORTED {
        if s.get(kw).is_some() {
            out.push(FieldError::forbidden(&node::child(path, kw), msg));
        }
    }
    if s.get("items").is_some_and(Value::is_array) {
        let msg = "items must be a schema object and not an array";
        out.push(FieldError::forbidden(&node::child(path, "items"), msg));
    }
    if node::flag(s, "uniqueItems") {
        let msg =
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic";
        out.push(FieldError::forbidden(
            &node::child(path, "uniqueItems"),
            msg,
        ));
    }
    let has_props = node::properties(s).is_some_and(|p| !p.is_empty());
    let ap = node::additional(s);
    if has_props && matches!(ap, Additional::Allows(false) | Additional::Schema(_)) {
        let msg = "additionalProperties and properties are mutual exclusive";
        out.push(FieldError::forbidden(
            &node::child(path, "additionalProperties"),
            msg,
        ));
    }
    if let Additional::Schema(ap) = ap {
        openapi(
            ap,
            &node::child(path, "additionalProperties"),
            false,
            forbid_default,
            out,
        );
    }
    for (k, p) in node::properties(s).into_iter().flatten() {
        let reason = if is_root && ["metadata", "kind", "apiVersion"].contains(&k.as_str()) {
            Some(format!("in top-level {k}"))
        } else {
            forbid_default.map(String::from)
        };
        openapi(p, &props_key(path, k), false, reason.as_deref(), out);
    }
    if let Some(not) = s.get("not") {
        openapi(not, &node::child(path, "not"), false, forbid_default, out);
    }
    for kw in ["allOf", "oneOf", "anyOf"] {
        for (i, sub) in s
            .get(kw)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let p = node::index(&node::child(path, kw), i);
            openapi(sub, &p, false, forbid_default, out);
        }
    }
    if let Some(items) = node::items(s) {
        openapi(
            items,
            &node::child(path, "items"),
            false,
            forbid_default,
            out,
        );
    }
    if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        let p = node::child(path, "x-kubernetes-preserve-unknown-fields");
        out.push(FieldError::invalid(
            &p,
            Value::Bool(false),
            "must be true or undefined",
        ));
    }
    map_type(s, ty, path, out);
    list_type(s, ty, path, out);
}

fn map_type(s: &Value, ty: &str, path: &str, out: &mut Vec<FieldError>) {
    let Some(mt) = s.get("x-kubernetes-map-type") else {
        return;
    };
    let type_path = node::child(path, "type");
    let msg = "must be object if x-kubernetes-map-type is specified";
    if ty.is_empty() {
        out.push(FieldError::required(&type_path, msg));
    } else if ty != "object" {
        out.push(FieldError::invalid(&type_path, Value::from(ty), msg));
    }
    if mt.as_str().is_none_or(|m| m != "atomic" && m != "granular") {
        let supported = ["atomic".to_string(), "granular".to_string()];
        let p = node::child(path, "x-kubernetes-map-type");
        out.push(FieldError::not_supported(&p, mt.clone(), &supported));
    }
}

fn list_type(s: &Value, ty: &str, path: &str, out: &mut Vec<FieldError>) {
    let lt = s.get("x-kubernetes-list-type");
    let keys: Vec<&str> = s
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let lt_path = node::child(path, "x-kubernetes-list-type");
    let keys_path = node::child(path, "x-kubernetes-list-map-keys");
    if let Some(lt) = lt {
        let msg = "must be array if x-kubernetes-list-type is specified";
        let type_path = node::child(path, "type");
        if ty.is_empty() {
            out.push(FieldError::required(&type_path, msg));
        } else if ty != "array" {
            out.push(FieldError::invalid(&type_path, Value::from(ty), msg));
        }
        if lt
            .as_str()
            .is_none_or(|l| !["atomic", "set", "map"].contains(&l))
        {
            let supported = ["atomic", "set", "map"].map(String::from);
            out.push(FieldError::not_supported(&lt_path, lt.clone(), &supported));
        }
    }
    let is_map = lt.and_then(Value::as_str) == Some("map");
    if !keys.is_empty() && !is_map {
        let msg = "must be map if x-kubernetes-list-map-keys is non-empty";
        match lt {
            None => out.push(FieldError::required(&lt_path, msg)),
            Some(v) => out.push(FieldError::invalid(&lt_path, v.clone(), msg)),
        }
    }
    if !is_map {
        return;
    }
    if keys.is_empty() {
        let msg = "must not be empty if x-kubernetes-list-type is map";
        out.push(FieldError::required(&keys_path, msg));
    }
    let Some(items) = node::items(s) else {
        let msg = "must have a schema if x-kubernetes-list-type is map";
        out.push(FieldError::required(&node::child(path, "items"), msg));
        return;
    };
    let item_ty = node::type_of(items);
    if item_ty != "object" {
        let p = node::child(&node::child(path, "items"), "type");
        let msg = "must be object if parent array's x-kubernetes-list-type is map";
        out.push(FieldError::invalid(&p, Value::from(item_ty), msg));
        return;
    }
    let keys_value = s
        .get("x-kubernetes-list-map-keys")
        .cloned()
        .unwrap_or(Value::Null);
    let required: Vec<&str> = items
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (i, k) in keys.iter().enumerate() {
        let item_prop_path = props_key(&node::child(path, "items"), k);
        match node::property(items, k) {
            Some(p) => {
                if matches!(node::type_of(p), "array" | "object") {
                    let msg =
                        "must be a scalar type if parent array's x-kubernetes-list-type is map";
                    let tp = node::child(&item_prop_path, "type");
                    out.push(FieldError::invalid(&tp, Value::from(item_ty), msg));
                }
                if !required.contains(k) && p.get("default").is_none() {
                    let msg = "this property is in x-kubernetes-list-map-keys, so it must have a \
                               default or be a required property";
                    out.push(FieldError::required(
                        &node::child(&item_prop_path, "default"),
                        msg,
                    ));
                }
            }
            None => {
                let msg = "entries must all be names of item properties";
                out.push(FieldError::invalid(&keys_path, keys_value.clone(), msg));
            }
        }
        if keys[..i].contains(k) {
            let msg = "must not contain duplicate entries";
            out.push(FieldError::invalid(&keys_path, keys_value.clone(), msg));
        }
    }
}
