use serde_json::json;

use super::*;

#[test]
fn a_node_without_a_type_or_with_any_of_is_not_structural() {
    let schema = json!({"type": "object", "properties": {
        "a": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "b": {"description": "no type"},
        "c": {"type": "string"},
    }});
    assert_eq!(
        structural_errors(&schema),
        vec![".a: anyOf", ".a: no type", ".b: no type"]
    );
}

#[test]
fn an_int_or_string_node_needs_no_type_and_may_spell_its_two_types_in_any_of() {
    let int_or_string = json!({"anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": true});
    let schema = json!({"type": "object", "properties": {
        "port": int_or_string,
        "bare": {"x-kubernetes-int-or-string": true},
        "limits": {"type": "object", "additionalProperties": int_or_string},
        "wider": {"anyOf": [{"type": "integer"}, {"type": "boolean"}],
            "x-kubernetes-int-or-string": true},
    }});
    assert_eq!(structural_errors(&schema), vec![".wider: anyOf"]);
}
