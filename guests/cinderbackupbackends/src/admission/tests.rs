//! The admission tests' fixtures — valid NFS and RBD targets, requests, a table runner —
//! the tables of the webhook's rules, and the tests that write targets through
//! `FakeCluster::admitting`, as the API server calls the webhooks.

use serde_json::{Value, json};
use wasm_operator_sdk::admission::{AdmissionRequest, Operation, UserInfo, Validated};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ApiError, Cluster, ClusterExt, KindRef, ObjectRef};

use super::validate_object;
use crate::CinderBackupBackendReconciler;
use crate::types::{API_VERSION, CinderBackupBackend, KIND, PLURAL};

/// The namespace of the fixtures.
pub(super) const NAMESPACE: &str = "openstack";

fn kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        plural: PLURAL.into(),
        namespaced: true,
    }
}

/// A valid NFS target `nfsbk` of Cinder `cinder`, as stored after defaulting.
pub(super) fn nfs() -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND,
    "metadata": {"name": "nfsbk", "namespace": NAMESPACE},
    "spec": {
        "cinderRef": {"name": "cinder"},
        "type": "NFS",
        "nfs": {"server": "nfs.example.com", "path": "/exports/backup",
                "mountOptions": "nfsvers=4.1,soft,timeo=30,retrans=2"},
        "fileSize": 52428800,
        "compression": "zlib",
        "extraOptions": {"backup_mount_attempts": "5"}
    }})
}

/// A valid RBD target `rbdbk` of Cinder `cinder`, as stored after defaulting.
pub(super) fn rbd() -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND,
    "metadata": {"name": "rbdbk", "namespace": NAMESPACE},
    "spec": {
        "cinderRef": {"name": "cinder"},
        "type": "RBD",
        "rbd": {"pool": "backups", "user": "cinder-backup",
                "monitors": ["mon-a.ceph.svc", "10.0.0.5:6789"],
                "networks": ["10.0.0.0/16"], "clusterName": "ceph",
                "keySecretRef": {"name": "rbdbk-key"}},
        "fileSize": 52428800,
        "compression": "zlib",
        "extraOptions": {"backup_ceph_chunk_size": "134217728"}
    }})
}

/// `object` with each `(pointer, value)` set, creating objects on the way; a `null` value
/// removes the field.
pub(super) fn with(mut object: Value, changes: &[(&str, Value)]) -> Value {
    for (pointer, value) in changes {
        let (parent, last) = pointer.rsplit_once('/').expect("a pointer");
        let mut node = &mut object;
        for part in parent.split('/').skip(1) {
            node = match node {
                Value::Object(map) => map.entry(part.to_owned()).or_insert_with(|| json!({})),
                other => panic!("no object at {part}: {other}"),
            };
        }
        let map = node.as_object_mut().expect("an object at the parent");
        if value.is_null() {
            map.remove(last);
        } else {
            map.insert(last.to_owned(), value.clone());
        }
    }
    object
}

/// An admission request of `operation` for `object` (`old` the stored one).
pub(super) fn request(operation: Operation, object: Value, old: Option<Value>) -> AdmissionRequest {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    AdmissionRequest {
        operation,
        kind: kind(),
        namespace: Some(NAMESPACE.into()),
        name,
        object: Some(object),
        old_object: old,
        user: UserInfo::default(),
        dry_run: false,
    }
}

/// The field errors of a validation, as `field: message`.
pub(super) fn field_errors(validated: &Validated) -> Vec<String> {
    validated
        .denial
        .iter()
        .flat_map(|d| d.fields.iter().map(ToString::to_string))
        .collect()
}

/// The field errors validating `object` on create finds, with `siblings` stored.
pub(super) fn create_errors_among(siblings: &[Value], object: Value) -> Vec<String> {
    let cluster = siblings
        .iter()
        .fold(FakeCluster::new(), |c, s| c.with(s.clone()));
    field_errors(&validate_object(
        &cluster,
        &request(Operation::Create, object, None),
    ))
}

