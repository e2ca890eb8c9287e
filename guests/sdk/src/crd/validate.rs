//! An object checked against a CRD's structural schema, as kube-apiserver checks a custom
//! resource before storing it: what a reconciler's tests use to see that its generated CRD
//! refuses what the API server would refuse.
//!
//! Checked, in kube-apiserver's words: `type` (an `x-kubernetes-int-or-string` node takes
//! an integer or a string), `required`, `enum`, `pattern` (on strings), `minLength` /
//! `maxLength`, `minimum` / `maximum`, `minItems` / `maxItems`, `maxProperties`, through
//! `properties`, `items` and `additionalProperties`.
//!
//! Not checked: CEL rules (`x-kubernetes-validations`), `format`, the uniqueness of
//! `x-kubernetes-list-type` lists. As on the server, a field the schema does not declare is
//! pruned, not refused, and a `null` member of an object is dropped; no default is applied.
//! A `pattern` is compiled as a Rust `regex`, which agrees with Go's RE2 on the patterns a
//! CRD uses (it reads `\d`, `\w` and `\s` as Unicode classes, RE2 as ASCII ones).

use serde_json::{Map, Value};

use crate::admission::FieldErrors;

/// The errors of `object` against `schema` (a version's `openAPIV3Schema`), members of an
/// object in key order, then its missing required fields; none when it is valid.
pub fn validate(schema: &Value, object: &Value) -> FieldErrors {
    let mut errors = FieldErrors::new();
    node(schema, object, "", &mut errors);
    errors
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The JSON type of `data` as kube names it.
fn kind(data: &Value) -> &'static str {
    match data {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn node(schema: &Value, data: &Value, path: &str, errors: &mut FieldErrors) {
    if !check_type(schema, data, path, errors) {
        return;
    }
    check_enum(schema, data, path, errors);
    match data {
        Value::String(text) => check_string(schema, text, path, errors),
        Value::Number(_) => check_number(schema, data, path, errors),
        Value::Array(items) => check_array(schema, items, path, errors),
        Value::Object(members) => check_object(schema, members, path, errors),
        Value::Null | Value::Bool(_) => {}
    }
}

/// Whether `data` is of a type the node takes; an error when it is not.
fn check_type(schema: &Value, data: &Value, path: &str, errors: &mut FieldErrors) -> bool {
    let types: Vec<&str> = if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        vec!["integer", "string"]
    } else {
        match schema.get("type").and_then(Value::as_str) {
            Some(t) => vec![t],
            None => return true,
        }
    };
    let actual = kind(data);
    let whole = data.as_f64().is_some_and(|f| f.fract() == 0.0);
    let accepted = types.contains(&actual)
        || (actual == "number" && whole && types.contains(&"integer"))
        || (actual == "integer" && types.contains(&"number"));
    if !accepted {
        let detail = format!(
            "{path} in body must be of type {}: {actual:?}",
            types.join(",")
        );
        errors.invalid(path, &Value::from(actual), &detail);
    }
    accepted
}

fn bound(schema: &Value, keyword: &str) -> Option<f64> {
    schema.get(keyword).and_then(Value::as_f64)
}

fn check_enum(schema: &Value, data: &Value, path: &str, errors: &mut FieldErrors) {
    let Some(values) = schema.get("enum").and_then(Value::as_array) else {
        return;
    };
    if values.is_empty() || values.contains(data) {
        return;
    }
    let supported: Vec<String> = values
        .iter()
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
        .collect();
    let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
    errors.not_supported(path, data, &supported);
}

fn check_string(schema: &Value, text: &str, path: &str, errors: &mut FieldErrors) {
    let length = text.chars().count() as f64;
    let value = Value::from(text);
    if let Some(max) = bound(schema, "maxLength")
        && length > max
    {
        errors.too_long(path, max as u64);
        return;
    }
    if let Some(min) = bound(schema, "minLength")
        && length < min
    {
        let detail = format!("{path} in body should be at least {min} chars long");
        errors.invalid(path, &value, &detail);
        return;
    }
    let Some(pattern) = schema.get("pattern").and_then(Value::as_str) else {
        return;
    };
    match regex::Regex::new(pattern) {
        Ok(re) if re.is_match(text) => {}
        Ok(_) => {
            errors.invalid(
                path,
                &value,
                &format!("{path} in body should match '{pattern}'"),
            );
        }
        Err(e) => {
            let detail =
                format!("{path} in body should match '{pattern}', but pattern is invalid: {e}");
            errors.invalid(path, &value, &detail);
        }
    }
}

fn check_number(schema: &Value, data: &Value, path: &str, errors: &mut FieldErrors) {
    let Some(x) = data.as_f64() else { return };
    if let Some(max) = bound(schema, "maximum")
        && x > max
    {
        let detail = format!("{path} in body should be less than or equal to {max}");
        errors.invalid(path, data, &detail);
    }
    if let Some(min) = bound(schema, "minimum")
        && x < min
    {
        let detail = format!("{path} in body should be greater than or equal to {min}");
        errors.invalid(path, data, &detail);
    }
}

fn check_array(schema: &Value, items: &[Value], path: &str, errors: &mut FieldErrors) {
    if let Some(item_schema) = schema.get("items") {
        for (index, item) in items.iter().enumerate() {
            node(item_schema, item, &format!("{path}[{index}]"), errors);
        }
    }
    let count = items.len() as f64;
    if let Some(min) = bound(schema, "minItems")
        && count < min
    {
        let detail = format!("{path} in body should have at least {min} items");
        errors.invalid(path, &Value::from(items.len()), &detail);
    }
    if let Some(max) = bound(schema, "maxItems")
        && count > max
    {
        errors.too_many(path, items.len() as u64, max as u64);
    }
}

fn check_object(
    schema: &Value,
    members: &Map<String, Value>,
    path: &str,
    errors: &mut FieldErrors,
) {
    if let Some(max) = bound(schema, "maxProperties")
        && members.len() as f64 > max
    {
        errors.too_many(path, members.len() as u64, max as u64);
        return;
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    let mut keys: Vec<&String> = members.keys().collect();
    keys.sort();
    for key in keys {
        let value = &members[key.as_str()];
        if value.is_null() {
            continue;
        }
        let declared = properties.and_then(|p| p.get(key.as_str()));
        if let Some(member_schema) = declared.or(additional) {
            node(member_schema, value, &child(path, key), errors);
        }
    }
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if members.get(name).is_none_or(Value::is_null) {
            errors.required(&child(path, name), "");
        }
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
