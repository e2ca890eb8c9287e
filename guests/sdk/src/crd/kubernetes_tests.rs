use k8s_openapi::api::core::v1::{ResourceRequirements, TopologySpreadConstraint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use crate::crd::{schema_of, structural_errors};

#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
struct Embedding {
    /// The selector.
    #[schemars(schema_with = "crate::crd::kubernetes::<LabelSelector>")]
    selector: LabelSelector,
    #[schemars(schema_with = "crate::crd::kubernetes::<ResourceRequirements>")]
    resources: Option<ResourceRequirements>,
    #[schemars(schema_with = "crate::crd::kubernetes::<Vec<TopologySpreadConstraint>>")]
    spread: Vec<TopologySpreadConstraint>,
}

fn schema() -> Value {
    schema_of::<Embedding>()
}

#[test]
fn an_embedded_kubernetes_type_is_inlined_structural_and_keeps_the_fields_description() {
    let schema = schema();
    assert_eq!(structural_errors(&schema), Vec::<String>::new());
    let text = schema.to_string();
    assert!(!text.contains("$ref"), "{text}");
    assert!(!text.contains("preserve-unknown-fields"), "{text}");
    let selector = &schema["properties"]["selector"];
    assert_eq!(selector["description"], "The selector.");
    assert_eq!(selector["type"], "object");
    assert_eq!(
        selector["properties"]["matchExpressions"]["items"]["required"],
        json!(["key", "operator"])
    );
}

#[test]
fn an_embedded_kubernetes_type_carries_the_list_and_map_types_of_its_definitions() {
    let schema = schema();
    let at = |pointer: &str| {
        schema
            .pointer(pointer)
            .unwrap_or_else(|| panic!("no {pointer}"))
            .clone()
    };
    assert_eq!(at("/properties/selector/x-kubernetes-map-type"), "atomic");
    assert_eq!(
        at("/properties/selector/properties/matchExpressions/x-kubernetes-list-type"),
        "atomic"
    );
    assert_eq!(
        at(
            "/properties/selector/properties/matchExpressions/items/properties/values/x-kubernetes-list-type"
        ),
        "atomic"
    );
    let claims = at("/properties/resources/properties/claims");
    assert_eq!(claims["x-kubernetes-list-type"], "map");
    assert_eq!(claims["x-kubernetes-list-map-keys"], json!(["name"]));
    assert_eq!(
        at("/properties/spread/items/properties/labelSelector/x-kubernetes-map-type"),
        "atomic"
    );
    assert_eq!(
        at("/properties/spread/items/properties/matchLabelKeys/x-kubernetes-list-type"),
        "atomic"
    );
}

#[test]
fn a_quantity_is_an_int_or_string_with_kubes_pattern_and_no_description_of_its_own() {
    let quantity = schema()
        .pointer("/properties/resources/properties/limits/additionalProperties")
        .cloned()
        .expect("limits has a value schema");
    assert_eq!(
        quantity,
        json!({
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": super::QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": true,
        })
    );
}
