//! Whether an object on the server is what a scenario expects.
//!
//! An expected object is a part of the real one: every field it names must be there with
//! that value, and fields it leaves out may hold anything.
//!
//! - A mapping matches when each of its keys matches; a list when each of its items is
//!   in the real list, in any order (an item with a `type` or `name` is compared with the
//!   real item of the same `type` or `name`, so `status.conditions` reads naturally).
//! - `"*"` matches any value that is there; `null` matches a field that is not.
//! - A Secret's expected `stringData` is compared with its `data`, decoded.

use base64::Engine as _;
use serde_json::Value;

/// The value that matches any value present.
pub(crate) const ANY: &str = "*";

/// One field that is not as expected.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mismatch {
    /// Where, as `status.conditions[type=Ready].status`.
    pub(crate) path: String,
    pub(crate) expected: Value,
    /// What is there; `None` when the field is missing.
    pub(crate) found: Option<Value>,
}

/// Every way `actual` differs from `expected`; empty when it matches.
pub(crate) fn mismatches(expected: &Value, actual: &Value) -> Vec<Mismatch> {
    let expected = with_string_data_as_data(expected);
    let mut out = Vec::new();
    compare(&expected, Some(actual), "", &mut out);
    out
}

fn compare(expected: &Value, actual: Option<&Value>, path: &str, out: &mut Vec<Mismatch>) {
    let actual = actual.filter(|a| !a.is_null());
    let mismatch = |out: &mut Vec<Mismatch>| {
        out.push(Mismatch {
            path: path.to_owned(),
            expected: expected.clone(),
            found: actual.cloned(),
        });
    };
    match (expected, actual) {
        (Value::Null, None) => {}
        (Value::String(any), Some(_)) if any == ANY => {}
        (Value::Object(fields), Some(Value::Object(real))) => {
            for (key, value) in fields {
                compare(value, real.get(key), &join(path, key), out);
            }
        }
        (Value::Array(items), Some(Value::Array(real))) => {
            for (position, item) in items.iter().enumerate() {
                compare_item(item, position, real, path, out);
            }
        }
        (expected, Some(actual)) if expected == actual => {}
        _ => mismatch(out),
    }
}

/// One expected list item against the real list.
fn compare_item(
    item: &Value,
    position: usize,
    real: &[Value],
    path: &str,
    out: &mut Vec<Mismatch>,
) {
    if let Some((key, id)) = identity(item) {
        let path = format!("{path}[{key}={id}]");
        let found = real
            .iter()
            .find(|r| r.get(key).and_then(Value::as_str) == Some(id));
        compare(item, found, &path, out);
        return;
    }
    let mut nearest: Option<Vec<Mismatch>> = None;
    for candidate in real {
        let mut differences = Vec::new();
        compare(
            item,
            Some(candidate),
            &format!("{path}[{position}]"),
            &mut differences,
        );
        if differences.is_empty() {
            return;
        }
        if nearest.as_ref().is_none_or(|n| differences.len() < n.len()) {
            nearest = Some(differences);
        }
    }
    match nearest {
        // A mapping reports its nearest item's differences; a scalar is simply not there.
        Some(differences) if item.is_object() => out.extend(differences),
        _ => out.push(Mismatch {
            path: format!("{path}[{position}]"),
            expected: item.clone(),
            found: None,
        }),
    }
}

/// The key an item is known by in its list: its `type`, else its `name`.
fn identity(item: &Value) -> Option<(&'static str, &str)> {
    ["type", "name"]
        .into_iter()
        .find_map(|key| item.get(key).and_then(Value::as_str).map(|id| (key, id)))
}

/// `path.key`, or `path["key"]` for a key that is not a plain word.
fn join(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{}]", Value::String(key.to_owned())),
    }
}

