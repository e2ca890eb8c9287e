use super::*;
use serde_json::json;

fn defaulted(schema: Value, mut obj: Value) -> Value {
    apply_defaults(&schema, &mut obj);
    obj
}

fn spec(props: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": props}}})
}

#[test]
fn absent_field_gets_its_default() {
    let s = spec(json!({"size": {"type": "integer", "default": 2048}}));
    assert_eq!(
        defaulted(s, json!({"spec": {}})),
        json!({"spec": {"size": 2048}})
    );
}

#[test]
fn present_field_keeps_its_value() {
    let s = spec(json!({"size": {"type": "integer", "default": 2048}}));
    assert_eq!(
        defaulted(s, json!({"spec": {"size": 1}})),
        json!({"spec": {"size": 1}})
    );
}

#[test]
fn defaults_inside_a_defaulted_object_apply_too() {
    let s = spec(json!({"authority": {"type": "object", "default": {},
        "properties": {"algorithm": {"type": "string", "default": "rsa"}}}}));
    assert_eq!(
        defaulted(s, json!({"spec": {}})),
        json!({"spec": {"authority": {"algorithm": "rsa"}}})
    );
}

#[test]
fn array_items_and_map_values_are_defaulted() {
    let s = spec(json!({
        "list": {"type": "array", "items": {"type": "object",
                 "properties": {"p": {"type": "integer", "default": 80}}}},
        "map": {"type": "object", "additionalProperties": {"type": "object",
                 "properties": {"q": {"type": "string", "default": "x"}}}}}));
    assert_eq!(
        defaulted(
            s,
            json!({"spec": {"list": [{}, {"p": 1}], "map": {"k": {}}}})
        ),
        json!({"spec": {"list": [{"p": 80}, {"p": 1}], "map": {"k": {"q": "x"}}}})
    );
}

#[test]
fn non_nullable_null_with_a_default_is_defaulted() {
    let s = spec(json!({"size": {"type": "integer", "default": 7}}));
    assert_eq!(
        defaulted(s, json!({"spec": {"size": null}})),
        json!({"spec": {"size": 7}})
    );
}

#[test]
fn non_nullable_null_without_a_default_is_dropped() {
    let s = spec(json!({"name": {"type": "string"}}));
    assert_eq!(
        defaulted(s, json!({"spec": {"name": null}})),
        json!({"spec": {}})
    );
}

#[test]
fn nullable_null_is_kept_and_not_defaulted() {
    let s = spec(json!({"size": {"type": "integer", "nullable": true, "default": 7}}));
    assert_eq!(
        defaulted(s, json!({"spec": {"size": null}})),
        json!({"spec": {"size": null}})
    );
}

#[test]
fn null_array_item_gets_the_items_default() {
    let s = spec(json!({"l": {"type": "array", "items": {"type": "string", "default": "d"}}}));
    assert_eq!(
        defaulted(s, json!({"spec": {"l": [null, "a"]}})),
        json!({"spec": {"l": ["d", "a"]}})
    );
}
