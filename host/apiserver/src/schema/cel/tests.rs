use serde_json::{Value, json};

use super::{check_rules, validate};

const ROOT: &str = "spec.versions[0].schema.openAPIV3Schema";

/// A root schema whose `spec` has `rules` and the given properties.
fn schema_with(spec_properties: Value, rules: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "properties": spec_properties,
                "x-kubernetes-validations": rules,
            },
        },
    })
}

fn widget_properties() -> Value {
    json!({
        "name": {"type": "string", "maxLength": 63},
        "replicas": {"type": "integer"},
        "type": {"type": "string", "maxLength": 16},
        "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 64}},
        "labels": {"type": "object", "maxProperties": 16, "additionalProperties": {"type": "string", "maxLength": 64}},
    })
}

fn crd_errors(rules: Value) -> Vec<String> {
    check_rules(&schema_with(widget_properties(), rules), ROOT)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_crd_rule_that_does_not_compile_is_refused_with_cel_gos_error() {
    let at = format!("{ROOT}.properties[spec].x-kubernetes-validations[0]");
    let cases: [(Value, Option<String>); 9] = [
        (
            json!([{"rule": "self.replicas >= 0 && self.name.startsWith('w')"}]),
            None,
        ),
        (
            json!([{"rule": "self.name.startsWith("}]),
            Some(format!(
                "{at}.rule: Invalid value: apiextensions.ValidationRule{{Rule:\"self.name.startsWith(\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:22: Syntax error: mismatched input '<EOF>' expecting {{'[', '{{', '(', ')', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}}\n | self.name.startsWith(\n | .....................^"
            )),
        ),
        (
            json!([{"rule": "self.nmae == 'x'", "message": "m"}]),
            Some(format!(
                "{at}.rule: Invalid value: apiextensions.ValidationRule{{Rule:\"self.nmae == 'x'\", Message:\"m\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:5: undefined field 'nmae'\n | self.nmae == 'x'\n | ....^"
            )),
        ),
        (
            json!([{"rule": "self.name"}]),
            Some(format!(
                "{at}.rule: Invalid value: apiextensions.ValidationRule{{Rule:\"self.name\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}: cel expression must evaluate to a bool"
            )),
        ),
        (
            json!([{"rule": "quantity(self.name).isInteger()"}]),
            Some(format!(
                "{at}.rule: Invalid value: apiextensions.ValidationRule{{Rule:\"quantity(self.name).isInteger()\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:9: undeclared reference to 'quantity' (in container '')\n | quantity(self.name).isInteger()\n | ........^\nERROR: <input>:1:30: undeclared reference to 'isInteger' (in container '')\n | quantity(self.name).isInteger()\n | .............................^"
            )),
        ),
        (
            json!([{"rule": "self.replicas > 0", "reason": "FieldValueWrong"}]),
            Some(format!(
                "{at}.reason: Unsupported value: \"FieldValueWrong\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\""
            )),
        ),
        (
            json!([{"rule": "self.replicas > 0", "message": "two\nlines"}]),
            Some(format!(
                "{at}.message: Invalid value: \"two\\nlines\": message must not contain line breaks"
            )),
        ),
        (
            json!([{"rule": "self.replicas > 0", "optionalOldSelf": true}]),
            Some(format!(
                "{at}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"
            )),
        ),
        (
            json!([{"rule": "self.replicas > 0", "fieldPath": ".replica"}]),
            Some(format!(
                "{at}.fieldPath: Invalid value: \".replica\": fieldPath must be a valid path"
            )),
        ),
    ];
    for (rules, expected) in cases {
        let errors = crd_errors(rules.clone());
        match expected {
            None => assert!(errors.is_empty(), "{rules}: {errors:?}"),
            Some(expected) => assert_eq!(errors, vec![expected], "{rules}"),
        }
    }
}

#[test]
fn a_transition_rule_under_a_list_without_keys_is_refused() {
    let schema = json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "ports": {"type": "array", "maxItems": 4, "items": {
                "type": "object",
                "properties": {"port": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port"}],
            }},
            "keyed": {"type": "array", "maxItems": 4, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"], "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string", "maxLength": 8}, "port": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port"}],
            }},
        }}},
    });
    let errors: Vec<String> = check_rules(&schema, ROOT)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errors,
        vec![format!(
            "{ROOT}.properties[spec].properties[ports].items.x-kubernetes-validations[0].rule: Invalid value: \"self.port == oldSelf.port\": oldSelf cannot be used on the uncorrelatable portion of the schema within {ROOT}.properties[spec].properties[ports]"
        )]
    );
}

