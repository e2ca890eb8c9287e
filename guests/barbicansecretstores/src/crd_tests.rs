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
    let generated = wasm_operator_sdk::crd::crd_yaml(
        &crd(),
        "guests/barbicansecretstores/src/types.rs",
        REGENERATE,
    );
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
fn the_crd_names_the_barbicansecretstores_of_barbican_openstack_c5c3_io_v1alpha1() {
    let crd = serde_json::to_value(crd()).expect("encodes");
    assert_eq!(
        crd["metadata"]["name"],
        "barbicansecretstores.barbican.openstack.c5c3.io"
    );
    assert_eq!(crd["spec"]["group"], "barbican.openstack.c5c3.io");
    assert_eq!(crd["spec"]["names"]["kind"], "BarbicanSecretStore");
    assert_eq!(crd["spec"]["names"]["plural"], "barbicansecretstores");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    assert_eq!(crd["spec"]["versions"][0]["name"], "v1alpha1");
    assert_eq!(
        crd["spec"]["versions"][0]["subresources"]["status"],
        json!({})
    );
}

/// The messages of the CEL rules at `pointer` of `schema`.
fn messages(schema: &Value, pointer: &str) -> Vec<String> {
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
}

/// The rules of the CEL rules at `pointer` of `schema`.
fn rules(schema: &Value, pointer: &str) -> Vec<String> {
    schema
        .pointer(&format!("{pointer}/x-kubernetes-validations"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r["rule"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn the_crd_carries_the_immutables_the_union_and_the_mode_rules_of_section_3_6() {
    let schema = schema();
    let spec = "/properties/spec";
    assert_eq!(
        messages(&schema, spec),
        [
            "barbicanRef is immutable",
            "type is immutable",
            "exactly one store block matching spec.type must be set (type OpenBao requires spec.openBao)",
        ]
    );
    assert_eq!(
        rules(&schema, spec),
        [
            "self.barbicanRef.name == oldSelf.barbicanRef.name",
            "self.type == oldSelf.type",
            "(self.type == 'OpenBao') == has(self.openBao)",
        ]
    );
    let open_bao = format!("{spec}/properties/openBao");
    assert_eq!(
        rules(&schema, &open_bao),
        [
            "has(self.instanceRef) != has(self.server)",
            "!has(self.instanceRef) || (self.kvMountpoint == 'barbican' && !has(self.__namespace__))",
            "self.kvMountpoint == oldSelf.kvMountpoint",
            "has(self.instanceRef) == has(oldSelf.instanceRef)",
        ]
    );
    assert_eq!(
        messages(&schema, &open_bao),
        [
            "exactly one of instanceRef or server must be set",
            "managed stores (instanceRef) must keep kvMountpoint barbican and leave namespace unset: the self-init contract provisions only the barbican/ mount at the root namespace",
            "kvMountpoint is immutable: the secret material already written under the old mount is not reachable under a new one",
            "the store mode (instanceRef vs server) is immutable: delete and recreate the store instead",
        ]
    );
    assert_eq!(
        messages(&schema, &format!("{spec}/properties/extraOptions")),
        ["each extraOptions key must be <=256 characters and each value <=1024 characters"]
    );
    // isDefault may change: flipping it moves the Barbican's default store.
    assert_eq!(
        messages(&schema, &format!("{spec}/properties/isDefault")),
        Vec::<String>::new()
    );
}

#[test]
fn the_crd_carries_the_enums_defaults_and_bounds_of_section_3_6() {
    let schema = schema();
    let spec = "/properties/spec/properties";
    let open_bao = "/openBao/properties";
    // (path under spec, keyword, value)
    let table: Vec<(String, &str, Value)> = vec![
        ("/type".into(), "enum", json!(["OpenBao"])),
        ("/barbicanRef/properties/name".into(), "minLength", json!(1)),
        (
            format!("{open_bao}/instanceRef/properties/name"),
            "minLength",
            json!(1),
        ),
        (
            format!("{open_bao}/server/properties/url"),
            "minLength",
            json!(1),
        ),
        (
            format!("{open_bao}/server/properties/url"),
            "pattern",
            json!("^https://"),
        ),
        (
            format!("{open_bao}/server/properties/credentialsSecretRef/properties/name"),
            "minLength",
            json!(1),
        ),
        (
            format!("{open_bao}/server/properties/caBundleSecretRef/properties/name"),
            "minLength",
            json!(1),
        ),
        (format!("{open_bao}/kvMountpoint"), "minLength", json!(1)),
        (
            format!("{open_bao}/kvMountpoint"),
            "default",
            json!("barbican"),
        ),
        (format!("{open_bao}/namespace"), "type", json!("string")),
        ("/isDefault".into(), "type", json!("boolean")),
        ("/extraOptions".into(), "maxProperties", json!(32)),
        (
            "/extraOptions/additionalProperties".into(),
            "type",
            json!("string"),
        ),
    ];
    for (path, keyword, expected) in &table {
        let pointer = format!("{spec}{path}");
        let node = schema
            .pointer(&pointer)
            .unwrap_or_else(|| panic!("no {pointer}"));
        assert_eq!(node.get(*keyword), Some(expected), "{path} {keyword}");
    }
    let required = |pointer: &str| schema.pointer(pointer).cloned().unwrap_or_default();
    let table: &[(&str, Value)] = &[
        ("/required", json!(["spec"])),
        ("/properties/spec/required", json!(["type", "barbicanRef"])),
        (
            "/properties/spec/properties/barbicanRef/required",
            json!(["name"]),
        ),
        ("/properties/spec/properties/openBao/required", Value::Null),
        (
            "/properties/spec/properties/openBao/properties/server/required",
            json!(["credentialsSecretRef", "url"]),
        ),
        (
            "/properties/spec/properties/openBao/properties/instanceRef/required",
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
fn the_crd_prints_ready_type_default_barbican_and_age() {
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
            ("Barbican", "string", ".spec.barbicanRef.name"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ]
    );
}

#[test]
fn the_committed_schema_refuses_what_the_facts_bound() {
    let schema = committed_schema();
    let valid = json!({"apiVersion": "barbican.openstack.c5c3.io/v1alpha1",
        "kind": "BarbicanSecretStore", "metadata": {"name": "vault"},
        "spec": {"barbicanRef": {"name": "barbican"}, "type": "OpenBao", "isDefault": true,
                 "openBao": {"server": {"url": "https://bao.example.com:8200",
                                        "credentialsSecretRef": {"name": "creds"}},
                             "kvMountpoint": "secrets"}}});
    // (pointer under spec, value, the errors expected)
    let table: &[(&str, Value, &[&str])] = &[
        ("/type", json!("OpenBao"), &[]),
        (
            "/type",
            json!("Vault"),
            &["spec.type: Unsupported value: \"Vault\": supported values: \"OpenBao\""],
        ),
        (
            "/openBao/server/url",
            json!("http://bao.example.com:8200"),
            &[
                "spec.openBao.server.url: Invalid value: \"http://bao.example.com:8200\": spec.openBao.server.url in body should match '^https://'",
            ],
        ),
        (
            "/openBao/kvMountpoint",
            json!(""),
            &[
                "spec.openBao.kvMountpoint: Invalid value: \"\": spec.openBao.kvMountpoint in body should be at least 1 chars long",
            ],
        ),
        (
            "/barbicanRef/name",
            json!(""),
            &[
                "spec.barbicanRef.name: Invalid value: \"\": spec.barbicanRef.name in body should be at least 1 chars long",
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
