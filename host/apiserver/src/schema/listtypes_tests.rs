use super::*;
use serde_json::json;

fn schema() -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["port", "protocol"],
                  "items": {"type": "object", "x-kubernetes-map-type": "atomic",
                            "properties": {"port": {"type": "integer"}}}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "args": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}})
}

#[test]
fn list_types_are_read_from_the_extensions() {
    let s = schema();
    let f = PathElement::Field;
    assert_eq!(
        list_type_at(&s, &[f("spec"), f("ports")]),
        Some(ListType::Map(vec!["port".into(), "protocol".into()]))
    );
    assert_eq!(
        list_type_at(&s, &[f("spec"), f("tags")]),
        Some(ListType::Set)
    );
    assert_eq!(
        list_type_at(&s, &[f("spec"), f("args")]),
        Some(ListType::Atomic)
    );
    assert_eq!(list_type_at(&s, &[f("spec"), f("nope")]), None);
}

#[test]
fn map_types_default_to_granular_and_follow_indices_and_map_keys() {
    let s = schema();
    let f = PathElement::Field;
    assert!(map_is_atomic(
        &s,
        &[f("spec"), f("ports"), PathElement::Index(3)]
    ));
    assert!(!map_is_atomic(&s, &[f("spec")]));
    assert_eq!(
        map_type_at(&s, &[f("spec"), f("labels")]),
        Some(MapType::Granular)
    );
    assert!(schema_at(&s, &[f("spec"), f("labels"), f("any-key")]).is_some());
}

#[test]
fn map_list_with_missing_keys_collides_on_the_present_ones() {
    let mut out = Vec::new();
    let s = json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"],
                   "items": {"type": "object"}});
    validate_lists(&s, &json!([{"a": 1}, {"a": 1}]), "spec.l", &mut out);
    let msgs: Vec<String> = out.iter().map(ToString::to_string).collect();
    assert_eq!(
        msgs,
        vec!["spec.l[1]: Duplicate value: map[string]interface {}{\"a\":1}"]
    );
}