#[test]
fn a_rule_over_unbounded_lists_is_refused_for_its_estimated_cost() {
    let rule = json!([{"rule": "self.all(a, self.all(b, a.matches(b)))"}]);
    let bounded = json!({"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 64}, "x-kubernetes-validations": rule});
    let unbounded =
        json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": rule});
    for (list, refused) in [(bounded, false), (unbounded, true)] {
        let schema = schema_with(json!({"list": list}), json!([]));
        let errors: Vec<String> = check_rules(&schema, ROOT)
            .iter()
            .map(ToString::to_string)
            .collect();
        if refused {
            let advice = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";
            assert_eq!(
                errors,
                vec![
                    format!(
                        "{ROOT}.properties[spec].properties[list].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x {advice}"
                    ),
                    format!(
                        "{ROOT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x {advice}"
                    ),
                ]
            );
        } else {
            assert!(errors.is_empty(), "{errors:?}");
        }
    }
}

#[test]
fn the_rules_of_every_shipped_crd_compile() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crds");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("crds directory") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let crd: Value = serde::Deserialize::deserialize(doc).expect("yaml");
            for version in crd["spec"]["versions"].as_array().into_iter().flatten() {
                let schema = &version["schema"]["openAPIV3Schema"];
                let errors = check_rules(schema, ROOT);
                assert!(errors.is_empty(), "{}: {errors:?}", path.display());
                checked += serde_json::to_string(schema)
                    .expect("json")
                    .matches("\"rule\":")
                    .count();
            }
        }
    }
    assert!(checked >= 40, "only {checked} rules found");
}

/// A custom resource with `spec`.
fn widget(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": spec})
}

fn rule_errors(rules: Value, spec: Value, old_spec: Option<Value>) -> (Vec<String>, Vec<String>) {
    let schema = schema_with(widget_properties(), rules);
    let old = old_spec.map(widget);
    let outcome = validate(&std::sync::Arc::new(schema), &widget(spec), old.as_ref());
    (
        outcome.errors.iter().map(ToString::to_string).collect(),
        outcome.warnings,
    )
}

#[test]
fn a_failed_rule_is_reported_as_kube_apiserver_words_it() {
    let spec = json!({"name": "alpha", "replicas": 3, "type": "a", "tags": ["x", "y"], "labels": {"k": "v"}});
    let cases: [(Value, Option<&str>); 11] = [
        (
            json!([{"rule": "isURL('https://h.example:8443/a/b?x=1&x=2') && url('https://h.example:8443/a/b?x=1&x=2').getScheme() == 'https' && url('https://h.example:8443/a/b?x=1&x=2').getHostname() == 'h.example' && url('https://h.example:8443/a/b?x=1&x=2').getPort() == '8443' && url('https://h.example:8443/a/b?x=1&x=2').getEscapedPath() == '/a/b' && url('https://h.example:8443/a/b?x=1&x=2').getQuery()['x'] == ['1', '2'] && !isURL('not a url')"}]),
            None,
        ),
        (
            json!([{"rule": "self.replicas == 3 && self.tags.exists(t, t == 'y') && self.labels.k == 'v'"}]),
            None,
        ),
        (
            json!([{"rule": "self.replicas < 3", "message": "  replicas must be under 3 "}]),
            Some("spec: Invalid value: \"object\": replicas must be under 3"),
        ),
        (
            json!([{"rule": "self.replicas < 3"}]),
            Some("spec: Invalid value: \"object\": failed rule: self.replicas < 3"),
        ),
        (
            json!([{"rule": "self.replicas < 3", "message": "m", "messageExpression": "'replicas is ' + string(self.replicas)"}]),
            Some("spec: Invalid value: \"object\": replicas is 3"),
        ),
        (
            json!([{"rule": "self.replicas < 3", "message": "m", "messageExpression": "''"}]),
            Some("spec: Invalid value: \"object\": m"),
        ),
        (
            json!([{"rule": "self.replicas < 3", "message": "too many", "reason": "FieldValueForbidden", "fieldPath": ".replicas"}]),
            Some("spec.replicas: Forbidden: too many"),
        ),
        (
            json!([{"rule": "has(self.nothing)", "message": "set it", "reason": "FieldValueRequired", "fieldPath": ".labels['k']"}]),
            Some("spec.labels[k]: Required value: set it"),
        ),
        (
            json!([{"rule": "self.tags.size() > 5", "reason": "FieldValueDuplicate"}]),
            Some("spec: Duplicate value: \"object\""),
        ),
        (
            json!([{"rule": "self.labels.missing == 'v'"}]),
            Some(
                "spec: Invalid value: \"object\": no such key: missing evaluating rule: self.labels.missing == 'v'",
            ),
        ),
        (
            json!([{"rule": "self.tags.isSorted() && self.tags.indexOf('y') == 1 && self.name.find('[a-z]+') == 'alpha' && !self.tags.isSorted()"}]),
            Some(
                "spec: Invalid value: \"object\": failed rule: self.tags.isSorted() && self.tags.indexOf('y') == 1 && self.name.find('[a-z]+') == 'alpha' && !self.tags.isSorted()",
            ),
        ),
    ];
    for (rules, expected) in cases {
        let (errors, _) = rule_errors(rules.clone(), spec.clone(), None);
        let expected: Vec<String> = expected.into_iter().map(str::to_owned).collect();
        assert_eq!(errors, expected, "{rules}");
    }
}

