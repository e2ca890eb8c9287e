use serde_json::{Value, json};

use super::*;

fn schema() -> Value {
    let crd = serde_json::to_value(crd()).expect("encodes");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

/// The committed CRD's schema (what the API server validates objects with).
fn committed_schema() -> Value {
    let crd: Value = serde_yaml_ng::from_str(crate::CRD_YAML).expect("the committed CRD parses");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

#[test]
fn the_committed_crd_is_generated_from_the_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CRD_PATH);
    let generated =
        wasm_operator_sdk::crd::crd_yaml(&crd(), "guests/glancebackends/src/types.rs", REGENERATE);
    wasm_operator_sdk::crd::check_committed(crate::CRD_YAML, &generated, &path, REGENERATE);
}

#[test]
fn the_crd_is_structural() {
    assert_eq!(
        wasm_operator_sdk::crd::structural_errors(&schema()),
        Vec::<String>::new()
    );
}

#[test]
fn the_crd_names_the_glancebackends_of_glance_openstack_c5c3_io_v1alpha1() {
    let crd = serde_json::to_value(crd()).expect("encodes");
    assert_eq!(
        crd["metadata"]["name"],
        "glancebackends.glance.openstack.c5c3.io"
    );
    assert_eq!(crd["spec"]["group"], "glance.openstack.c5c3.io");
    assert_eq!(crd["spec"]["names"]["kind"], "GlanceBackend");
    assert_eq!(crd["spec"]["names"]["plural"], "glancebackends");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    assert_eq!(crd["spec"]["versions"][0]["name"], "v1alpha1");
    assert_eq!(
        crd["spec"]["versions"][0]["subresources"]["status"],
        json!({})
    );
}

