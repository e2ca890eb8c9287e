use super::*;
use serde_json::json;

fn errs(schema: Value, obj: Value) -> Vec<String> {
    validate(&schema, &obj)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// A root schema with one property `x` under `spec`.
fn spec_x(x: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"x": x}}}})
}

fn with_x(x: Value) -> Value {
    json!({"spec": {"x": x}})
}

#[test]
fn each_keyword_reports_kube_wording_at_its_boundary() {
    let cases: Vec<(&str, Value, Value, Vec<&str>)> = vec![
        (
            "integer accepts an integer",
            json!({"type": "integer"}),
            json!(3),
            vec![],
        ),
        (
            "integer accepts an integral float",
            json!({"type": "integer"}),
            json!(3.0),
            vec![],
        ),
        (
            "integer rejects a string",
            json!({"type": "integer"}),
            json!("string"),
            vec![
                "spec.x: Invalid value: \"string\": spec.x in body must be of type integer: \"string\"",
            ],
        ),
        (
            "number accepts an integer",
            json!({"type": "number"}),
            json!(3),
            vec![],
        ),
        (
            "boolean rejects a number",
            json!({"type": "boolean"}),
            json!(1.5),
            vec![
                "spec.x: Invalid value: \"number\": spec.x in body must be of type boolean: \"number\"",
            ],
        ),
        (
            "object rejects an array",
            json!({"type": "object"}),
            json!([]),
            vec![
                "spec.x: Invalid value: \"array\": spec.x in body must be of type object: \"array\"",
            ],
        ),
        (
            "non-nullable null is a type error",
            json!({"type": "string"}),
            Value::Null,
            vec![
                "spec.x: Invalid value: \"null\": spec.x in body must be of type string: \"null\"",
            ],
        ),
        (
            "nullable accepts null",
            json!({"type": "string", "nullable": true}),
            Value::Null,
            vec![],
        ),
        (
            "int-or-string rejects a bool",
            json!({"x-kubernetes-int-or-string": true}),
            json!(true),
            vec![
                "spec.x: Invalid value: \"boolean\": spec.x in body must be of type integer,string: \"boolean\"",
            ],
        ),
        (
            "int-or-string accepts a string",
            json!({"x-kubernetes-int-or-string": true}),
            json!("50%"),
            vec![],
        ),
        (
            "maximum accepts the bound",
            json!({"type": "integer", "maximum": 8192}),
            json!(8192),
            vec![],
        ),
        (
            "maximum rejects one past the bound",
            json!({"type": "integer", "maximum": 8192}),
            json!(8193),
            vec![
                "spec.x: Invalid value: 8193: spec.x in body should be less than or equal to 8192",
            ],
        ),
        (
            "exclusive maximum rejects the bound",
            json!({"type": "integer", "maximum": 10, "exclusiveMaximum": true}),
            json!(10),
            vec!["spec.x: Invalid value: 10: spec.x in body should be less than 10"],
        ),
        (
            "minimum rejects below the bound",
            json!({"type": "integer", "minimum": 1}),
            json!(0),
            vec!["spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1"],
        ),
        (
            "exclusive minimum rejects the bound",
            json!({"type": "number", "minimum": 0.5, "exclusiveMinimum": true}),
            json!(0.5),
            vec!["spec.x: Invalid value: 0.5: spec.x in body should be greater than 0.5"],
        ),
        (
            "multipleOf rejects a non-multiple",
            json!({"type": "integer", "multipleOf": 4}),
            json!(6),
            vec!["spec.x: Invalid value: 6: spec.x in body should be a multiple of 4"],
        ),
        (
            "maxLength counts characters",
            json!({"type": "string", "maxLength": 2}),
            json!("éé"),
            vec![],
        ),
        (
            "maxLength rejects a longer string",
            json!({"type": "string", "maxLength": 2}),
            json!("abc"),
            vec!["spec.x: Too long: may not be more than 2 bytes"],
        ),
        (
            "minLength rejects a shorter string",
            json!({"type": "string", "minLength": 2}),
            json!("a"),
            vec!["spec.x: Invalid value: \"a\": spec.x in body should be at least 2 chars long"],
        ),
        (
            "pattern rejects a mismatch",
            json!({"type": "string", "pattern": "^[a-z]+$"}),
            json!("AB"),
            vec!["spec.x: Invalid value: \"AB\": spec.x in body should match '^[a-z]+$'"],
        ),
        (
            "pattern digit class is ASCII as in Go",
            json!({"type": "string", "pattern": "^\\d+$"}),
            json!("١٢"),
            vec!["spec.x: Invalid value: \"١٢\": spec.x in body should match '^\\d+$'"],
        ),
        (
            "enum rejects a value outside the list",
            json!({"type": "string", "enum": ["rsa", "ecdsa"]}),
            json!("dsa"),
            vec!["spec.x: Unsupported value: \"dsa\": supported values: \"rsa\", \"ecdsa\""],
        ),
        (
            "enum matches numbers across int and float",
            json!({"enum": [1.0]}),
            json!(1),
            vec![],
        ),
        (
            "minItems rejects a short list",
            json!({"type": "array", "items": {"type": "string"}, "minItems": 2}),
            json!(["a"]),
            vec!["spec.x: Invalid value: 1: spec.x in body should have at least 2 items"],
        ),
        (
            "maxItems rejects a long list",
            json!({"type": "array", "items": {"type": "string"}, "maxItems": 1}),
            json!(["a", "b"]),
            vec!["spec.x: Too many: 2: must have at most 1 items"],
        ),
        (
            "items are validated with their index",
            json!({"type": "array", "items": {"type": "string"}}),
            json!(["a", 1]),
            vec![
                "spec.x[1]: Invalid value: \"integer\": spec.x[1] in body must be of type string: \"integer\"",
            ],
        ),
        (
            "minProperties rejects a small object",
            json!({"type": "object", "minProperties": 2}),
            json!({"a": 1}),
            vec!["spec.x: Invalid value: 1: spec.x in body should have at least 2 properties"],
        ),
        (
            "maxProperties rejects a large object",
            json!({"type": "object", "maxProperties": 1}),
            json!({"a": 1, "b": 2}),
            vec!["spec.x: Too many: 2: must have at most 1 items"],
        ),
        (
            "additionalProperties schema checks each value",
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"k": 1}),
            vec![
                "spec.x.k: Invalid value: \"integer\": spec.x.k in body must be of type string: \"integer\"",
            ],
        ),
        (
            "additionalProperties false forbids undeclared members",
            json!({"type": "object", "additionalProperties": false}),
            json!({"k": 1}),
            vec!["spec.x: Invalid value: \"k\": spec.x.k in body is a forbidden property"],
        ),
        (
            "date-time format rejects garbage",
            json!({"type": "string", "format": "date-time"}),
            json!("yesterday"),
            vec![
                "spec.x: Invalid value: \"yesterday\": spec.x in body must be of type date-time: \"yesterday\"",
            ],
        ),
        (
            "date-time format accepts RFC 3339",
            json!({"type": "string", "format": "date-time"}),
            json!("2024-01-02T03:04:05Z"),
            vec![],
        ),
        (
            "int32 format is stripped as kube does",
            json!({"type": "integer", "format": "int32"}),
            json!(1_i64 << 40),
            vec![],
        ),
        (
            "set list reports the second occurrence",
            json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}),
            json!(["a", "b", "a", "a"]),
            vec!["spec.x[2]: Duplicate value: \"a\""],
        ),
        (
            "map list reports a duplicate key",
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                   "items": {"type": "object", "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}}}),
            json!([{"name": "a", "v": 1}, {"name": "a", "v": 2}]),
            vec!["spec.x[1]: Duplicate value: map[string]interface {}{\"name\":\"a\"}"],
        ),
    ];
    for (name, x, value, want) in cases {
        assert_eq!(errs(spec_x(x), with_x(value)), want, "{name}");
    }
}

