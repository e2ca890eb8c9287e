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

/// The messages (or rules) of the CEL rules at `pointer`.
fn rules(schema: &Value, pointer: &str, field: &str) -> Vec<String> {
    schema
        .pointer(pointer)
        .and_then(|n| n.get("x-kubernetes-validations"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| r[field].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn the_committed_crd_is_generated_from_the_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CRD_PATH);
    let generated = wasm_operator_sdk::crd::crd_yaml(
        &crd(),
        "guests/cinderbackupbackends/src/types/",
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
fn the_crd_names_the_cinderbackupbackends_of_cinder_openstack_c5c3_io_v1alpha1() {
    let crd = serde_json::to_value(crd()).expect("encodes");
    assert_eq!(
        crd["metadata"]["name"],
        "cinderbackupbackends.cinder.openstack.c5c3.io"
    );
    assert_eq!(crd["spec"]["names"]["kind"], "CinderBackupBackend");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    assert_eq!(crd["spec"]["versions"][0]["name"], "v1alpha1");
    assert_eq!(
        crd["spec"]["versions"][0]["subresources"]["status"],
        json!({})
    );
}

#[test]
fn the_crd_carries_the_immutables_the_union_and_the_client_prefix_rule_of_section_3_5() {
    let schema = schema();
    let spec = "/properties/spec";
    assert_eq!(
        rules(&schema, spec, "message"),
        [
            "cinderRef is immutable",
            "type is immutable",
            "exactly one backup backend block matching spec.type must be set (type NFS requires spec.nfs, type RBD requires spec.rbd)",
        ]
    );
    assert_eq!(
        rules(&schema, spec, "rule"),
        [
            "self.cinderRef.name == oldSelf.cinderRef.name",
            "self.type == oldSelf.type",
            "(self.type == 'NFS') == has(self.nfs) && (self.type == 'RBD') == has(self.rbd)",
        ]
    );
    assert_eq!(
        rules(
            &schema,
            &format!("{spec}/properties/extraOptions"),
            "message"
        ),
        ["each extraOptions key must be <=256 characters and each value <=1024 characters"]
    );
    assert_eq!(
        rules(
            &schema,
            &format!("{spec}/properties/rbd/properties/user"),
            "rule"
        ),
        ["!self.startsWith('client.')"]
    );
}

#[test]
fn the_crd_carries_the_enums_defaults_patterns_and_bounds_of_section_3_5() {
    let schema = schema();
    let spec = "/properties/spec/properties";
    // (path under spec, keyword, value)
    let table: &[(&str, &str, Value)] = &[
        ("/type", "enum", json!(["NFS", "RBD"])),
        ("/cinderRef/properties/name", "minLength", json!(1)),
        ("/nfs/properties/server", "minLength", json!(1)),
        (
            "/nfs/properties/server",
            "pattern",
            json!("^[A-Za-z0-9.-]+$"),
        ),
        ("/nfs/properties/path", "pattern", json!("^/[!-~]*$")),
        (
            "/nfs/properties/mountOptions",
            "default",
            json!("nfsvers=4.1,soft,timeo=30,retrans=2"),
        ),
        (
            "/nfs/properties/mountOptions",
            "pattern",
            json!("^[^\\n\\r]*$"),
        ),
        ("/rbd/properties/pool", "minLength", json!(1)),
        ("/rbd/properties/pool", "maxLength", json!(64)),
        (
            "/rbd/properties/pool",
            "pattern",
            json!("^[A-Za-z0-9._-]+$"),
        ),
        ("/rbd/properties/user", "maxLength", json!(64)),
        (
            "/rbd/properties/user",
            "pattern",
            json!("^[A-Za-z0-9._-]+$"),
        ),
        ("/rbd/properties/monitors", "minItems", json!(1)),
        ("/rbd/properties/monitors", "maxItems", json!(16)),
        ("/rbd/properties/monitors/items", "maxLength", json!(253)),
        ("/rbd/properties/monitors/items", "minLength", json!(1)),
        (
            "/rbd/properties/monitors/items",
            "pattern",
            json!("^[A-Za-z0-9.-]+(:[0-9]{1,5})?$"),
        ),
        ("/rbd/properties/networks", "minItems", json!(1)),
        ("/rbd/properties/networks", "maxItems", json!(16)),
        (
            "/rbd/properties/networks/items",
            "pattern",
            json!("^([0-9]{1,3}\\.){3}[0-9]{1,3}/[0-9]{1,2}$"),
        ),
        ("/rbd/properties/clusterName", "default", json!("ceph")),
        ("/rbd/properties/clusterName", "maxLength", json!(63)),
        (
            "/rbd/properties/clusterName",
            "pattern",
            json!("^[A-Za-z0-9_-]+$"),
        ),
        (
            "/rbd/properties/keySecretRef/properties/name",
            "maxLength",
            json!(253),
        ),
        (
            "/rbd/properties/keySecretRef/properties/name",
            "pattern",
            json!("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"),
        ),
        ("/fileSize", "default", json!(52428800)),
        ("/fileSize", "minimum", json!(1048576.0)),
        ("/fileSize", "multipleOf", json!(32768.0)),
        ("/fileSize", "format", json!("int64")),
        (
            "/compression",
            "enum",
            json!(["none", "zlib", "bz2", "zstd"]),
        ),
        ("/compression", "default", json!("zlib")),
        ("/extraOptions", "maxProperties", json!(32)),
    ];
    for (path, keyword, expected) in table {
        let pointer = format!("{spec}{path}");
        let node = schema
            .pointer(&pointer)
            .unwrap_or_else(|| panic!("no {pointer}"));
        assert_eq!(node.get(*keyword), Some(expected), "{path} {keyword}");
    }
    let sorted = |pointer: &str| {
        let mut got: Vec<String> = schema
            .pointer(pointer)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        got.sort();
        got
    };
    // (object, its required fields sorted)
    let table: &[(&str, &[&str])] = &[
        ("/required", &["spec"]),
        ("/properties/spec/required", &["cinderRef", "type"]),
        (
            "/properties/spec/properties/nfs/required",
            &["path", "server"],
        ),
        (
            "/properties/spec/properties/rbd/required",
            &["keySecretRef", "monitors", "networks", "pool", "user"],
        ),
    ];
    for (pointer, expected) in table {
        assert_eq!(sorted(pointer), *expected, "{pointer}");
    }
}

#[test]
fn the_crd_prints_ready_type_cinder_and_age() {
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
            ("Cinder", "string", ".spec.cinderRef.name"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ]
    );
}

#[test]
fn the_committed_schema_refuses_what_the_facts_bound() {
    let schema = committed_schema();
    let valid = json!({"apiVersion": "cinder.openstack.c5c3.io/v1alpha1",
        "kind": "CinderBackupBackend", "metadata": {"name": "rbdbk"},
        "spec": {"cinderRef": {"name": "cinder"}, "type": "RBD",
                 "rbd": {"pool": "volumes", "user": "cinder", "monitors": ["mon-a:6789"],
                         "networks": ["10.0.0.0/16"], "clusterName": "ceph",
                         "keySecretRef": {"name": "rbd-key"}},
                 "fileSize": 52428800, "compression": "zlib"}});
    // (pointer under spec, value, the errors expected)
    let table: &[(&str, Value, &[&str])] = &[
        ("/type", json!("RBD"), &[]),
        (
            "/type",
            json!("iSCSI"),
            &["spec.type: Unsupported value: \"iSCSI\": supported values: \"NFS\", \"RBD\""],
        ),
        (
            "/rbd/pool",
            json!("vol umes"),
            &[
                "spec.rbd.pool: Invalid value: \"vol umes\": spec.rbd.pool in body should match '^[A-Za-z0-9._-]+$'",
            ],
        ),
        (
            "/rbd/monitors",
            json!([]),
            &[
                "spec.rbd.monitors: Invalid value: 0: spec.rbd.monitors in body should have at least 1 items",
            ],
        ),
        (
            "/fileSize",
            json!(1024),
            &[
                "spec.fileSize: Invalid value: 1024: spec.fileSize in body should be greater than or equal to 1048576",
            ],
        ),
        (
            "/compression",
            json!("lz4"),
            &[
                "spec.compression: Unsupported value: \"lz4\": supported values: \"none\", \"zlib\", \"bz2\", \"zstd\"",
            ],
        ),
    ];
    assert_eq!(table.iter().filter(|(_, _, e)| e.is_empty()).count(), 1);
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
