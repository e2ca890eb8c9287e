//! Unit tests of the apply engine, named as the behaviour they pin down.

use serde_json::{Value, json};

use super::*;
use error::{Conflict, Conflicts};
use fieldset::{FieldSet, Path, path_to_string};
use managed::{ApplyResult, Operation, decode_managed_fields, encode_managed_fields};
use merge::field_set;
use schema::PathPattern;

const T0: &str = "2024-01-01T00:00:00Z";
const T1: &str = "2024-01-02T00:00:00Z";

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": data})
}

fn fields_of(obj: &Value, manager: &str, operation: &str) -> Option<Value> {
    obj["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
        .map(|e| e["fieldsV1"].clone())
}

fn managers(obj: &Value) -> Vec<String> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    format!(
                        "{}/{}",
                        e["manager"].as_str().unwrap_or(""),
                        e["operation"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn apply_ok(live: Option<&Value>, applied: &Value, manager: &str) -> Value {
    match apply(
        live,
        applied,
        manager,
        false,
        &DefaultSchema::default(),
        None,
        T0,
    ) {
        Ok(r) => r.object,
        Err(e) => panic!("apply failed: {e}"),
    }
}

fn conflict_err(r: Result<ApplyResult, ApplyError>) -> Conflicts {
    match r {
        Err(ApplyError::Conflicts(c)) => c,
        other => panic!("expected conflicts, got {other:?}"),
    }
}

/// A ConfigMap whose `data` keys are owned by `kubectl` via Update.
fn cm_updated_by_kubectl(data: Value) -> Value {
    update(
        None,
        &cm(data),
        "kubectl",
        T0,
        None,
        &DefaultSchema::default(),
    )
}

fn pe_key(k: &str, v: Value) -> PathElement {
    PathElement::key(vec![(k.to_string(), v)])
}

fn f(name: &str) -> PathElement {
    PathElement::Field(name.to_string())
}

// ---- fieldsV1 ----

#[test]
fn fields_v1_round_trips_managed_fields_as_kube_apiserver_writes_them() {
    let real = json!({
        "f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}},
                       "f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {
                ".": {}, "f:image": {}, "f:name": {},
                "f:ports": {".": {}, "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                    ".": {}, "f:containerPort": {}, "f:protocol": {}}}}}}}
        },
        "f:metadata2": {"f:finalizers": {".": {}, "v:\"example.com/x\"": {}}}
    });
    let set = FieldSet::from_fields_v1(&real).expect("parses");
    assert_eq!(set.to_fields_v1(), real);
    assert!(set.contains(&[f("metadata"), f("labels")]));
    assert!(!set.contains(&[f("spec")]));
    assert!(set.contains(&[
        f("spec"),
        f("template"),
        f("spec"),
        f("containers"),
        pe_key("name", json!("nginx"))
    ]));
}

#[test]
fn fields_v1_is_written_with_the_dot_first_and_keys_sorted() {
    let mut set = FieldSet::new();
    set.insert(&[f("metadata"), f("labels"), f("b")]);
    set.insert(&[f("metadata"), f("labels"), f("a")]);
    set.insert(&[f("metadata"), f("labels")]);
    let text = serde_json::to_string(&set.to_fields_v1()).expect("serializes");
    assert_eq!(
        text,
        r#"{"f:metadata":{"f:labels":{".":{},"f:a":{},"f:b":{}}}}"#
    );
}

#[test]
fn path_elements_spell_like_fields_v1_and_print_like_kube() {
    let port = PathElement::key(vec![
        ("protocol".into(), json!("TCP")),
        ("containerPort".into(), json!(80)),
    ]);
    let cases: Vec<(PathElement, &str, &str)> = vec![
        (f("image"), "f:image", ".image"),
        (
            port,
            r#"k:{"containerPort":80,"protocol":"TCP"}"#,
            r#"[containerPort=80,protocol="TCP"]"#,
        ),
        (
            PathElement::Value(json!("a/b")),
            r#"v:"a/b""#,
            r#"[="a/b"]"#,
        ),
        (PathElement::Index(3), "i:3", "[3]"),
    ];
    for (pe, wire, printed) in cases {
        assert_eq!(pe.to_fields_v1_key(), wire);
        assert_eq!(PathElement::from_fields_v1_key(wire).expect("parses"), pe);
        assert_eq!(pe.to_string(), printed);
    }
    let path = vec![
        f("spec"),
        f("containers"),
        pe_key("name", json!("nginx")),
        f("image"),
    ];
    assert_eq!(
        path_to_string(&path),
        r#".spec.containers[name="nginx"].image"#
    );
}

#[test]
fn malformed_fields_v1_is_a_typed_error() {
    for bad in [
        json!([]),
        json!({"x:y": {}}),
        json!({"f:a": 1}),
        json!({"k:[1]": {}}),
        json!({".": {}}),
        json!({"i:z": {}}),
    ] {
        assert!(
            matches!(
                FieldSet::from_fields_v1(&bad),
                Err(ApplyError::InvalidFieldsV1(_))
            ),
            "{bad}"
        );
    }
}

#[test]
fn set_algebra_works_on_exact_paths() {
    let mut a = FieldSet::new();
    a.insert(&[f("data"), f("x")]);
    a.insert(&[f("data"), f("y")]);
    let mut b = FieldSet::new();
    b.insert(&[f("data"), f("y")]);
    b.insert(&[f("spec")]);
    assert_eq!(a.union(&b).paths().len(), 3);
    assert_eq!(a.intersection(&b).paths(), vec![vec![f("data"), f("y")]]);
    assert_eq!(a.difference(&b).paths(), vec![vec![f("data"), f("x")]]);
    assert!(a.difference(&a).is_empty());
    assert!(a.contains_prefix(&[f("data")]) && !a.contains(&[f("data")]));
}

#[test]
fn the_field_set_holds_leaves_and_items_and_no_empty_granular_map_or_list() {
    let obj = json!({
        "metadata": {"labels": {"a": "1"}, "finalizers": ["x"], "annotations": {}},
        "spec": {"list": [1, 2], "n": null, "atomic": [], "nested": {"inner": {}}}
    });
    let set = field_set(&obj, &DefaultSchema::default()).expect("field set");
    let expected = json!({
        "f:metadata": {"f:finalizers": {"v:\"x\"": {}}, "f:labels": {"f:a": {}}},
        "f:spec": {"f:list": {}, "f:n": {}, "f:atomic": {}}
    });
    assert_eq!(
        set.to_fields_v1(),
        expected,
        "an empty atomic list is a leaf"
    );
    let no_finalizers = json!({"metadata": {"finalizers": []}, "spec": {"n": 1}});
    let set = field_set(&no_finalizers, &DefaultSchema::default()).expect("field set");
    assert_eq!(
        set.to_fields_v1(),
        json!({"f:spec": {"f:n": {}}}),
        "an empty set claims no field"
    );
}

// ---- schema ----

#[test]
fn the_builtin_schema_resolves_list_types_by_path() {
    let containers = vec![f("spec"), f("template"), f("spec"), f("containers")];
    let item = |mut p: Path| {
        p.push(pe_key("name", json!("c")));
        p
    };
    let with = |mut p: Path, s: &str| {
        p.push(f(s));
        p
    };
    let dep = BuiltinSchema::new("Deployment");
    let svc = BuiltinSchema::new("Service");
    let pod = BuiltinSchema::new("Pod");
    let map = |keys: &[&str]| ListType::Map(keys.iter().map(|k| k.to_string()).collect());
    let cases: Vec<(&dyn MergeSchema, Path, ListType)> = vec![
        (&dep, containers.clone(), map(&["name"])),
        (&dep, with(item(containers.clone()), "env"), map(&["name"])),
        (
            &dep,
            with(item(containers.clone()), "ports"),
            map(&["containerPort", "protocol"]),
        ),
        (
            &dep,
            with(item(containers.clone()), "volumeMounts"),
            map(&["mountPath"]),
        ),
        (
            &dep,
            with(item(containers.clone()), "args"),
            ListType::Atomic,
        ),
        (
            &dep,
            vec![f("spec"), f("template"), f("spec"), f("volumes")],
            map(&["name"]),
        ),
        (&pod, vec![f("spec"), f("imagePullSecrets")], map(&["name"])),
        (
            &pod,
            vec![f("spec"), f("template"), f("spec"), f("containers")],
            ListType::Atomic,
        ),
        (
            &svc,
            vec![f("spec"), f("ports")],
            map(&["port", "protocol"]),
        ),
        (&svc, vec![f("metadata"), f("finalizers")], ListType::Set),
        (
            &svc,
            vec![f("metadata"), f("ownerReferences")],
            map(&["uid"]),
        ),
    ];
    for (schema, path, expected) in cases {
        assert_eq!(
            schema.list_type(&path),
            expected,
            "{}",
            path_to_string(&path)
        );
    }
    assert!(dep.map_is_atomic(&[f("spec"), f("selector")]));
    assert!(svc.map_is_atomic(&[f("spec"), f("selector")]));
    assert!(!BuiltinSchema::new("ConfigMap").map_is_atomic(&[f("data")]));
    assert_eq!(
        svc.list_key_default(&[f("spec"), f("ports")], "protocol"),
        Some(json!("TCP"))
    );
}

#[test]
fn the_default_schema_keeps_lists_atomic_except_object_meta_lists() {
    let s = DefaultSchema::default();
    assert_eq!(s.list_type(&[f("spec"), f("items")]), ListType::Atomic);
    assert_eq!(
        s.list_type(&[f("metadata"), f("finalizers")]),
        ListType::Set
    );
    assert!(!s.map_is_atomic(&[f("spec")]));
    assert!(PathPattern::parse("a.b[*].c").matches(&[
        f("a"),
        f("b"),
        PathElement::Index(0),
        f("c")
    ]));
}

// ---- apply ----

#[test]
fn creating_by_apply_records_an_apply_entry_without_identity_fields() {
    let obj = apply_ok(None, &cm(json!({"a": "1"})), "op");
    assert_eq!(obj["data"], json!({"a": "1"}));
    assert_eq!(obj["metadata"]["name"], "c");
    let entry = &obj["metadata"]["managedFields"][0];
    assert_eq!(
        *entry,
        json!({"manager": "op", "operation": "Apply", "apiVersion": "v1", "time": T0,
               "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}})
    );
}

#[test]
fn an_apply_that_changes_nothing_is_not_a_change() {
    let live = apply_ok(None, &cm(json!({"a": "1"})), "op");
    let again = apply(
        Some(&live),
        &cm(json!({"a": "1"})),
        "op",
        false,
        &DefaultSchema::default(),
        None,
        T1,
    )
    .expect("applies");
    assert!(!again.changed);
    assert_eq!(again.object, live);
}

#[test]
fn an_apply_that_changes_a_value_is_a_change_with_a_new_time() {
    let live = apply_ok(None, &cm(json!({"a": "1"})), "op");
    let r = apply(
        Some(&live),
        &cm(json!({"a": "2"})),
        "op",
        false,
        &DefaultSchema::default(),
        None,
        T1,
    )
    .expect("applies");
    assert!(r.changed);
    assert_eq!(r.object["data"]["a"], "2");
    assert_eq!(r.object["metadata"]["managedFields"][0]["time"], T1);
}

#[test]
fn a_field_owned_by_another_manager_with_another_value_conflicts() {
    let live = cm_updated_by_kubectl(json!({"key": "1"}));
    let r = apply(
        Some(&live),
        &cm(json!({"key": "2"})),
        "op",
        false,
        &DefaultSchema::default(),
        None,
        T1,
    );
    let c = conflict_err(r);
    assert_eq!(
        c.to_string(),
        r#"Apply failed with 1 conflict: conflict with "kubectl" using v1: .data.key"#
    );
}

#[test]
fn a_field_owned_by_another_manager_with_the_same_value_is_shared() {
    let live = cm_updated_by_kubectl(json!({"key": "1"}));
    let obj = apply_ok(Some(&live), &cm(json!({"key": "1"})), "op");
    assert_eq!(
        fields_of(&obj, "op", "Apply"),
        Some(json!({"f:data": {"f:key": {}}}))
    );
    assert_eq!(
        fields_of(&obj, "kubectl", "Update"),
        Some(json!({"f:data": {".": {}, "f:key": {}}}))
    );
}

#[test]
fn force_takes_ownership_from_the_other_manager() {
    let live = cm_updated_by_kubectl(json!({"key": "1", "other": "x"}));
    let r = apply(
        Some(&live),
        &cm(json!({"key": "2"})),
        "op",
        true,
        &DefaultSchema::default(),
        None,
        T1,
    )
    .expect("forced");
    assert_eq!(r.object["data"], json!({"key": "2", "other": "x"}));
    assert_eq!(
        fields_of(&r.object, "kubectl", "Update"),
        Some(json!({"f:data": {".": {}, "f:other": {}}}))
    );
    assert_eq!(
        fields_of(&r.object, "op", "Apply"),
        Some(json!({"f:data": {"f:key": {}}}))
    );
}

#[test]
fn force_drops_a_manager_left_with_nothing() {
    let live = cm_updated_by_kubectl(json!({"key": "1"}));
    let mut only_leaf = live.clone();
    only_leaf["metadata"]["managedFields"][0]["fieldsV1"] = json!({"f:data": {"f:key": {}}});
    let r = apply(
        Some(&only_leaf),
        &cm(json!({"key": "2"})),
        "op",
        true,
        &DefaultSchema::default(),
        None,
        T1,
    )
    .expect("forced");
    assert_eq!(managers(&r.object), vec!["op/Apply"]);
}

#[test]
fn a_field_the_sole_owner_stops_applying_is_removed() {
    let live = apply_ok(None, &cm(json!({"a": "1", "b": "2"})), "op");
    let obj = apply_ok(Some(&live), &cm(json!({"a": "1"})), "op");
    assert_eq!(obj["data"], json!({"a": "1"}));
    let obj = apply_ok(
        Some(&obj),
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
        "op",
    );
    assert!(obj.get("data").is_none(), "emptied data goes too: {obj}");
    assert!(obj["metadata"].get("managedFields").is_none());
}

#[test]
fn a_field_still_owned_by_another_manager_survives_when_one_stops_applying() {
    let live = apply_ok(None, &cm(json!({"a": "1", "b": "2"})), "one");
    let live = apply_ok(Some(&live), &cm(json!({"b": "2"})), "two");
    let obj = apply_ok(Some(&live), &cm(json!({"a": "1"})), "one");
    assert_eq!(obj["data"], json!({"a": "1", "b": "2"}));
    assert_eq!(
        fields_of(&obj, "two", "Apply"),
        Some(json!({"f:data": {"f:b": {}}}))
    );
}

#[test]
fn a_field_set_by_an_update_is_not_removed_by_an_applier() {
    let live = apply_ok(None, &cm(json!({"a": "1"})), "op");
    let mut edited = live.clone();
    edited["data"]["b"] = json!("x");
    let live = update(
        Some(&live),
        &edited,
        "kubectl-edit",
        T1,
        None,
        &DefaultSchema::default(),
    );
    let obj = apply_ok(Some(&live), &cm(json!({})), "op");
    assert_eq!(obj["data"], json!({"b": "x"}));
}

fn deployment(containers: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"template": {"spec": {"containers": containers}}}})
}

#[test]
fn list_map_items_merge_by_key() {
    let schema = BuiltinSchema::new("Deployment");
    let live = apply(
        None,
        &deployment(json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}])),
        "one",
        false,
        &schema,
        None,
        T0,
    )
    .expect("creates")
    .object;
    let applied = deployment(json!([{"name": "c", "image": "c:1"}, {"name": "a", "image": "a:2"}]));
    let r = apply(Some(&live), &applied, "two", true, &schema, None, T1).expect("applies");
    let names: Vec<&str> = r.object["spec"]["template"]["spec"]["containers"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        names,
        vec!["c", "a", "b"],
        "live-only items keep their place, applied order otherwise"
    );
    assert_eq!(
        r.object["spec"]["template"]["spec"]["containers"][1]["image"],
        "a:2"
    );
    let two = fields_of(&r.object, "two", "Apply").expect("entry");
    assert_eq!(
        two["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"a\"}"],
        json!({".": {}, "f:image": {}, "f:name": {}})
    );
}

