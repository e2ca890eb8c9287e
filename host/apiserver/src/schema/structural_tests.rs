use super::*;
use serde_json::json;

const BASE: &str = "spec.versions[0].schema.openAPIV3Schema";

fn msgs(schema: Value) -> Vec<String> {
    check_structural(&schema, BASE)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn well_formed_schema_has_no_errors() {
    let s = json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {"type": "object", "properties": {
            "port": {"x-kubernetes-int-or-string": true},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}}}});
    assert_eq!(msgs(s), Vec::<String>::new());
}

#[test]
fn each_structural_rule_reports_kube_wording() {
    let cases: Vec<(&str, Value, Vec<String>)> = vec![
        (
            "a field without type",
            json!({"type": "object", "properties": {"spec": {"properties": {}}}}),
            vec![format!(
                "{BASE}.properties[spec].type: Required value: must not be empty for specified object fields"
            )],
        ),
        (
            "array items without type",
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {}}}}),
            vec![format!(
                "{BASE}.properties[l].items.type: Required value: must not be empty for specified array items"
            )],
        ),
        (
            "an array without items",
            json!({"type": "object", "properties": {"l": {"type": "array"}}}),
            vec![format!(
                "{BASE}.properties[l].items: Required value: must be specified"
            )],
        ),
        (
            "a root that is not an object",
            json!({"type": "string"}),
            vec![format!(
                "{BASE}.type: Invalid value: \"string\": must be object at the root"
            )],
        ),
        (
            "a root without type",
            json!({"properties": {}}),
            vec![format!(
                "{BASE}.type: Required value: must not be empty at the root"
            )],
        ),
        (
            "additionalProperties beside properties",
            json!({"type": "object", "properties": {"m": {"type": "object",
                "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}}}),
            vec![format!(
                "{BASE}.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
            )],
        ),
        (
            "metadata restricting more than name",
            json!({"type": "object", "properties": {"metadata": {"type": "object",
                "properties": {"labels": {"type": "object"}}}}}),
            vec![format!(
                "{BASE}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
            )],
        ),
        (
            "uniqueItems true",
            json!({"type": "object", "properties": {"l": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}}),
            vec![format!(
                "{BASE}.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
            )],
        ),
        (
            "a list-map key neither required nor defaulted",
            json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}),
            vec![format!(
                "{BASE}.properties[l].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
            )],
        ),
        (
            "a type inside anyOf",
            json!({"type": "object", "properties": {"x": {"type": "string", "anyOf": [{"type": "string"}]}}}),
            vec![format!(
                "{BASE}.properties[x].anyOf[0].type: Forbidden: must be empty to be structural"
            )],
        ),
        (
            "an unsupported type name",
            json!({"type": "object", "properties": {"x": {"type": "float"}}}),
            vec![format!(
                "{BASE}.properties[x].type: Unsupported value: \"float\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""
            )],
        ),
        (
            "preserve-unknown-fields false",
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false}),
            vec![format!(
                "{BASE}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"
            )],
        ),
    ];
    for (name, schema, want) in cases {
        assert_eq!(msgs(schema), want, "{name}");
    }
}

#[test]
fn int_or_string_any_of_pattern_is_tolerated() {
    let s = json!({"type": "object", "properties": {"p": {"x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string"}]}}});
    assert_eq!(msgs(s), Vec::<String>::new());
}

#[test]
fn structural_errors_are_sorted_by_message() {
    let s = json!({"type": "object", "properties": {"b": {}, "a": {}}});
    assert_eq!(
        msgs(s),
        vec![
            format!(
                "{BASE}.properties[a].type: Required value: must not be empty for specified object fields"
            ),
            format!(
                "{BASE}.properties[b].type: Required value: must not be empty for specified object fields"
            ),
        ]
    );
}
