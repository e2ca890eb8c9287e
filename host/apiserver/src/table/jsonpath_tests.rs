use serde_json::{Value, json};

use super::JsonPath;

fn object() -> Value {
    json!({
        "metadata": {"name": "w", "labels": {"app.kubernetes.io/name": "web"}},
        "spec": {"size": 3, "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]},
        "status": {"conditions": [
            {"type": "Progressing", "status": "False", "observedGeneration": 1},
            {"type": "Ready", "status": "True", "observedGeneration": 2},
        ]},
    })
}

#[test]
fn each_supported_path_selects_what_client_go_selects() {
    let cases: &[(&str, Value)] = &[
        (".spec.size", json!([3])),
        (".spec.ports[0].name", json!(["http"])),
        (".spec.ports[-1].port", json!([443])),
        (".spec.ports[*].port", json!([80, 443])),
        (".spec.ports.*.name", json!(["http", "https"])),
        (".spec.ports[0:1].name", json!(["http"])),
        (".spec.ports[1:].name", json!(["https"])),
        (".spec['size']", json!([3])),
        (
            ".status.conditions[?(@.type==\"Ready\")].status",
            json!(["True"]),
        ),
        (
            ".status.conditions[?(@.type=='Ready')].status",
            json!(["True"]),
        ),
        (
            ".status.conditions[?(@.type == 'Ready')].status",
            json!(["True"]),
        ),
        (
            ".status.conditions[?(@.type!=\"Ready\")].type",
            json!(["Progressing"]),
        ),
        (
            ".status.conditions[?(@.observedGeneration>1)].type",
            json!(["Ready"]),
        ),
        (
            ".status.conditions[?(@.observedGeneration<=1)].type",
            json!(["Progressing"]),
        ),
        (
            ".status.conditions[?(@.type)].type",
            json!(["Progressing", "Ready"]),
        ),
        (
            ".metadata.labels.app\\.kubernetes\\.io/name",
            json!(["web"]),
        ),
        ("..name", json!(["w", "http", "https"])),
    ];
    for (path, expected) in cases {
        let parsed = JsonPath::parse(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let found: Vec<Value> = parsed.find(&object()).into_iter().cloned().collect();
        assert_eq!(&Value::Array(found), expected, "{path}");
    }
}

#[test]
fn a_path_that_finds_nothing_selects_nothing() {
    for path in [
        ".spec.missing",
        ".spec.ports[5].name",
        ".spec.size.deeper",
        ".spec.ports.name",
        ".status.conditions[?(@.type==\"Missing\")].status",
        ".status.conditions[?(@.type==1)].status",
    ] {
        let parsed = JsonPath::parse(path).expect("parses");
        assert!(parsed.find(&object()).is_empty(), "{path}");
    }
}

#[test]
fn the_root_path_selects_the_object() {
    let parsed = JsonPath::parse(".").expect("parses");
    assert_eq!(parsed.find(&object()), vec![&object()]);
}

#[test]
fn malformed_paths_do_not_parse_and_say_where() {
    let cases = [
        (".spec.ports[", "bad index at 12"),
        (".spec.ports[0", "missing ] at 13"),
        (".spec.ports[x]", "bad index at 12"),
        (
            ".status.conditions[?(@.type==\"Ready\"]",
            "unterminated filter",
        ),
        (
            ".status.conditions[?(@.type==Ready)]",
            "bad literal \"\" at 29",
        ),
        (
            ".status.conditions[?(.type)]",
            "a filter must start with ?(@ at 19",
        ),
        (".spec..", "missing field name at 7"),
        ("spec.size", "unexpected 's' at 0"),
        ("", "empty path"),
    ];
    for (path, reason) in cases {
        let error = JsonPath::parse(path).expect_err(path);
        assert!(
            error.reason.starts_with(reason),
            "{path}: {} (wanted {reason})",
            error.reason
        );
        assert_eq!(error.path, path);
    }
}