#[test]
fn a_list_map_conflict_prints_the_item_key() {
    let schema = BuiltinSchema::new("Deployment");
    let live = apply(
        None,
        &deployment(json!([{"name": "nginx", "image": "nginx:1"}])),
        "one",
        false,
        &schema,
        None,
        T0,
    )
    .expect("creates")
    .object;
    let r = apply(
        Some(&live),
        &deployment(json!([{"name": "nginx", "image": "nginx:2"}])),
        "two",
        false,
        &schema,
        None,
        T1,
    );
    let c = conflict_err(r);
    assert_eq!(
        c.to_string(),
        r#"Apply failed with 1 conflict: conflict with "one": .spec.template.spec.containers[name="nginx"].image"#
    );
}

#[test]
fn a_list_map_item_the_applier_stops_applying_is_removed_unless_others_own_inside_it() {
    let schema = BuiltinSchema::new("Deployment");
    let two = json!([{"name": "a", "image": "a"}, {"name": "b", "image": "b"}]);
    let live = apply(None, &deployment(two), "op", false, &schema, None, T0)
        .expect("creates")
        .object;
    let r = apply(
        Some(&live),
        &deployment(json!([{"name": "a", "image": "a"}])),
        "op",
        false,
        &schema,
        None,
        T1,
    )
    .expect("applies");
    assert_eq!(
        r.object["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "a"}])
    );

    let mut edited = live.clone();
    edited["spec"]["template"]["spec"]["containers"][1]["tty"] = json!(true);
    let live = update(Some(&live), &edited, "editor", T1, None, &schema);
    let r = apply(
        Some(&live),
        &deployment(json!([{"name": "a", "image": "a"}])),
        "op",
        false,
        &schema,
        None,
        T1,
    )
    .expect("applies");
    assert_eq!(
        r.object["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "a"}, {"name": "b", "tty": true}])
    );
}

#[test]
fn container_ports_key_on_port_and_defaulted_protocol() {
    let schema = BuiltinSchema::new("Deployment");
    let applied = deployment(json!([{"name": "a", "ports": [{"containerPort": 80}]}]));
    let obj = apply(None, &applied, "op", false, &schema, None, T0)
        .expect("creates")
        .object;
    let fv = fields_of(&obj, "op", "Apply").expect("entry");
    let ports =
        &fv["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"a\"}"]["f:ports"];
    assert_eq!(
        *ports,
        json!({"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}})
    );
}

#[test]
fn a_list_map_item_without_its_key_is_rejected() {
    let schema = BuiltinSchema::new("Deployment");
    let r = apply(
        None,
        &deployment(json!([{"image": "x"}])),
        "op",
        false,
        &schema,
        None,
        T0,
    );
    match r {
        Err(ApplyError::InvalidObject(msg)) => {
            assert!(msg.contains(r#"omits key field "name""#), "{msg}")
        }
        other => panic!("expected invalid object, got {other:?}"),
    }
}

#[test]
fn set_members_are_unioned_and_removed_when_no_longer_applied() {
    let with_fin = |fins: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "finalizers": fins}});
    let live = apply_ok(None, &with_fin(json!(["a", "b"])), "one");
    let live = apply_ok(Some(&live), &with_fin(json!(["c"])), "two");
    assert_eq!(live["metadata"]["finalizers"], json!(["a", "b", "c"]));
    let obj = apply_ok(Some(&live), &with_fin(json!(["a"])), "one");
    assert_eq!(obj["metadata"]["finalizers"], json!(["a", "c"]));
    assert_eq!(
        fields_of(&obj, "one", "Apply"),
        Some(json!({"f:metadata": {"f:finalizers": {"v:\"a\"": {}}}}))
    );
}

#[test]
fn atomic_lists_are_replaced_and_owned_as_a_whole() {
    let obj = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "k"}, "spec": {"items": [1, 2, 3]}});
    let live = apply_ok(None, &obj, "one");
    let mut next = obj.clone();
    next["spec"]["items"] = json!([4]);
    let r = apply(
        Some(&live),
        &next,
        "two",
        false,
        &DefaultSchema::default(),
        None,
        T1,
    );
    assert_eq!(
        conflict_err(r).to_string(),
        r#"Apply failed with 1 conflict: conflict with "one": .spec.items"#
    );
    let r = apply(
        Some(&live),
        &next,
        "two",
        true,
        &DefaultSchema::default(),
        None,
        T1,
    )
    .expect("forced");
    assert_eq!(r.object["spec"]["items"], json!([4]));
    assert_eq!(
        fields_of(&r.object, "two", "Apply"),
        Some(json!({"f:spec": {"f:items": {}}}))
    );
}

