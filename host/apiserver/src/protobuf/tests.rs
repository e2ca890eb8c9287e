use serde_json::json;

use super::{DecodeError, decode};

/// A field's bytes on the wire (varint or length-delimited).
enum W<'a> {
    V(u64),
    B(&'a [u8]),
}

fn varint(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn message(fields: &[(u64, W<'_>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (number, payload) in fields {
        match payload {
            W::V(n) => {
                varint(number << 3, &mut out);
                varint(*n, &mut out);
            }
            W::B(bytes) => {
                varint((number << 3) | 2, &mut out);
                varint(bytes.len() as u64, &mut out);
                out.extend_from_slice(bytes);
            }
        }
    }
    out
}

fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let type_meta = message(&[
        (1, W::B(api_version.as_bytes())),
        (2, W::B(kind.as_bytes())),
    ]);
    let mut out = b"k8s\0".to_vec();
    out.extend(message(&[(1, W::B(&type_meta)), (2, W::B(raw))]));
    out
}

fn entry(key: &str, value: &[u8]) -> Vec<u8> {
    message(&[(1, W::B(key.as_bytes())), (2, W::B(value))])
}

/// ObjectMeta as Go writes it: every non-pointer field, empty or not.
fn meta(name: &str) -> Vec<u8> {
    let zero_time = message(&[(1, W::V(0)), (2, W::V(0))]);
    message(&[
        (1, W::B(name.as_bytes())),
        (2, W::B(b"")),
        (3, W::B(b"")),
        (4, W::B(b"")),
        (5, W::B(b"")),
        (6, W::B(b"")),
        (7, W::V(0)),
        (8, W::B(&zero_time)),
        (11, W::B(&entry("app", b"web"))),
    ])
}

#[test]
fn a_config_map_reads_as_the_json_a_client_would_send() {
    let raw = message(&[
        (1, W::B(&meta("settings"))),
        (2, W::B(&entry("a", b"1"))),
        (2, W::B(&entry("b", b"2"))),
        (3, W::B(&entry("bin", &[0, 159, 255]))),
        (4, W::V(1)),
    ]);
    let object = decode(&envelope("v1", "ConfigMap", &raw)).expect("decodes");
    assert_eq!(
        object,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "labels": {"app": "web"}},
            "data": {"a": "1", "b": "2"}, "binaryData": {"bin": "AJ//"}, "immutable": true})
    );
}

#[test]
fn secret_data_is_base64_and_an_int_or_string_keeps_its_type() {
    let raw = message(&[
        (1, W::B(&meta("creds"))),
        (2, W::B(&entry("password", b"hunter2"))),
        (3, W::B(b"Opaque")),
    ]);
    let secret = decode(&envelope("v1", "Secret", &raw)).expect("decodes");
    assert_eq!(secret["data"], json!({"password": "aHVudGVyMg=="}));
    assert_eq!(secret["type"], "Opaque");

    let by_number = message(&[(1, W::V(0)), (2, W::V(8080))]);
    let by_name = message(&[(1, W::V(1)), (3, W::B(b"http"))]);
    let port = |target: &[u8]| {
        message(&[
            (1, W::B(b"web")),
            (2, W::B(b"TCP")),
            (3, W::V(80)),
            (4, W::B(target)),
        ])
    };
    let spec = message(&[
        (1, W::B(&port(&by_number))),
        (1, W::B(&port(&by_name))),
        (4, W::B(b"ClusterIP")),
    ]);
    let raw = message(&[(1, W::B(&meta("web"))), (2, W::B(&spec))]);
    let service = decode(&envelope("v1", "Service", &raw)).expect("decodes");
    assert_eq!(
        service["spec"],
        json!({"type": "ClusterIP", "ports": [
            {"name": "web", "protocol": "TCP", "port": 80, "targetPort": 8080},
            {"name": "web", "protocol": "TCP", "port": 80, "targetPort": "http"}]})
    );
}

#[test]
fn what_cannot_be_read_is_named() {
    let config_map = envelope("v1", "ConfigMap", &message(&[(1, W::B(&meta("a")))]));
    let cut = &config_map[..config_map.len() - 3];
    let deployment = envelope("apps/v1", "Deployment", b"");
    let no_kind = envelope("v1", "", b"");
    let cases: [(&[u8], Result<&str, DecodeError>); 5] = [
        (&config_map, Ok("a")),
        (b"{\"kind\": \"ConfigMap\"}", Err(DecodeError::NoEnvelope)),
        (&no_kind, Err(DecodeError::NoKind)),
        (
            &deployment,
            Err(DecodeError::Unsupported {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
            }),
        ),
        (cut, Err(DecodeError::Malformed("a length past the body"))),
    ];
    for (row, (body, expected)) in cases.into_iter().enumerate() {
        let name = decode(body).map(|o| o["metadata"]["name"].as_str().map(str::to_owned));
        assert_eq!(name, expected.map(|n| Some(n.to_owned())), "row {row}");
    }
}

#[test]
fn an_empty_string_in_a_list_is_kept_as_the_core_group() {
    let rule = message(&[(1, W::B(b"get")), (2, W::B(b"")), (3, W::B(b"configmaps"))]);
    let raw = message(&[(1, W::B(&meta("reader"))), (2, W::B(&rule))]);
    let role = decode(&envelope("rbac.authorization.k8s.io/v1", "Role", &raw)).expect("decodes");
    assert_eq!(
        role["rules"],
        json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}])
    );
}
