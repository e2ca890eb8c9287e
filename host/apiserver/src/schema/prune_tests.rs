use super::*;
use serde_json::json;

fn run(schema: Value, mut obj: Value) -> (Value, Vec<String>) {
    let pruned = prune(&schema, &mut obj);
    (obj, pruned)
}

#[test]
fn root_keeps_type_meta_and_metadata_but_drops_undeclared_status() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object"}}});
    let (obj, pruned) = run(
        schema,
        json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "x": 1},
               "spec": {}, "status": {"ok": true}}),
    );
    assert_eq!(
        obj,
        json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "x": 1}, "spec": {}})
    );
    assert_eq!(pruned, vec!["status"]);
}

#[test]
fn nested_unknown_fields_are_removed_and_named_with_indices() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}}}}});
    let (obj, pruned) = run(
        schema,
        json!({"spec": {"list": [{"a": "x", "b": 1}, {"c": 2}], "z": 0}}),
    );
    assert_eq!(obj, json!({"spec": {"list": [{"a": "x"}, {}]}}));
    assert_eq!(pruned, vec!["spec.list[0].b", "spec.list[1].c", "spec.z"]);
}

#[test]
fn preserve_unknown_fields_keeps_unknown_members_but_prunes_declared_ones() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}}}});
    let (obj, pruned) = run(
        schema,
        json!({"spec": {"free": {"deep": 1}, "known": {"a": "x", "b": 2}}}),
    );
    assert_eq!(
        obj,
        json!({"spec": {"free": {"deep": 1}, "known": {"a": "x"}}})
    );
    assert_eq!(pruned, vec!["spec.known.b"]);
}

#[test]
fn additional_properties_schema_prunes_inside_each_value() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}}}});
    let (obj, pruned) = run(
        schema,
        json!({"spec": {"k1": {"v": "a", "w": 1}, "k2": {}}}),
    );
    assert_eq!(obj, json!({"spec": {"k1": {"v": "a"}, "k2": {}}}));
    assert_eq!(pruned, vec!["spec.k1.w"]);
}

#[test]
fn embedded_resource_keeps_its_type_meta_and_metadata() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "properties": {"spec": {"type": "object"}}}}}}});
    let (obj, pruned) = run(
        schema,
        json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"a": 1}, "spec": {}, "junk": 1}}}),
    );
    assert_eq!(
        obj["spec"]["template"],
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"a": 1}, "spec": {}})
    );
    assert_eq!(pruned, vec!["spec.template.junk"]);
}

#[test]
fn strict_error_joins_unknown_fields_with_commas() {
    let unknown = vec![
        "spec.certificates[0].authority.expiry".to_string(),
        "spec.policy".to_string(),
    ];
    assert_eq!(
        strict_error(&unknown),
        "strict decoding error: unknown field \"spec.certificates[0].authority.expiry\", unknown field \"spec.policy\""
    );
}

#[test]
fn warnings_are_warning_header_values_with_escaped_quotes() {
    assert_eq!(
        warnings(&["spec.policy".to_string()]),
        vec!["299 - \"unknown field \\\"spec.policy\\\"\""]
    );
}