#[test]
fn several_conflicts_are_grouped_by_manager_in_the_message() {
    let live = cm_updated_by_kubectl(json!({"a": "1", "b": "1"}));
    let live = apply_ok(Some(&live), &cm(json!({"z": "1"})), "another");
    let r = apply(
        Some(&live),
        &cm(json!({"a": "2", "b": "2", "z": "2"})),
        "op",
        false,
        &DefaultSchema::default(),
        None,
        T1,
    );
    let c = conflict_err(r);
    assert_eq!(
        c.to_string(),
        "Apply failed with 3 conflicts: conflicts with \"another\":\n- .data.z\nconflicts with \"kubectl\" using v1:\n- .data.a\n- .data.b"
    );
}

#[test]
fn conflict_causes_carry_reason_message_and_field() {
    let live = cm_updated_by_kubectl(json!({"a": "1", "b": "1"}));
    let r = apply(
        Some(&live),
        &cm(json!({"a": "2", "b": "2"})),
        "op",
        false,
        &DefaultSchema::default(),
        None,
        T1,
    );
    let c = conflict_err(r);
    assert_eq!(
        c.to_string(),
        "Apply failed with 2 conflicts: conflicts with \"kubectl\" using v1:\n- .data.a\n- .data.b"
    );
    let causes = serde_json::to_value(c.causes()).expect("serializes");
    assert_eq!(
        causes,
        json!([
            {"reason": "FieldManagerConflict", "message": "conflict with \"kubectl\" using v1", "field": ".data.a"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"kubectl\" using v1", "field": ".data.b"}
        ])
    );
}