/// The field errors validating `object` on create finds, alone in the namespace.
pub(super) fn create_errors(object: Value) -> Vec<String> {
    create_errors_among(&[], object)
}

/// Rows of `(changes to a valid target, the field errors expected)`.
pub(super) type Rows<'a> = Vec<(Vec<(&'a str, Value)>, Vec<&'a str>)>;

/// Runs rows on create against `valid` changed. Exactly one row is valid.
pub(super) fn assert_create_rows(valid: fn() -> Value, rows: &Rows<'_>) {
    let count = rows.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!(count, 1, "a table has exactly one valid row");
    for (changes, expected) in rows {
        let got = create_errors(with(valid(), changes));
        assert_eq!(got, *expected, "{changes:?}");
    }
}

const UNION: &str = "exactly one backup backend block matching spec.type must be set (type NFS requires spec.nfs, type RBD requires spec.rbd)";

#[test]
fn a_target_needs_exactly_the_block_of_its_type() {
    let rbd_block = rbd()["spec"]["rbd"].clone();
    let union_at =
        |field: &str, type_: &str| format!("{field}: Invalid value: \"{type_}\": {UNION}");
    let no_nfs = union_at("spec.nfs", "NFS");
    let extra_rbd = union_at("spec.rbd", "NFS");
    let rows: Rows<'_> = vec![
        (vec![], vec![]),
        (vec![("/spec/nfs", json!(null))], vec![&no_nfs]),
        (vec![("/spec/rbd", rbd_block)], vec![&extra_rbd]),
    ];
    assert_create_rows(nfs, &rows);
    let no_rbd = with(rbd(), &[("/spec/rbd", json!(null))]);
    assert_eq!(create_errors(no_rbd), [union_at("spec.rbd", "RBD")]);
}

#[test]
fn the_chunk_size_and_the_compression_are_what_cinder_accepts() {
    let at =
        |value: i64, message: &str| format!("spec.fileSize: Invalid value: {value}: {message}");
    let too_small = at(1015808, "fileSize must be at least 1048576 bytes");
    let unaligned = at(
        1048577,
        "fileSize must be a multiple of 32768 bytes (the block size cinder hashes backup chunks in)",
    );
    let lz4 = "spec.compression: Unsupported value: \"lz4\": supported values: \"none\", \"zlib\", \"bz2\", \"zstd\"";
    let rows: Rows<'_> = vec![
        (
            vec![
                ("/spec/fileSize", json!(1081344)),
                ("/spec/compression", json!("bz2")),
            ],
            vec![],
        ),
        (vec![("/spec/fileSize", json!(1015808))], vec![&too_small]),
        (vec![("/spec/fileSize", json!(1048577))], vec![&unaligned]),
        (vec![("/spec/compression", json!("lz4"))], vec![lz4]),
    ];
    assert_create_rows(nfs, &rows);
}

#[test]
fn an_nfs_export_is_printable_ascii_and_its_options_one_line() {
    let path = "spec.nfs.path: Invalid value: \"/exports/a b\": must contain only printable ASCII characters: the value is written verbatim into the NFS shares file and rendered as the backup_share option, where a space cuts the export short and a newline appends a second one, while a non-ASCII space such as U+00A0 survives an ASCII-only whitespace check here and is stripped by the python readers there";
    let options = "spec.nfs.mountOptions: Invalid value: \"soft\\rhard\": must not contain a newline or carriage return: the value is written verbatim into the rendered backend section and the NFS shares file";
    let rows: Rows<'_> = vec![
        (vec![("/spec/nfs/path", json!("/exports/b~1"))], vec![]),
        (vec![("/spec/nfs/path", json!("/exports/a b"))], vec![path]),
        (
            vec![("/spec/nfs/mountOptions", json!("soft\rhard"))],
            vec![options],
        ),
    ];
    assert_create_rows(nfs, &rows);
}

