//! The tables of the driver blocks' rules: the union, the NFS export, the RBD block.

use serde_json::json;

use crate::admission::tests::{Rows, assert_create_rows, create_errors, nfs, rbd, with};

const UNION: &str = "exactly one backend block matching spec.type must be set (type NFS requires spec.nfs, type RBD requires spec.rbd)";

#[test]
fn a_backend_needs_exactly_the_block_of_its_type() {
    let nfs_block = nfs()["spec"]["nfs"].clone();
    let rbd_block = rbd()["spec"]["rbd"].clone();
    let union_at =
        |field: &str, type_: &str| format!("{field}: Invalid value: \"{type_}\": {UNION}");
    let expected = [
        union_at("spec.nfs", "NFS"),
        union_at("spec.rbd", "NFS"),
        union_at("spec.rbd", "RBD"),
        union_at("spec.nfs", "RBD"),
    ];
    let both_at_rbd = [expected[3].as_str(), expected[2].as_str()];
    let rows: Rows<'_> = vec![
        (vec![], vec![]),
        (vec![("/spec/nfs", json!(null))], vec![expected[0].as_str()]),
        (
            vec![("/spec/rbd", rbd_block.clone())],
            vec![expected[1].as_str()],
        ),
        (vec![("/spec/type", json!("RBD"))], both_at_rbd.to_vec()),
        (
            vec![("/spec/type", json!("RBD")), ("/spec/rbd", rbd_block)],
            vec![expected[3].as_str()],
        ),
    ];
    assert_create_rows(nfs, &rows);
    let both = with(rbd(), &[("/spec/nfs", nfs_block)]);
    assert_eq!(create_errors(both), [expected[3].clone()]);
}

#[test]
fn an_nfs_export_is_printable_ascii_and_its_options_one_line() {
    let path = "spec.nfs.path: Invalid value: \"/exports/a b\": must contain only printable ASCII characters: the value is written verbatim into the NFS shares file and rendered as the backup_share option, where a space cuts the export short and a newline appends a second one, while a non-ASCII space such as U+00A0 survives an ASCII-only whitespace check here and is stripped by the python readers there";
    let nbsp = "spec.nfs.path: Invalid value: \"/exports/a\\u{a0}\": must contain only printable ASCII characters: the value is written verbatim into the NFS shares file and rendered as the backup_share option, where a space cuts the export short and a newline appends a second one, while a non-ASCII space such as U+00A0 survives an ASCII-only whitespace check here and is stripped by the python readers there";
    let options = "spec.nfs.mountOptions: Invalid value: \"soft\\nhard\": must not contain a newline or carriage return: the value is written verbatim into the rendered backend section and the NFS shares file";
    let rows: Rows<'_> = vec![
        (vec![("/spec/nfs/path", json!("/exports/a-b_c~1"))], vec![]),
        (vec![("/spec/nfs/path", json!("/exports/a b"))], vec![path]),
        (
            vec![("/spec/nfs/path", json!("/exports/a\u{a0}"))],
            vec![nbsp],
        ),
        (
            vec![("/spec/nfs/mountOptions", json!("soft\nhard"))],
            vec![options],
        ),
    ];
    assert_create_rows(nfs, &rows);
}

#[test]
fn an_rbd_block_is_refused_a_prefixed_user_a_bad_monitor_port_and_a_network_with_host_bits() {
    let cidr = |i: usize, n: &str| {
        format!(
            "spec.rbd.networks[{i}]: Invalid value: \"{n}\": must be a canonical IPv4 CIDR (a.b.c.d/n with no host bits set, e.g. 10.0.0.0/16)"
        )
    };
    let port = |m: &str| {
        format!(
            "spec.rbd.monitors[0]: Invalid value: \"{m}\": monitor port must be between 1 and 65535"
        )
    };
    let expected = [
        "spec.rbd.user: Invalid value: \"client.cinder\": user is the cephx name without its client. prefix (write cinder, not client.cinder)".to_owned(),
        port("mon-a:0"),
        port("mon-a:70000"),
        cidr(1, "10.96.0.1/12"),
        cidr(0, "10.0.0.0/33"),
        "spec.rbd.pool: Invalid value: \"volumes\\n\": must not contain a newline or carriage return".to_owned(),
    ];
    let rows: Rows<'_> = vec![
        (
            vec![("/spec/rbd/monitors", json!(["mon-a:3300", "10.0.0.5"]))],
            vec![],
        ),
        (
            vec![("/spec/rbd/user", json!("client.cinder"))],
            vec![expected[0].as_str()],
        ),
        (
            vec![("/spec/rbd/monitors", json!(["mon-a:0"]))],
            vec![expected[1].as_str()],
        ),
        (
            vec![("/spec/rbd/monitors", json!(["mon-a:70000"]))],
            vec![expected[2].as_str()],
        ),
        (
            vec![("/spec/rbd/networks", json!(["10.0.0.0/16", "10.96.0.1/12"]))],
            vec![expected[3].as_str()],
        ),
        (
            vec![("/spec/rbd/networks", json!(["10.0.0.0/33"]))],
            vec![expected[4].as_str()],
        ),
        (
            vec![("/spec/rbd/pool", json!("volumes\n"))],
            vec![expected[5].as_str()],
        ),
    ];
    assert_create_rows(rbd, &rows);
}