#[test]
fn a_conflict_with_a_subresource_manager_names_the_subresource() {
    let c = Conflict {
        manager: "ctrl".into(),
        operation: Operation::Update,
        api_version: "x/v1".into(),
        subresource: Some("status".into()),
        path: vec![f("status"), f("ready")],
    };
    assert_eq!(
        Conflicts(vec![c]).to_string(),
        r#"Apply failed with 1 conflict: conflict with "ctrl" with subresource "status" using x/v1: .status.ready"#
    );
}

fn custom(spec: Value, status: Value) -> Value {
    json!({"apiVersion": "x.io/v1", "kind": "K", "metadata": {"name": "k"}, "spec": spec, "status": status})
}

#[test]
fn status_is_neither_changed_nor_owned_through_the_main_resource() {
    let live = apply_ok(None, &custom(json!({"a": 1}), json!({"ready": true})), "op");
    assert!(live.get("status").is_none());
    assert_eq!(
        fields_of(&live, "op", "Apply"),
        Some(json!({"f:spec": {"f:a": {}}}))
    );
}

#[test]
fn applying_to_the_status_subresource_owns_only_status() {
    let live = apply_ok(None, &custom(json!({"a": 1}), json!({})), "op");
    let r = apply(
        Some(&live),
        &custom(json!({"a": 2}), json!({"ready": true})),
        "ctrl",
        false,
        &DefaultSchema::default(),
        Some("status"),
        T1,
    )
    .expect("applies");
    assert_eq!(r.object["spec"], json!({"a": 1}));
    assert_eq!(r.object["status"], json!({"ready": true}));
    let entry = r.object["metadata"]["managedFields"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["manager"] == "ctrl").cloned())
        .expect("entry");
    assert_eq!(entry["subresource"], "status");
    assert_eq!(entry["fieldsV1"], json!({"f:status": {"f:ready": {}}}));
}