/// A v1 Secret's `stringData` moved into `data`, base64-encoded (as the API server stores
/// it); anything else as it is.
fn with_string_data_as_data(expected: &Value) -> Value {
    let is_secret = expected["apiVersion"] == "v1" && expected["kind"] == "Secret";
    let Some(string_data) = expected.get("stringData").and_then(Value::as_object) else {
        return expected.clone();
    };
    if !is_secret {
        return expected.clone();
    }
    let mut object = expected.clone();
    let mut data = object
        .get("data")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (key, value) in string_data {
        let encoded = match value.as_str() {
            Some(ANY) | None => value.clone(),
            Some(text) => Value::String(base64::engine::general_purpose::STANDARD.encode(text)),
        };
        data.insert(key.clone(), encoded);
    }
    if let Some(fields) = object.as_object_mut() {
        fields.remove("stringData");
        fields.insert("data".into(), Value::Object(data));
    }
    object
}

/// `value` as one line of JSON, for a report.
pub(crate) fn show(value: &Value) -> String {
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(expected: Value, actual: Value) -> Vec<String> {
        mismatches(&expected, &actual)
            .into_iter()
            .map(|m| m.path)
            .collect()
    }

    #[test]
    fn an_expected_object_matches_as_a_part_of_the_real_one() {
        let actual = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "x", "tier": "web"}},
            "data": {"colour": "blue", "size": "2"},
            "status": {"conditions": [
                {"type": "Synced", "status": "False"},
                {"type": "Ready", "status": "True", "reason": "Done"},
            ]},
            "finalizers": ["a", "b"],
            "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}],
        });
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (json!({"data": {"colour": "blue"}}), vec![]),
            (json!({"data": {"colour": "red"}}), vec!["data.colour"]),
            (json!({"data": {"shape": "round"}}), vec!["data.shape"]),
            (json!({"data": {"colour": "*"}}), vec![]),
            (json!({"data": {"shape": "*"}}), vec!["data.shape"]),
            (json!({"data": {"shape": null}}), vec![]),
            (json!({"data": {"colour": null}}), vec!["data.colour"]),
            (
                json!({"metadata": {"labels": {"app.kubernetes.io/name": "y"}}}),
                vec!["metadata.labels[\"app.kubernetes.io/name\"]"],
            ),
            (
                json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
                vec![],
            ),
            (
                json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
                vec!["status.conditions[type=Ready].status"],
            ),
            (
                json!({"status": {"conditions": [{"type": "Gone"}]}}),
                vec!["status.conditions[type=Gone]"],
            ),
            (json!({"finalizers": ["b"]}), vec![]),
            (json!({"finalizers": ["c"]}), vec!["finalizers[0]"]),
            (json!({"ports": [{"port": 443}]}), vec![]),
            (json!({"ports": [{"port": 8080}]}), vec!["ports[0].port"]),
            (json!({"data": "x"}), vec!["data"]),
            (json!({"data": {"size": 2}}), vec!["data.size"]),
        ];
        for (expected, wanted) in cases {
            assert_eq!(
                paths(expected.clone(), actual.clone()),
                wanted,
                "{expected}"
            );
        }
    }

    #[test]
    fn a_secrets_expected_string_data_is_compared_with_its_data_decoded() {
        let secret = json!({
            "apiVersion": "v1", "kind": "Secret",
            "data": {"user": "YWRtaW4=", "password": "c2VjcmV0"},
        });
        let cases = [
            (json!({"user": "admin"}), 0),
            (json!({"user": "root"}), 1),
            (json!({"password": "*", "user": "admin"}), 0),
            (json!({"token": "*"}), 1),
        ];
        for (string_data, count) in cases {
            let expected = json!({"apiVersion": "v1", "kind": "Secret", "stringData": string_data});
            let found = mismatches(&expected, &secret);
            assert_eq!(found.len(), count, "{string_data}: {found:?}");
            if let Some(m) = found.first() {
                assert!(m.path.starts_with("data."), "{m:?}");
            }
        }
    }

    #[test]
    fn a_mismatch_says_what_was_expected_and_what_is_there() {
        let found = mismatches(&json!({"data": {"a": "x"}}), &json!({"data": {"a": "y"}}));
        assert_eq!(
            found,
            [Mismatch {
                path: "data.a".into(),
                expected: json!("x"),
                found: Some(json!("y")),
            }]
        );
    }
}
