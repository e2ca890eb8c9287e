//! The Kubernetes types the spec embeds (`deployment.resources`, `.strategy`,
//! `.topologySpreadConstraints`, `networkPolicy.ingress[].namespaceSelector` /
//! `.podSelector`, `networkPolicy.additionalEgress`), as the committed CRD spells them.

use serde_json::{Value, json};
use wasm_operator_sdk::crd::validate;

use crate::testing::keystone_with;

/// The committed CRD's schema.
fn committed_schema() -> Value {
    let crd: Value = serde_yaml_ng::from_str(crate::CRD_YAML).expect("the committed CRD parses");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

/// A Keystone setting every embedded Kubernetes field.
fn embedding_all() -> Value {
    let selector = json!({"matchLabels": {"app": "horizon"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]});
    keystone_with(json!({
        "deployment": {
            "resources": {"requests": {"cpu": "100m", "memory": "256Mi"},
                "limits": {"cpu": 1, "memory": "512Mi"}, "claims": [{"name": "gpu"}]},
            "strategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "25%"}},
            "topologySpreadConstraints": [{"maxSkew": 1, "minDomains": 2,
                "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": selector, "matchLabelKeys": ["pod-template-hash"],
                "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore"}],
        },
        "networkPolicy": {
            "ingress": [{"namespaceSelector": selector, "podSelector": selector}],
            "additionalEgress": [{
                "ports": [{"protocol": "TCP", "port": 5000, "endPort": 5010}, {"port": "ldaps"}],
                "to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}},
                       {"namespaceSelector": selector, "podSelector": selector}],
            }],
        },
    }))
}

/// `embedding_all()` with the value at `pointer` (under `spec`) replaced, or removed
/// when `value` is null.
fn embedding_all_but(pointer: &str, value: Value) -> Value {
    let mut object = embedding_all();
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
    let parent = object
        .pointer_mut(&format!("/spec{parent}"))
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no /spec{parent}"));
    if value.is_null() {
        parent.remove(key);
    } else {
        parent.insert(key.to_owned(), value);
    }
    object
}