#[test]
fn a_custom_resource_without_status_subresource_owns_status_normally() {
    let schema = DefaultSchema {
        status_subresource: false,
    };
    let r = apply(
        None,
        &custom(json!({}), json!({"x": 1})),
        "op",
        false,
        &schema,
        None,
        T0,
    )
    .expect("creates");
    assert_eq!(r.object["status"], json!({"x": 1}));
    assert_eq!(
        fields_of(&r.object, "op", "Apply"),
        Some(json!({"f:status": {"f:x": {}}})),
        "the empty spec claims no field"
    );
}

#[test]
fn malformed_applied_configurations_are_rejected() {
    let s = DefaultSchema::default();
    let cases = [
        json!([]),
        json!({"kind": "ConfigMap", "metadata": {"name": "c"}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "managedFields": []}}),
    ];
    for case in cases {
        assert!(
            matches!(
                apply(None, &case, "op", false, &s, None, T0),
                Err(ApplyError::InvalidObject(_))
            ),
            "{case}"
        );
    }
}

// ---- update ----

#[test]
fn creating_by_update_gives_the_whole_object_to_the_creator() {
    let obj = cm_updated_by_kubectl(json!({"a": "1"}));
    let mut with_labels = cm(json!({"a": "1"}));
    with_labels["metadata"]["labels"] = json!({"app": "x"});
    let labelled = update(
        None,
        &with_labels,
        "kubectl",
        T0,
        None,
        &DefaultSchema::default(),
    );
    assert_eq!(
        obj["metadata"]["managedFields"],
        json!([{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "time": T0,
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:a": {}}}}])
    );
    assert_eq!(
        fields_of(&labelled, "kubectl", "Update"),
        Some(
            json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
        )
    );
}

#[test]
fn an_update_moves_changed_fields_to_the_updater() {
    let live = apply_ok(None, &cm(json!({"a": "1", "b": "1"})), "op");
    let mut edited = live.clone();
    edited["data"]["a"] = json!("2");
    let obj = update(
        Some(&live),
        &edited,
        "kubectl-edit",
        T1,
        None,
        &DefaultSchema::default(),
    );
    assert_eq!(
        fields_of(&obj, "op", "Apply"),
        Some(json!({"f:data": {"f:b": {}}}))
    );
    assert_eq!(
        fields_of(&obj, "kubectl-edit", "Update"),
        Some(json!({"f:data": {"f:a": {}}}))
    );
    assert_eq!(
        managers(&obj),
        vec!["op/Apply", "kubectl-edit/Update"],
        "Apply entries come first"
    );
}

#[test]
fn a_field_removed_by_an_update_leaves_every_manager() {
    let live = apply_ok(None, &cm(json!({"a": "1"})), "op");
    let mut edited = live.clone();
    edited["data"] = json!({"b": "2"});
    let obj = update(
        Some(&live),
        &edited,
        "editor",
        T1,
        None,
        &DefaultSchema::default(),
    );
    assert_eq!(managers(&obj), vec!["editor/Update"]);
    assert_eq!(
        fields_of(&obj, "editor", "Update"),
        Some(json!({"f:data": {"f:b": {}}}))
    );
}

#[test]
fn an_update_that_changes_nothing_keeps_the_old_time() {
    let live = cm_updated_by_kubectl(json!({"a": "1"}));
    let again = update(
        Some(&live),
        &live,
        "kubectl",
        T1,
        None,
        &DefaultSchema::default(),
    );
    assert_eq!(again, live);
}

#[test]
fn a_single_empty_managed_fields_entry_strips_them_but_an_empty_list_does_not() {
    let live = cm_updated_by_kubectl(json!({"a": "1"}));
    let mut reset = live.clone();
    reset["metadata"]["managedFields"] = json!([{}]);
    let stripped = update(
        Some(&live),
        &reset,
        "x",
        T1,
        None,
        &DefaultSchema::default(),
    );
    assert!(stripped["metadata"].get("managedFields").is_none());
    let mut empty = live.clone();
    empty["metadata"]["managedFields"] = json!([]);
    assert_eq!(
        update(
            Some(&live),
            &empty,
            "x",
            T1,
            None,
            &DefaultSchema::default()
        ),
        live
    );
}

#[test]
fn undecodable_managed_fields_are_reset() {
    let mut live = cm(json!({"a": "1"}));
    live["metadata"]["managedFields"] = json!([{"manager": "m", "operation": "Bogus"}]);
    assert!(decode_managed_fields(&live).is_err());
    let obj = apply_ok(Some(&live), &cm(json!({"a": "2"})), "op");
    assert_eq!(managers(&obj), vec!["op/Apply"]);
}

#[test]
fn managed_fields_entries_round_trip_and_sort_like_kube() {
    let entries = json!([
        {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": T0, "fieldsType": "FieldsV1", "fieldsV1": {"f:x": {}}},
        {"manager": "a", "operation": "Update", "apiVersion": "v1", "time": T1, "fieldsType": "FieldsV1", "fieldsV1": {"f:y": {}}},
        {"manager": "z", "operation": "Apply", "apiVersion": "v1", "time": T1, "fieldsType": "FieldsV1", "fieldsV1": {"f:z": {}}, "subresource": "status"}
    ]);
    let obj = json!({"metadata": {"managedFields": entries}});
    let decoded = decode_managed_fields(&obj).expect("decodes");
    let order: Vec<&str> = decoded.iter().map(|e| e.manager.as_str()).collect();
    assert_eq!(order, vec!["b", "a", "z"]);
    let encoded = encode_managed_fields(&decoded);
    let order: Vec<&str> = encoded
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["manager"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(order, vec!["z", "b", "a"]);
    assert_eq!(encoded[0], entries[2]);
}

#[test]
fn applying_to_the_main_resource_keeps_the_live_status() {
    let live = apply_ok(None, &custom(json!({"a": 1}), json!({})), "op");
    let live = apply(
        Some(&live),
        &custom(json!({}), json!({"ready": true})),
        "ctrl",
        false,
        &DefaultSchema::default(),
        Some("status"),
        T1,
    )
    .expect("status applies")
    .object;
    let r = apply(
        Some(&live),
        &custom(json!({"a": 2}), json!({"ready": false})),
        "op",
        false,
        &DefaultSchema::default(),
        None,
        T1,
    )
    .expect("applies");
    assert_eq!(r.object["status"], json!({"ready": true}));
    assert_eq!(r.object["spec"], json!({"a": 2}));
    assert_eq!(managers(&r.object), vec!["ctrl/Apply", "op/Apply"]);
}
