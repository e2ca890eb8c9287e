use serde_json::{Value, json};

use super::{COMMON, NFS, RBD};
use crate::admission::tests::{Rows, assert_create_rows, create_errors, nfs, rbd, with};

fn options(map: Value) -> Vec<(&'static str, Value)> {
    vec![("/spec/extraOptions", map)]
}

#[test]
fn extra_options_refuse_bad_names_owned_options_and_line_breaks() {
    let rows: Rows<'_> = vec![
        (options(json!({"nfs_mount_attempts": "5"})), vec![]),
        (
            options(json!({"": "x"})),
            vec!["spec.extraOptions: Invalid value: \"\": option name must not be empty"],
        ),
        (
            options(json!({"volume_driver ": "x"})),
            vec![
                "spec.extraOptions[volume_driver ]: Invalid value: \"volume_driver \": option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore)",
            ],
        ),
        (
            options(json!({"nfs_shares_config": "/tmp/x"})),
            vec![
                "spec.extraOptions[nfs_shares_config]: Invalid value: \"/tmp/x\": option \"nfs_shares_config\" is owned by spec.nfs.server and spec.nfs.path and must not be set via extraOptions",
            ],
        ),
        (
            options(json!({"nfs_mount_attempts": "5\nvolume_driver = x"})),
            vec![
                "spec.extraOptions[nfs_mount_attempts]: Invalid value: \"5\\nvolume_driver = x\": value must not contain newline or carriage-return characters",
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
    // (valid backend, the options refused, the options of the other type, allowed)
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
        [
            "volume_driver",
            "volume_backend_name",
            "backend_host",
            "image_volume_cache_enabled",
            "image_volume_cache_max_size_gb",
            "image_volume_cache_max_count"
        ]
    );
    assert_eq!(
        keys(NFS),
        [
            "nfs_shares_config",
            "nfs_mount_point_base",
            "nfs_mount_options",
            "nas_secure_file_operations",
            "nas_secure_file_permissions",
            "nfs_snapshot_support",
            "nfs_sparsed_volumes",
            "nfs_qcow2_volumes"
        ]
    );
    assert_eq!(
        keys(RBD),
        [
            "rbd_pool",
            "rbd_user",
            "rbd_cluster_name",
            "rbd_secret_uuid",
            "rbd_ceph_conf",
            "rbd_keyring_conf"
        ]
    );
}