#[test]
fn each_embedded_kubernetes_field_of_the_wrong_type_is_refused_by_the_crd() {
    const TYPE_INT_OR_STRING: &str = "must be of type integer,string";
    const TYPE_INTEGER: &str = "must be of type integer:";
    const TYPE_STRING: &str = "must be of type string:";
    const TYPE_OBJECT: &str = "must be of type object:";
    const TYPE_ARRAY: &str = "must be of type array:";
    const REQUIRED: &str = "Required value";
    // (the field replaced, its new value (null: removed), the field refused, why).
    let table: &[(&str, Value, &str, &str)] = &[
        ("", Value::Null, "", ""),
        (
            "/deployment/resources/limits/cpu",
            json!({"millis": 500}),
            "spec.deployment.resources.limits.cpu",
            TYPE_INT_OR_STRING,
        ),
        (
            "/deployment/resources/requests/memory",
            json!("a lot"),
            "spec.deployment.resources.requests.memory",
            "should match '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))",
        ),
        (
            "/deployment/resources/claims",
            json!([{"request": "r"}]),
            "spec.deployment.resources.claims[0].name",
            REQUIRED,
        ),
        (
            "/deployment/strategy/rollingUpdate/maxUnavailable",
            json!(true),
            "spec.deployment.strategy.rollingUpdate.maxUnavailable",
            TYPE_INT_OR_STRING,
        ),
        (
            "/deployment/strategy/type",
            json!(1),
            "spec.deployment.strategy.type",
            TYPE_STRING,
        ),
        (
            "/deployment/topologySpreadConstraints/0/maxSkew",
            json!("one"),
            "spec.deployment.topologySpreadConstraints[0].maxSkew",
            TYPE_INTEGER,
        ),
        (
            "/deployment/topologySpreadConstraints/0/topologyKey",
            Value::Null,
            "spec.deployment.topologySpreadConstraints[0].topologyKey",
            REQUIRED,
        ),
        (
            "/deployment/topologySpreadConstraints/0/labelSelector/matchLabels",
            json!(["app"]),
            "spec.deployment.topologySpreadConstraints[0].labelSelector.matchLabels",
            TYPE_OBJECT,
        ),
        (
            "/networkPolicy/ingress/0/namespaceSelector/matchExpressions/0/values",
            json!("web"),
            "spec.networkPolicy.ingress[0].namespaceSelector.matchExpressions[0].values",
            TYPE_ARRAY,
        ),
        (
            "/networkPolicy/ingress/0/podSelector/matchExpressions/0/operator",
            Value::Null,
            "spec.networkPolicy.ingress[0].podSelector.matchExpressions[0].operator",
            REQUIRED,
        ),
        (
            "/networkPolicy/ingress/0/podSelector/matchLabels/app",
            json!(1),
            "spec.networkPolicy.ingress[0].podSelector.matchLabels.app",
            TYPE_STRING,
        ),
        (
            "/networkPolicy/additionalEgress/0/ports/0/port",
            json!([5000]),
            "spec.networkPolicy.additionalEgress[0].ports[0].port",
            TYPE_INT_OR_STRING,
        ),
        (
            "/networkPolicy/additionalEgress/0/ports/0/endPort",
            json!("5010"),
            "spec.networkPolicy.additionalEgress[0].ports[0].endPort",
            TYPE_INTEGER,
        ),
        (
            "/networkPolicy/additionalEgress/0/to/0/ipBlock/cidr",
            Value::Null,
            "spec.networkPolicy.additionalEgress[0].to[0].ipBlock.cidr",
            REQUIRED,
        ),
        (
            "/networkPolicy/additionalEgress/0/to/0/ipBlock/except",
            json!("10.1.0.0/16"),
            "spec.networkPolicy.additionalEgress[0].to[0].ipBlock.except",
            TYPE_ARRAY,
        ),
        (
            "/networkPolicy/additionalEgress/0/to/1/namespaceSelector",
            json!("all"),
            "spec.networkPolicy.additionalEgress[0].to[1].namespaceSelector",
            TYPE_OBJECT,
        ),
    ];
    let schema = committed_schema();
    for (pointer, value, field, why) in table {
        let object = if pointer.is_empty() {
            embedding_all()
        } else {
            embedding_all_but(pointer, value.clone())
        };
        let errors = validate(&schema, &object);
        let found: Vec<String> = errors.errors().iter().map(ToString::to_string).collect();
        if field.is_empty() {
            assert_eq!(found, Vec::<String>::new(), "the valid Keystone");
            continue;
        }
        assert!(
            errors
                .errors()
                .iter()
                .any(|e| e.field == *field && e.message.contains(why)),
            "{pointer}: expected {field}: …{why}…, got {found:?}"
        );
        assert_eq!(found.len(), 1, "{pointer}: one error, got {found:?}");
    }
}

/// One line per node below `schema`: its path, its type (`int-or-string` for one), and
/// the facts controller-gen spells for it (format, list and map types, required fields,
/// pattern, preserve-unknown-fields).
fn outline(schema: &Value) -> Vec<String> {
    fn walk(path: &str, node: &Value, lines: &mut Vec<String>) {
        let text = |key: &str| node.get(key).and_then(Value::as_str);
        let mut line = format!("{path}:");
        if node.get("x-kubernetes-int-or-string") == Some(&json!(true)) {
            line.push_str(" int-or-string");
            if node.get("anyOf") == Some(&json!([{"type": "integer"}, {"type": "string"}])) {
                line.push_str(" anyOf");
            }
        }
        for key in ["type", "format"] {
            if let Some(value) = text(key) {
                line.push_str(&format!(" {value}"));
            }
        }
        if let Some(list) = text("x-kubernetes-list-type") {
            line.push_str(&format!(" list={list}"));
        }
        if let Some(keys) = node.get("x-kubernetes-list-map-keys") {
            line.push_str(&format!(" keys={keys}"));
        }
        if let Some(map) = text("x-kubernetes-map-type") {
            line.push_str(&format!(" map={map}"));
        }
        if let Some(required) = node.get("required") {
            line.push_str(&format!(" required={required}"));
        }
        if let Some(pattern) = text("pattern") {
            line.push_str(&format!(" pattern={pattern}"));
        }
        if node.get("x-kubernetes-preserve-unknown-fields").is_some() {
            line.push_str(" preserve-unknown-fields");
        }
        lines.push(line);
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            for (name, child) in properties {
                walk(&format!("{path}.{name}"), child, lines);
            }
        }
        if let Some(items) = node.get("items") {
            walk(&format!("{path}[]"), items, lines);
        }
        if let Some(values) = node.get("additionalProperties").filter(|v| v.is_object()) {
            walk(&format!("{path}{{}}"), values, lines);
        }
    }
    let mut lines = Vec::new();
    walk("", schema, &mut lines);
    lines
}