#[test]
fn required_fields_are_reported_with_their_full_path() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"secrets": {"type": "array", "items": {"type": "object", "required": ["name"],
            "properties": {"name": {"type": "string"}}}}}}}, "required": ["spec"]});
    assert_eq!(
        errs(schema.clone(), json!({})),
        vec!["spec: Required value"]
    );
    assert_eq!(
        errs(schema, json!({"spec": {"secrets": [{}]}})),
        vec!["spec.secrets[0].name: Required value"]
    );
}

#[test]
fn all_of_subschemas_apply_at_the_same_path() {
    let x = json!({"type": "integer", "allOf": [{"maximum": 3}]});
    assert_eq!(
        errs(spec_x(x), with_x(json!(4))),
        vec!["spec.x: Invalid value: 4: spec.x in body should be less than or equal to 3"]
    );
}

#[test]
fn a_cached_pattern_answers_as_a_fresh_compile_even_past_the_cache_bound() {
    let digits = r"^\d+$";
    for _ in 0..2 {
        let compiled = compiled_pattern(digits).expect("valid");
        assert!(compiled.is_match("123") && !compiled.is_match("12a"));
        let error = compiled_pattern("(?<=x)a").expect_err("Go has no lookbehind");
        assert!(error.contains("look-around"), "{error}");
    }
    // More distinct patterns than the cache keeps: it starts over and every answer holds.
    for i in 0..=PATTERN_CACHE {
        let pattern = format!("^a{{{i}}}$");
        let compiled = compiled_pattern(&pattern).expect("valid");
        assert!(compiled.is_match(&"a".repeat(i)), "{pattern}");
    }
    assert!(compiled_pattern(digits).expect("valid").is_match("7"));
}