#[test]
fn a_transition_rule_compares_with_the_stored_value_and_is_skipped_on_create() {
    let immutable = json!([{"rule": "self.type == oldSelf.type", "message": "type is immutable"}]);
    let spec = |t: &str| json!({"name": "a", "type": t});
    assert_eq!(
        rule_errors(immutable.clone(), spec("a"), None).0,
        Vec::<String>::new()
    );
    assert_eq!(
        rule_errors(immutable.clone(), spec("a"), Some(spec("a"))).0,
        Vec::<String>::new()
    );
    assert_eq!(
        rule_errors(immutable, spec("b"), Some(spec("a"))).0,
        vec!["spec: Invalid value: \"object\": type is immutable".to_owned()]
    );
    let optional = json!([{"rule": "oldSelf.hasValue() || self.type == 'new'", "optionalOldSelf": true, "message": "a new widget starts as type new"}]);
    assert_eq!(
        rule_errors(optional.clone(), spec("old"), None).0,
        vec!["spec: Invalid value: \"object\": a new widget starts as type new".to_owned()]
    );
    assert_eq!(
        rule_errors(optional, spec("old"), Some(spec("new"))).0,
        Vec::<String>::new()
    );
}

#[test]
fn an_unchanged_value_failing_a_rule_is_a_warning_not_an_error() {
    let rule = json!([{"rule": "self.replicas <= 5", "message": "at most 5"}]);
    let spec = |replicas: i64, name: &str| json!({"name": name, "replicas": replicas});
    let (errors, warnings) = rule_errors(rule.clone(), spec(9, "a"), Some(spec(9, "a")));
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(
        warnings,
        vec!["299 - \"spec: Invalid value: \\\"object\\\": at most 5\"".to_owned()]
    );
    let (errors, warnings) = rule_errors(rule, spec(9, "b"), Some(spec(9, "a")));
    assert_eq!(
        errors,
        vec!["spec: Invalid value: \"object\": at most 5".to_owned()]
    );
    assert!(warnings.is_empty());
}

#[test]
fn a_root_rule_reads_the_name_and_a_property_named_like_a_keyword_is_escaped() {
    let schema = json!({
        "type": "object",
        "properties": {
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": {
                "namespace": {"type": "string"},
                "max-size": {"type": "integer"},
            }, "x-kubernetes-validations": [{"rule": "self.__namespace__ == 'ns' && self.max__dash__size == 2"}]},
        },
        "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('w') && !has(self.metadata.namespace)"}],
    });
    assert!(check_rules(&schema, ROOT).is_empty());
    let object = json!({"metadata": {"name": "w1", "namespace": "default"}, "spec": {"namespace": "ns", "max-size": 2}});
    let schema = std::sync::Arc::new(schema);
    let outcome = validate(&schema, &object, None);
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    let object = json!({"metadata": {"name": "x1"}, "spec": {"namespace": "ns", "max-size": 3}});
    let errors: Vec<String> = validate(&schema, &object, None)
        .errors
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errors,
        vec![
            "<nil>: Invalid value: \"object\": failed rule: self.metadata.name.startsWith('w') && !has(self.metadata.namespace)".to_owned(),
            "spec: Invalid value: \"object\": failed rule: self.__namespace__ == 'ns' && self.max__dash__size == 2".to_owned(),
        ]
    );
}