#[test]
fn the_crd_carries_the_immutables_and_the_union_rule_of_section_3_3() {
    let schema = schema();
    let messages = |pointer: &str| -> Vec<String> {
        schema
            .pointer(pointer)
            .and_then(|n| n.get("x-kubernetes-validations"))
            .and_then(Value::as_array)
            .map(|rules| {
                rules
                    .iter()
                    .map(|r| r["message"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let spec = "/properties/spec";
    assert_eq!(
        messages(spec),
        [
            "glanceRef is immutable",
            "type is immutable",
            "exactly one backend block matching spec.type must be set (type S3 requires spec.s3)",
        ]
    );
    let rules: Vec<&str> = schema
        .pointer(&format!("{spec}/x-kubernetes-validations"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r["rule"].as_str())
        .collect();
    assert_eq!(
        rules,
        [
            "self.glanceRef.name == oldSelf.glanceRef.name",
            "self.type == oldSelf.type",
            "(self.type == 'S3') == has(self.s3)",
        ]
    );
    assert_eq!(
        messages(&format!("{spec}/properties/extraOptions")),
        ["each extraOptions key must be <=256 characters and each value <=1024 characters"]
    );
    // isDefault may change: flipping it moves the Glance's default store.
    assert_eq!(
        messages(&format!("{spec}/properties/isDefault")),
        Vec::<String>::new()
    );
}

#[test]
fn the_crd_carries_the_enums_defaults_and_bounds_of_section_3_3() {
    let schema = schema();
    let spec = "/properties/spec/properties";
    // (path under spec, keyword, value)
    let table: &[(&str, &str, Value)] = &[
        ("/type", "enum", json!(["S3"])),
        ("/glanceRef/properties/name", "minLength", json!(1)),
        ("/s3/properties/host", "minLength", json!(1)),
        ("/s3/properties/host", "pattern", json!("^https?://")),
        ("/s3/properties/bucket", "minLength", json!(1)),
        (
            "/s3/properties/credentialsSecretRef/properties/name",
            "minLength",
            json!(1),
        ),
        (
            "/s3/properties/bucketURLFormat",
            "enum",
            json!(["path", "virtual"]),
        ),
        ("/s3/properties/bucketURLFormat", "default", json!("path")),
        ("/s3/properties/region", "type", json!("string")),
        ("/s3/properties/createBucketOnPut", "type", json!("boolean")),
        ("/s3/properties/largeObjectSize", "minimum", json!(1.0)),
        ("/s3/properties/largeObjectSize", "format", json!("int32")),
        ("/s3/properties/largeObjectChunkSize", "minimum", json!(1.0)),
        ("/isDefault", "type", json!("boolean")),
        ("/extraOptions", "maxProperties", json!(32)),
        (
            "/extraOptions/additionalProperties",
            "type",
            json!("string"),
        ),
    ];
    for (path, keyword, expected) in table {
        let pointer = format!("{spec}{path}");
        let node = schema
            .pointer(&pointer)
            .unwrap_or_else(|| panic!("no {pointer}"));
        assert_eq!(node.get(*keyword), Some(expected), "{path} {keyword}");
    }
    let required = |pointer: &str| schema.pointer(pointer).cloned().unwrap_or_default();
    let table: &[(&str, Value)] = &[
        ("/required", json!(["spec"])),
        ("/properties/spec/required", json!(["type", "glanceRef"])),
        (
            "/properties/spec/properties/glanceRef/required",
            json!(["name"]),
        ),
        (
            "/properties/spec/properties/s3/required",
            json!(["bucket", "credentialsSecretRef", "host"]),
        ),
        (
            "/properties/spec/properties/s3/properties/credentialsSecretRef/required",
            json!(["name"]),
        ),
        (
            "/properties/status/properties/conditions/x-kubernetes-list-map-keys",
            json!(["type"]),
        ),
        (
            "/properties/status/properties/observedGeneration/type",
            json!("integer"),
        ),
    ];
    for (pointer, expected) in table {
        let mut got = required(pointer);
        let mut expected = expected.clone();
        if let (Value::Array(g), Value::Array(e)) = (&mut got, &mut expected) {
            g.sort_by_key(ToString::to_string);
            e.sort_by_key(ToString::to_string);
        }
        assert_eq!(got, expected, "{pointer}");
    }
}

#[test]
fn the_crd_prints_ready_type_default_glance_and_age() {
    let crd = serde_json::to_value(crd()).expect("encodes");
    let columns: Vec<(&str, &str, &str)> = crd["spec"]["versions"][0]["additionalPrinterColumns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some((
                c["name"].as_str()?,
                c["type"].as_str()?,
                c["jsonPath"].as_str()?,
            ))
        })
        .collect();
    assert_eq!(
        columns,
        [
            (
                "Ready",
                "string",
                ".status.conditions[?(@.type=='Ready')].status"
            ),
            ("Type", "string", ".spec.type"),
            ("Default", "boolean", ".spec.isDefault"),
            ("Glance", "string", ".spec.glanceRef.name"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ]
    );
}

#[test]
fn the_committed_schema_refuses_what_the_facts_bound() {
    let schema = committed_schema();
    let valid = json!({"apiVersion": "glance.openstack.c5c3.io/v1alpha1",
        "kind": "GlanceBackend", "metadata": {"name": "images"},
        "spec": {"glanceRef": {"name": "glance"}, "type": "S3", "isDefault": true,
                 "s3": {"host": "https://s3.example.com", "bucket": "images",
                        "credentialsSecretRef": {"name": "s3"}, "bucketURLFormat": "path",
                        "largeObjectSize": 100}}});
    // (pointer under spec, value, the errors expected)
    let table: &[(&str, Value, &[&str])] = &[
        ("/type", json!("S3"), &[]),
        (
            "/type",
            json!("Swift"),
            &["spec.type: Unsupported value: \"Swift\": supported values: \"S3\""],
        ),
        (
            "/s3/host",
            json!("s3.example.com"),
            &[
                "spec.s3.host: Invalid value: \"s3.example.com\": spec.s3.host in body should match '^https?://'",
            ],
        ),
        (
            "/s3/bucketURLFormat",
            json!("dns"),
            &[
                "spec.s3.bucketURLFormat: Unsupported value: \"dns\": supported values: \"path\", \"virtual\"",
            ],
        ),
        (
            "/s3/largeObjectSize",
            json!(0),
            &[
                "spec.s3.largeObjectSize: Invalid value: 0: spec.s3.largeObjectSize in body should be greater than or equal to 1",
            ],
        ),
        (
            "/glanceRef/name",
            json!(""),
            &[
                "spec.glanceRef.name: Invalid value: \"\": spec.glanceRef.name in body should be at least 1 chars long",
            ],
        ),
    ];
    for (pointer, value, expected) in table {
        let mut object = valid.clone();
        *object
            .pointer_mut(&format!("/spec{pointer}"))
            .unwrap_or_else(|| panic!("no {pointer}")) = value.clone();
        let errors: Vec<String> = wasm_operator_sdk::crd::validate(&schema, &object)
            .errors()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(errors, *expected, "{pointer}");
    }
}

#[test]
fn no_required_field_has_a_default_the_api_server_would_fill_it_with() {
    fn required_defaults(node: &Value, path: &str, found: &mut Vec<String>) {
        let required = node.get("required").and_then(Value::as_array);
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                let at = format!("{path}.{name}");
                if required.is_some_and(|r| r.iter().any(|n| n == name))
                    && property.get("default").is_some()
                {
                    found.push(at.clone());
                }
                required_defaults(property, &at, found);
            }
        }
    }
    let mut found = Vec::new();
    required_defaults(&committed_schema(), "", &mut found);
    assert_eq!(found, Vec::<String>::new());
}
