//! Validation of a custom resource against its version's structural schema,
//! reproducing kube-openapi's `SchemaValidator` as kube-apiserver converts
//! its results to field errors (`kubeOpenAPIResultToFieldErrors`), followed
//! by the `x-kubernetes-list-type` uniqueness pass.

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::errors::FieldError;
use super::listtypes;
use super::node::{self, Additional};

/// Validates `object` against `schema` (a version's `openAPIV3Schema`).
///
/// Call it on the pruned and defaulted object, as kube does. Returns every
/// error found, schema errors first (in a deterministic order: members of an
/// object by key, then its missing required fields), then list-type
/// duplicates. An empty vector means valid.
pub(crate) fn validate(schema: &Value, object: &Value) -> Vec<FieldError> {
    let mut out = Vec::new();
    validate_node(schema, object, "", &mut out);
    listtypes::validate_lists(schema, object, "", &mut out);
    out
}

/// The types a node accepts: `x-kubernetes-int-or-string` means
/// `integer,string`; otherwise `type` when set.
fn accepted_types(s: &Value) -> Vec<&str> {
    if node::flag(s, "x-kubernetes-int-or-string") {
        return vec!["integer", "string"];
    }
    match node::type_of(s) {
        "" => Vec::new(),
        t => vec![t],
    }
}

/// The format kube keeps for validation (unsupported ones are stripped, so
/// `int32`, `int64`, `float`, `double` never fail).
fn kept_format(s: &Value) -> Option<&str> {
    let f = s.get("format").and_then(Value::as_str)?;
    match f.replace('-', "").as_str() {
        "datetime" | "date" | "byte" | "uuid" | "ipv4" | "ipv6" => Some(f),
        _ => None,
    }
}

fn validate_node(s: &Value, data: &Value, path: &str, out: &mut Vec<FieldError>) {
    let types = accepted_types(s);
    if data.is_null() {
        if !types.is_empty() && !node::flag(s, "nullable") {
            out.push(type_error(path, &types, "null"));
        }
        check_enum(s, data, path, out);
        return;
    }
    check_type(s, &types, data, path, out);
    if let Some(all_of) = s.get("allOf").and_then(Value::as_array) {
        for sub in all_of {
            validate_node(sub, data, path, out);
        }
    }
    match data {
        Value::String(text) => {
            check_string(s, text, path, out);
            check_format(s, text, path, out);
        }
        Value::Number(n) => check_number(s, n, path, out),
        Value::Array(a) => check_array(s, a, path, out),
        _ => {}
    }
    check_enum(s, data, path, out);
    if let Value::Object(m) = data {
        check_object(s, m, path, out);
    }
}

fn type_error(path: &str, types: &[&str], actual: &str) -> FieldError {
    let msg = format!(
        "{path} in body must be of type {}: {}",
        types.join(","),
        super::errors::go_quote(actual)
    );
    FieldError::type_invalid(path, Value::from(actual), &msg)
}

fn check_type(s: &Value, types: &[&str], data: &Value, path: &str, out: &mut Vec<FieldError>) {
    if types.is_empty() {
        return;
    }
    let numeric = types.contains(&"number") || types.contains(&"integer");
    if kept_format(s).is_some() && !numeric && (data.is_string() || data.is_array()) {
        return;
    }
    let kind = node::json_kind(data);
    let float_int = kind == "number"
        && types.contains(&"integer")
        && data.as_f64().is_some_and(|f| f.fract() == 0.0);
    let int_number = kind == "integer" && types.contains(&"number");
    if !(types.contains(&kind) || float_int || int_number) {
        out.push(type_error(path, types, kind));
    }
}

fn int_of(s: &Value, key: &str) -> Option<i64> {
    let v = s.get(key)?;
    v.as_i64().or_else(|| v.as_f64().map(|f| f as i64))
}