#[test]
fn an_rbd_block_is_refused_a_prefixed_user_and_a_network_with_host_bits() {
    let rows: Rows<'_> = vec![
        (
            vec![("/spec/rbd/networks", json!(["192.168.0.0/24"]))],
            vec![],
        ),
        (
            vec![("/spec/rbd/user", json!("client.backup"))],
            vec![
                "spec.rbd.user: Invalid value: \"client.backup\": user is the cephx name without its client. prefix (write cinder, not client.cinder)",
            ],
        ),
        (
            vec![("/spec/rbd/networks", json!(["192.168.0.1/24"]))],
            vec![
                "spec.rbd.networks[0]: Invalid value: \"192.168.0.1/24\": must be a canonical IPv4 CIDR (a.b.c.d/n with no host bits set, e.g. 10.0.0.0/16)",
            ],
        ),
    ];
    assert_create_rows(rbd, &rows);
}

#[test]
fn an_update_keeps_the_cinder_and_the_type_and_may_change_the_rest() {
    let update = |changes: &[(&str, Value)]| {
        field_errors(&validate_object(
            &FakeCluster::new().with(nfs()),
            &request(Operation::Update, with(nfs(), changes), Some(nfs())),
        ))
    };
    // (changes, errors)
    let table: Rows<'_> = vec![
        (vec![("/spec/compression", json!("none"))], vec![]),
        (
            vec![("/spec/cinderRef/name", json!("cinder2"))],
            vec!["spec: Invalid value: \"object\": cinderRef is immutable"],
        ),
        (
            vec![
                ("/spec/type", json!("RBD")),
                ("/spec/nfs", json!(null)),
                ("/spec/rbd", rbd()["spec"]["rbd"].clone()),
            ],
            vec!["spec: Invalid value: \"object\": type is immutable"],
        ),
    ];
    for (changes, expected) in table {
        assert_eq!(update(&changes), expected, "{changes:?}");
    }
}

fn stored(name: &str) -> ObjectRef {
    ObjectRef {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        namespace: Some(NAMESPACE.into()),
        name: name.into(),
    }
}

#[test]
fn a_target_written_through_admission_is_stored_with_its_defaults() {
    let cluster = FakeCluster::new().admitting::<CinderBackupBackendReconciler>();
    let minimal = with(
        nfs(),
        &[
            ("/spec/fileSize", json!(null)),
            ("/spec/compression", json!(null)),
        ],
    );
    cluster.create(&minimal).expect("admitted");
    let raw = cluster.object(&stored("nfsbk")).expect("stored");
    assert_eq!(raw["spec"]["fileSize"], 52428800);
    assert_eq!(raw["spec"]["compression"], "zlib");
    let written: CinderBackupBackend = cluster
        .get_typed(Some(NAMESPACE), "nfsbk")
        .expect("reads")
        .expect("stored");
    assert_eq!(written.spec.file_size, Some(52428800));
}

#[test]
fn a_second_target_of_a_cinder_is_refused_with_kube_apiserver_s_invalid_message() {
    let cluster = FakeCluster::new().admitting::<CinderBackupBackendReconciler>();
    cluster
        .create(&nfs())
        .expect("the first target is admitted");
    let refused = cluster.create(&rbd()).expect_err("refused");
    assert_eq!(
        refused,
        ApiError::Invalid(
            "CinderBackupBackend.cinder.openstack.c5c3.io \"rbdbk\" is invalid: \
             spec.cinderRef: Forbidden: Cinder \"cinder\" already has CinderBackupBackend \
             \"nfsbk\" attached"
                .into()
        )
    );
    assert!(cluster.object(&stored("rbdbk")).is_none());
    let elsewhere = with(rbd(), &[("/spec/cinderRef/name", json!("cinder2"))]);
    cluster
        .create(&elsewhere)
        .expect("a target of another Cinder is admitted");
}

#[test]
fn a_target_is_deleted_without_validation() {
    let cluster = FakeCluster::new().admitting::<CinderBackupBackendReconciler>();
    cluster.create(&nfs()).expect("admitted");
    cluster
        .delete(&stored("nfsbk"), wasm_operator_sdk::Propagation::Background)
        .expect("deleted");
    assert!(cluster.object(&stored("nfsbk")).is_none());
}
