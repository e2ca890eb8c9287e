use serde_json::{Value, json};

use super::*;

fn schema() -> Value {
    json!({"type": "object", "required": ["spec"], "properties": {
        "spec": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 8, "pattern": "^[a-z]+$"},
            "mode": {"type": "string", "enum": ["on", "off"]},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 5},
            "ratio": {"type": "number"},
            "port": {"anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": true},
            "limits": {"type": "object", "maxProperties": 2, "additionalProperties": {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "pattern": "^[0-9]+(Mi|Gi)?$", "x-kubernetes-int-or-string": true}},
            "hosts": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}},
            "rules": {"type": "array", "items": {"type": "object", "required": ["key"],
                "properties": {"key": {"type": "string"}, "on": {"type": "boolean"}}}},
        }},
    }})
}

/// A valid object: every field set, plus an unknown one and a null one (both pruned).
fn valid() -> Value {
    json!({"spec": {"name": "ks", "mode": "on", "replicas": 3, "ratio": 2, "port": "http",
        "limits": {"cpu": 500, "memory": "512Mi"}, "hosts": ["a"],
        "rules": [{"key": "k", "on": true}], "unknown": {"x": 1}, "mode2": null}})
}

fn with(pointer: &str, value: Value) -> Value {
    let mut object = valid();
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
    object
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .expect("the parent")
        .insert(key.to_owned(), value);
    object
}

fn without(pointer: &str) -> Value {
    let mut object = valid();
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
    object
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .expect("the parent")
        .remove(key);
    object
}

#[test]
fn an_object_is_refused_for_each_schema_keyword_it_breaks_in_kube_apiservers_words() {
    let table: Vec<(&str, Value, Option<&str>)> = vec![
        ("valid", valid(), None),
        (
            "string for integer",
            with("/spec/replicas", json!("3")),
            Some(
                "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"",
            ),
        ),
        (
            "fraction for integer",
            with("/spec/replicas", json!(2.5)),
            Some(
                "spec.replicas: Invalid value: \"number\": spec.replicas in body must be of type integer: \"number\"",
            ),
        ),
        (
            "object for int-or-string",
            with("/spec/port", json!({"number": 80})),
            Some(
                "spec.port: Invalid value: \"object\": spec.port in body must be of type integer,string: \"object\"",
            ),
        ),
        (
            "boolean in a map of int-or-string",
            with("/spec/limits", json!({"cpu": true})),
            Some(
                "spec.limits.cpu: Invalid value: \"boolean\": spec.limits.cpu in body must be of type integer,string: \"boolean\"",
            ),
        ),
        (
            "string off the pattern in a map",
            with("/spec/limits", json!({"cpu": "lots"})),
            Some(
                "spec.limits.cpu: Invalid value: \"lots\": spec.limits.cpu in body should match '^[0-9]+(Mi|Gi)?$'",
            ),
        ),
        (
            "too many map entries",
            with("/spec/limits", json!({"a": 1, "b": 2, "c": 3})),
            Some("spec.limits: Too many: 3: must have at most 2 items"),
        ),
        (
            "value off the enum",
            with("/spec/mode", json!("auto")),
            Some("spec.mode: Unsupported value: \"auto\": supported values: \"on\", \"off\""),
        ),
        (
            "over the maximum",
            with("/spec/replicas", json!(6)),
            Some(
                "spec.replicas: Invalid value: 6: spec.replicas in body should be less than or equal to 5",
            ),
        ),
        (
            "under the minimum",
            with("/spec/replicas", json!(0)),
            Some(
                "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
            ),
        ),
        (
            "too long",
            with("/spec/name", json!("abcdefghi")),
            Some("spec.name: Too long: may not be more than 8 bytes"),
        ),
        (
            "too short",
            with("/spec/name", json!("")),
            Some(
                "spec.name: Invalid value: \"\": spec.name in body should be at least 1 chars long",
            ),
        ),
        (
            "too many items",
            with("/spec/hosts", json!(["a", "b", "c"])),
            Some("spec.hosts: Too many: 3: must have at most 2 items"),
        ),
        (
            "too few items",
            with("/spec/hosts", json!([])),
            Some("spec.hosts: Invalid value: 0: spec.hosts in body should have at least 1 items"),
        ),
        (
            "an item of the wrong type",
            with("/spec/rules", json!([{"key": "k", "on": "yes"}])),
            Some(
                "spec.rules[0].on: Invalid value: \"string\": spec.rules[0].on in body must be of type boolean: \"string\"",
            ),
        ),
        (
            "a required field of an item missing",
            with("/spec/rules", json!([{"on": true}])),
            Some("spec.rules[0].key: Required value"),
        ),
        (
            "a required field missing",
            without("/spec/name"),
            Some("spec.name: Required value"),
        ),
        (
            "a required field null",
            with("/spec/name", Value::Null),
            Some("spec.name: Required value"),
        ),
        (
            "array for object",
            with("/spec", json!([])),
            Some("spec: Invalid value: \"array\": spec in body must be of type object: \"array\""),
        ),
    ];
    for (case, object, expected) in table {
        let errors: Vec<String> = validate(&schema(), &object)
            .errors()
            .iter()
            .map(ToString::to_string)
            .collect();
        let expected: Vec<String> = expected.into_iter().map(str::to_owned).collect();
        assert_eq!(errors, expected, "{case}");
    }
}