/// What controller-gen emits for a `metav1.LabelSelector` at `at`.
fn label_selector(at: &str) -> Vec<String> {
    [
        ": object map=atomic",
        ".matchExpressions: array list=atomic",
        ".matchExpressions[]: object required=[\"key\",\"operator\"]",
        ".matchExpressions[].key: string",
        ".matchExpressions[].operator: string",
        ".matchExpressions[].values: array list=atomic",
        ".matchExpressions[].values[]: string",
        ".matchLabels: object",
        ".matchLabels{}: string",
    ]
    .iter()
    .map(|line| format!("{at}{line}"))
    .collect()
}

/// The Quantity pattern of kube and controller-gen.
const QUANTITY: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// Facts read off CobaltCore's controller-gen CRD
/// (`operators/keystone/config/crd/bases/keystone.openstack.c5c3.io_keystones.yaml`):
/// the properties of each embedded type, their types and formats, which fields are
/// int-or-string (with `anyOf: [integer, string]`) or Quantities (with kube's pattern),
/// the list and map types and the required fields.
#[test]
fn the_embedded_kubernetes_types_carry_the_schemas_controller_gen_emits() {
    let schema = committed_schema();
    let at = |pointer: &str| {
        schema
            .pointer(&format!("/properties/spec/properties{pointer}"))
            .unwrap_or_else(|| panic!("no spec{pointer}"))
            .clone()
    };
    let quantity = format!(" int-or-string anyOf pattern={QUANTITY}");
    let resources = vec![
        ": object".to_owned(),
        ".claims: array list=map keys=[\"name\"]".into(),
        ".claims[]: object required=[\"name\"]".into(),
        ".claims[].name: string".into(),
        ".claims[].request: string".into(),
        ".limits: object".into(),
        format!(".limits{{}}:{quantity}"),
        ".requests: object".into(),
        format!(".requests{{}}:{quantity}"),
    ];
    let strategy = vec![
        ": object",
        ".rollingUpdate: object",
        ".rollingUpdate.maxSurge: int-or-string anyOf",
        ".rollingUpdate.maxUnavailable: int-or-string anyOf",
        ".type: string",
    ];
    let mut spread: Vec<String> = vec![
        ": array".into(),
        "[]: object required=[\"maxSkew\",\"topologyKey\",\"whenUnsatisfiable\"]".into(),
    ];
    spread.extend(label_selector("[].labelSelector"));
    spread.extend(
        [
            "[].matchLabelKeys: array list=atomic",
            "[].matchLabelKeys[]: string",
            "[].maxSkew: integer int32",
            "[].minDomains: integer int32",
            "[].nodeAffinityPolicy: string",
            "[].nodeTaintsPolicy: string",
            "[].topologyKey: string",
            "[].whenUnsatisfiable: string",
        ]
        .map(String::from),
    );
    let mut ingress: Vec<String> = vec![
        ": array".into(),
        "[]: object required=[\"namespaceSelector\"]".into(),
    ];
    ingress.extend(label_selector("[].namespaceSelector"));
    ingress.extend(label_selector("[].podSelector"));
    let mut egress: Vec<String> = [
        ": array",
        "[]: object",
        "[].ports: array list=atomic",
        "[].ports[]: object",
        "[].ports[].endPort: integer int32",
        "[].ports[].port: int-or-string anyOf",
        "[].ports[].protocol: string",
        "[].to: array list=atomic",
        "[].to[]: object",
        "[].to[].ipBlock: object required=[\"cidr\"]",
        "[].to[].ipBlock.cidr: string",
        "[].to[].ipBlock.except: array list=atomic",
        "[].to[].ipBlock.except[]: string",
    ]
    .map(String::from)
    .to_vec();
    egress.extend(label_selector("[].to[].namespaceSelector"));
    egress.extend(label_selector("[].to[].podSelector"));
    let table: [(&str, Vec<String>); 5] = [
        ("/deployment/properties/resources", resources),
        (
            "/deployment/properties/strategy",
            strategy.into_iter().map(String::from).collect(),
        ),
        ("/deployment/properties/topologySpreadConstraints", spread),
        ("/networkPolicy/properties/ingress", ingress),
        ("/networkPolicy/properties/additionalEgress", egress),
    ];
    for (pointer, expected) in table {
        assert_eq!(outline(&at(pointer)), expected, "spec{pointer}");
    }
}