fn check_string(s: &Value, text: &str, path: &str, out: &mut Vec<FieldError>) {
    let len = text.chars().count() as i64;
    let value = || Value::from(text);
    if let Some(max) = int_of(s, "maxLength")
        && len > max
    {
        out.push(FieldError::too_long(path, max));
        return;
    }
    if let Some(min) = int_of(s, "minLength")
        && len < min
    {
        let msg = format!("{path} in body should be at least {min} chars long");
        out.push(FieldError::invalid(path, value(), &msg));
        return;
    }
    if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
        match compiled_pattern(pattern) {
            Ok(re) if re.is_match(text) => {}
            Ok(_) => {
                let msg = format!("{path} in body should match '{pattern}'");
                out.push(FieldError::invalid(path, value(), &msg));
            }
            Err(e) => {
                let msg =
                    format!("{path} in body should match '{pattern}, but pattern is invalid: {e}'");
                out.push(FieldError::invalid(path, value(), &msg));
            }
        }
    }
}

/// How many compiled schema patterns are kept; past it the cache starts over (patterns come
/// from CRDs, which anyone who may create one can multiply).
const PATTERN_CACHE: usize = 1024;

/// A schema pattern, compiled once and kept (the validation of every object of a kind
/// matches the same patterns); the compile error's text when it is invalid.
/// Shared, not cloned: a cloned `Regex` starts with an empty matching cache, which its first
/// match then builds again.
pub(crate) fn compiled_pattern(pattern: &str) -> Result<std::sync::Arc<Regex>, String> {
    type Compiled = Result<std::sync::Arc<Regex>, String>;
    static CACHE: std::sync::LazyLock<
        std::sync::Mutex<std::collections::HashMap<String, Compiled>>,
    > = std::sync::LazyLock::new(Default::default);
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(compiled) = cache.get(pattern) {
        return compiled.clone();
    }
    if cache.len() >= PATTERN_CACHE {
        cache.clear();
    }
    let compiled = compile_go_regex(pattern)
        .map(std::sync::Arc::new)
        .map_err(|e| e.to_string());
    cache.insert(pattern.to_owned(), compiled.clone());
    compiled
}

/// Compiles a Go RE2 pattern with Rust's `regex`, first rewriting the Perl
/// classes (`\d \w \s \b` and negations) to their ASCII meaning in Go.
/// Constructs Go rejects (lookaround, backreferences) fail here too;
/// `\Q…\E` is not supported.
pub(crate) fn compile_go_regex(pattern: &str) -> Result<Regex, regex::Error> {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str("[0-9]"),
            Some('D') => out.push_str("[^0-9]"),
            Some('w') => out.push_str("[0-9A-Za-z_]"),
            Some('W') => out.push_str("[^0-9A-Za-z_]"),
            Some('s') => out.push_str("[\\t\\n\\f\\r ]"),
            Some('S') => out.push_str("[^\\t\\n\\f\\r ]"),
            Some('b') => out.push_str("(?-u:\\b)"),
            Some('B') => out.push_str("(?-u:\\B)"),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Regex::new(&out)
}

fn check_format(s: &Value, text: &str, path: &str, out: &mut Vec<FieldError>) {
    let Some(format) = kept_format(s) else {
        return;
    };
    if !super::formats::is_valid(format, text) {
        let msg = format!(
            "{path} in body must be of type {format}: {}",
            super::errors::go_quote(text)
        );
        out.push(FieldError::type_invalid(path, Value::from(text), &msg));
    }
}

/// Prints a bound the way kube-openapi does: as an int64 when the value is
/// an integer (the bound is truncated), else as a Go float.
fn bound(n_is_int: bool, b: f64) -> String {
    if n_is_int {
        (b as i64).to_string()
    } else {
        super::errors::go_float(b)
    }
}

