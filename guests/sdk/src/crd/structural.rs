//! Structural schemas: turning what schemars emits into one, and finding where a schema is
//! not one (kube-apiserver refuses a CRD whose schema is not structural).

use serde_json::{Value, json};

use super::REQUIRED;

/// Rewrites schemars' output into a structural schema: `x-required` markers moved into
/// their parent's `required`, an `Option`'s `anyOf` replaced by its inner schema, a unit
/// enum's `oneOf` by `type: string` + `enum`; `nullable`, `null` enum members and the
/// integer formats schemars invents (`uint32`) removed.
pub(super) fn make_structural(schema: &mut Value) {
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

/// The `anyOf` of an int-or-string node, the one kube-apiserver tolerates in a structural
/// schema (what controller-gen emits for `IntOrString` and `Quantity`).
pub(super) fn int_or_string_any_of() -> Value {
    json!([{"type": "integer"}, {"type": "string"}])
}

/// The paths of `schema` where it is not structural: a node using a keyword a structural
/// schema forbids (an `x-kubernetes-int-or-string` node may spell its two types in
/// [`int_or_string_any_of`]), or one with neither a type, nor
/// `x-kubernetes-int-or-string`, nor `x-kubernetes-preserve-unknown-fields`.
pub fn structural_errors(schema: &Value) -> Vec<String> {
    fn walk(path: &str, node: &Value, errors: &mut Vec<String>) {
        let Value::Object(map) = node else { return };
        let int_or_string = map.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
        for forbidden in ["anyOf", "oneOf", "allOf", "not", "$ref", "nullable"] {
            let tolerated = forbidden == "anyOf"
                && int_or_string
                && map.get("anyOf") == Some(&int_or_string_any_of());
            if map.contains_key(forbidden) && !tolerated {
                errors.push(format!("{path}: {forbidden}"));
            }
        }
        if !map.contains_key("type")
            && !int_or_string
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
        if let Some(Value::Object(_)) = map.get("additionalProperties") {
            walk(&format!("{path}{{}}"), &map["additionalProperties"], errors);
        }
    }
    let mut errors = Vec::new();
    walk("", schema, &mut errors);
    errors
}

#[cfg(test)]
#[path = "structural_tests.rs"]
mod tests;
