use serde_json::{Value, json};

use super::{COMMON, NFS, RBD};
use crate::admission::tests::{Rows, assert_create_rows, create_errors, nfs, rbd, with};

fn options(map: Value) -> Vec<(&'static str, Value)> {
    vec![("/spec/extraOptions", map)]
}

#[test]
fn extra_options_refuse_bad_names_owned_options_and_line_breaks() {
    let rows: Rows<'_> = vec![
        (options(json!({"backup_mount_attempts": "5"})), vec![]),
        (
            options(json!({"": "x"})),
            vec!["spec.extraOptions: Invalid value: \"\": option name must not be empty"],
        ),
        (
            options(json!({"backup_driver ": "x"})),
            vec![
                "spec.extraOptions[backup_driver ]: Invalid value: \"backup_driver \": option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore)",
            ],
        ),
        (
            options(json!({"backup_share": "/tmp/x"})),
            vec![
                "spec.extraOptions[backup_share]: Invalid value: \"/tmp/x\": option \"backup_share\" is owned by spec.nfs.server and spec.nfs.path and must not be set via extraOptions",
            ],
        ),
        (
            options(json!({"backup_mount_attempts": "5\nbackup_driver = x"})),
            vec![
                "spec.extraOptions[backup_mount_attempts]: Invalid value: \"5\\nbackup_driver = x\": value must not contain newline or carriage-return characters",
            ],
        ),
    ];
    assert_create_rows(nfs, &rows);
}

#[test]
fn each_type_refuses_the_common_options_and_its_own_and_no_other_type_s() {
    let refused = |option: &str, owner: &str| {
        vec![format!(
            "spec.extraOptions[{option}]: Invalid value: \"v\": option {option:?} is owned by {owner} and must not be set via extraOptions"
        )]
    };
    type Options = &'static [(&'static str, &'static str)];
    type Row = (
        fn() -> Value,
        Vec<&'static (&'static str, &'static str)>,
        Options,
    );
    // (valid target, the options refused, the options of the other type, allowed)
    let table: [Row; 2] = [
        (nfs, COMMON.iter().chain(NFS).collect(), RBD),
        (rbd, COMMON.iter().chain(RBD).collect(), NFS),
    ];
    for (valid, owned, other) in table {
        for (option, owner) in owned {
            let got = create_errors(with(valid(), &options(json!({ *option: "v" }))));
            assert_eq!(got, refused(option, owner));
        }
        for (option, _) in other {
            let got = create_errors(with(valid(), &options(json!({ *option: "v" }))));
            assert_eq!(got, Vec::<String>::new(), "{option}");
        }
    }
    fn keys(list: &[(&'static str, &'static str)]) -> Vec<&'static str> {
        list.iter().map(|(k, _)| *k).collect()
    }
    assert_eq!(
        keys(COMMON),
        ["backup_driver", "backup_use_same_host", "host"]
    );
    assert_eq!(
        keys(NFS),
        [
            "backup_share",
            "backup_mount_point_base",
            "backup_mount_options",
            "backup_file_size",
            "backup_compression_algorithm"
        ]
    );
    assert_eq!(
        keys(RBD),
        ["backup_ceph_conf", "backup_ceph_pool", "backup_ceph_user"]
    );
}