fn check_number(s: &Value, n: &Number, path: &str, out: &mut Vec<FieldError>) {
    let is_int = n.is_i64() || n.is_u64();
    let x = n.as_f64().unwrap_or(f64::NAN);
    let value = Value::Number(n.clone());
    let push = |out: &mut Vec<FieldError>, msg: String| {
        out.push(FieldError::invalid(path, value.clone(), &msg));
    };
    if let Some(factor) = s.get("multipleOf").and_then(Value::as_f64)
        && factor > 0.0
    {
        let ok = if is_int && factor.fract() == 0.0 {
            n.as_i64().is_none_or(|i| i % (factor as i64) == 0)
        } else {
            let m = if factor < 1.0 {
                1.0 / factor * x
            } else {
                x / factor
            };
            is_json_integer(m)
        };
        if !ok {
            push(
                out,
                format!(
                    "{path} in body should be a multiple of {}",
                    bound(is_int, factor)
                ),
            );
        }
    }
    if let Some(max) = s.get("maximum").and_then(Value::as_f64) {
        let exclusive = node::flag(s, "exclusiveMaximum");
        let cmp_max = if is_int { (max as i64) as f64 } else { max };
        if (!exclusive && x > cmp_max) || (exclusive && x >= cmp_max) {
            let rel = if exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            push(
                out,
                format!("{path} in body should be {rel} {}", bound(is_int, max)),
            );
        }
    }
    if let Some(min) = s.get("minimum").and_then(Value::as_f64) {
        let exclusive = node::flag(s, "exclusiveMinimum");
        let cmp_min = if is_int { (min as i64) as f64 } else { min };
        if (!exclusive && x < cmp_min) || (exclusive && x <= cmp_min) {
            let rel = if exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            push(
                out,
                format!("{path} in body should be {rel} {}", bound(is_int, min)),
            );
        }
    }
}

/// swag's `IsFloat64AJSONInteger`: integral, or within a relative 1e-9.
fn is_json_integer(f: f64) -> bool {
    if !f.is_finite() {
        return false;
    }
    let g = f.round();
    f == g || (f - g).abs() / (f.abs() + g.abs()) < 1e-9
}

fn check_array(s: &Value, a: &[Value], path: &str, out: &mut Vec<FieldError>) {
    if let Some(items) = node::items(s) {
        for (i, item) in a.iter().enumerate() {
            validate_node(items, item, &node::index(path, i), out);
        }
    }
    let size = a.len() as i64;
    if let Some(min) = int_of(s, "minItems")
        && size < min
    {
        let msg = format!("{path} in body should have at least {min} items");
        out.push(FieldError::invalid(path, Value::from(size), &msg));
    }
    if let Some(max) = int_of(s, "maxItems")
        && size > max
    {
        out.push(FieldError::too_many(path, Some(size), max));
    }
}

/// Numbers compare by value across int/float (Go converts before DeepEqual).
fn enum_matches(candidate: &Value, data: &Value) -> bool {
    match (candidate, data) {
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => a.as_f64() == b.as_f64(),
        },
        _ => candidate == data,
    }
}

fn check_enum(s: &Value, data: &Value, path: &str, out: &mut Vec<FieldError>) {
    let Some(values) = s.get("enum").and_then(Value::as_array) else {
        return;
    };
    if values.is_empty()
        || values
            .iter()
            .any(|v| !data.is_null() && enum_matches(v, data))
    {
        return;
    }
    let supported: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    out.push(FieldError::not_supported(path, data.clone(), &supported));
}

fn check_object(s: &Value, m: &Map<String, Value>, path: &str, out: &mut Vec<FieldError>) {
    let count = m.len() as i64;
    if let Some(min) = int_of(s, "minProperties")
        && count < min
    {
        let msg = format!("{path} in body should have at least {min} properties");
        out.push(FieldError::invalid(path, Value::from(count), &msg));
        return;
    }
    if let Some(max) = int_of(s, "maxProperties")
        && count > max
    {
        out.push(FieldError::too_many(path, Some(count), max));
        return;
    }
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let declared = |k: &str| node::property(s, k).is_some();
    match node::additional(s) {
        Additional::Allows(false) => {
            for k in keys.iter().filter(|k| !declared(k)) {
                let msg = format!("{path}.{k} in body is a forbidden property");
                out.push(FieldError::invalid(path, Value::from(k.as_str()), &msg));
            }
        }
        Additional::Schema(ap) => {
            for k in keys.iter().filter(|k| !declared(k)) {
                validate_node(ap, &m[k.as_str()], &node::child(path, k), out);
            }
        }
        Additional::Allows(true) | Additional::Absent => {}
    }
    for k in &keys {
        if let Some(prop) = node::property(s, k) {
            validate_node(prop, &m[k.as_str()], &node::child(path, k), out);
        }
    }
    if let Some(required) = s.get("required").and_then(Value::as_array) {
        for k in required.iter().filter_map(Value::as_str) {
            if !m.contains_key(k) {
                out.push(FieldError::required(&node::child(path, k), ""));
            }
        }
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
