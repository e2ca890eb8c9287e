//! The admission tests' fixtures — valid NFS and RBD backends, requests, a table runner —
//! the tables of the webhook's rules, and the tests that write backends through
//! `FakeCluster::admitting`, as the API server calls the webhooks.

use serde_json::{Value, json};
use wasm_operator_sdk::admission::{AdmissionRequest, Operation, UserInfo, Validated};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ApiError, Cluster, ClusterExt, KindRef, ObjectRef};

use super::validate_object;
use crate::CinderBackendReconciler;
use crate::types::{API_VERSION, CinderBackend, KIND, PLURAL};

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

/// A valid NFS backend `nfs-a` of Cinder `cinder`, as stored after defaulting.
pub(super) fn nfs() -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND,
    "metadata": {"name": "nfs-a", "namespace": NAMESPACE},
    "spec": {
        "cinderRef": {"name": "cinder"},
        "type": "NFS",
        "nfs": {"server": "nfs.example.com", "path": "/exports/cinder",
                "mountOptions": "nfsvers=4.1,soft,timeo=30,retrans=2"},
        "imageVolumeCache": {"enabled": true, "maxSizeGB": 200},
        "extraOptions": {"nfs_mount_attempts": "5"}
    }})
}

/// A valid RBD backend `rbd-a` of Cinder `cinder`, as stored after defaulting.
pub(super) fn rbd() -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND,
    "metadata": {"name": "rbd-a", "namespace": NAMESPACE},
    "spec": {
        "cinderRef": {"name": "cinder"},
        "type": "RBD",
        "rbd": {"pool": "volumes", "user": "cinder",
                "monitors": ["mon-a.ceph.svc", "10.0.0.5:6789"],
                "networks": ["10.0.0.0/16", "10.96.0.0/12"], "clusterName": "ceph",
                "keySecretRef": {"name": "rbd-a-key"}},
        "extraOptions": {"rbd_exclusive_cinder_pool": "false"}
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

/// The field errors validating `object` on create finds.
pub(super) fn create_errors(object: Value) -> Vec<String> {
    field_errors(&validate_object(
        &FakeCluster::new(),
        &request(Operation::Create, object, None),
    ))
}

/// Rows of `(changes to a valid backend, the field errors expected)`.
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

#[test]
fn a_backend_is_refused_a_name_cinder_conf_owns_or_a_service_separator() {
    let renamed = |name: &str| vec![("/metadata/name", json!(name))];
    let rows: Rows<'_> = vec![
        (renamed("nfs-fast"), vec![]),
        (
            renamed("DEFAULT"),
            vec![
                "metadata.name: Invalid value: \"DEFAULT\": name must not be \"default\": it names cinder.conf's [DEFAULT] section, so the backend's options would be read as service-wide ones",
            ],
        ),
        (
            renamed("Database"),
            vec![
                "metadata.name: Invalid value: \"Database\": name \"Database\" collides with the [database] section cinder.conf already carries",
            ],
        ),
        (
            renamed("backend_defaults"),
            vec![
                "metadata.name: Invalid value: \"backend_defaults\": name \"backend_defaults\" collides with the [backend_defaults] section cinder.conf already carries",
            ],
        ),
        (
            renamed("nfs@a"),
            vec![
                "metadata.name: Invalid value: \"nfs@a\": name must not contain \"@\" or \"#\": cinder reads them as the separators of a service identity (\"<cinder>@<backend>\") and of a pool within it (\"<host>#<pool>\")",
            ],
        ),
        (
            renamed("nfs#a"),
            vec![
                "metadata.name: Invalid value: \"nfs#a\": name must not contain \"@\" or \"#\": cinder reads them as the separators of a service identity (\"<cinder>@<backend>\") and of a pool within it (\"<host>#<pool>\")",
            ],
        ),
    ];
    assert_create_rows(nfs, &rows);
    for section in super::backend_name::CATALOG_SECTIONS {
        assert_eq!(
            create_errors(with(nfs(), &renamed(section))).len(),
            1,
            "{section}"
        );
    }
}

#[test]
fn a_new_backend_keeps_within_the_name_budget_of_its_service_remove_job() {
    let named = |name: String, cinder: &str| {
        vec![
            ("/metadata/name", json!(name)),
            ("/spec/cinderRef/name", json!(cinder)),
        ]
    };
    let budget = "metadata.name plus spec.cinderRef.name must not exceed 47 characters: detaching this backend runs the \"<cinder>-<name>-service-remove\" Job, whose name is copied into a label value Kubernetes caps at 63 characters";
    let alone = "metadata.name must not exceed 35 characters: detaching this backend records its terminal state under the annotation key \"cobaltcore.c5c3.io/last-service-remove-<name>-job-uid\" on the Cinder, and Kubernetes caps an annotation key's name part at 63 characters";
    let x = |n: usize| "x".repeat(n);
    let at = |name: String, message: &str| {
        format!("metadata.name: Invalid value: \"{name}\": {message}")
    };
    let rows = [
        (named(x(35), &x(12)), vec![]),
        (named(x(35), &x(13)), vec![at(x(35), budget)]),
        (named(x(36), "c"), vec![at(x(36), alone)]),
        (
            named(x(40), &x(8)),
            vec![at(x(40), budget), at(x(40), alone)],
        ),
    ];
    for (changes, expected) in rows {
        assert_eq!(
            create_errors(with(nfs(), &changes)),
            expected,
            "{changes:?}"
        );
    }
    // Both names are immutable: an update (the finalizer's release among them) is never
    // refused for the budget.
    let long = with(nfs(), &named(x(40), &x(8)));
    let validated = validate_object(
        &FakeCluster::new(),
        &request(Operation::Update, long.clone(), Some(long)),
    );
    assert_eq!(field_errors(&validated), Vec::<String>::new());
}

#[test]
fn an_extra_option_past_its_length_is_refused_as_the_schema_rule_words_it() {
    let long = |n: usize| "x".repeat(n);
    let option = |key: String, value: String| {
        Value::Object(serde_json::Map::from_iter([(key, Value::String(value))]))
    };
    let too_long = "spec.extraOptions: Invalid value: \"object\": each extraOptions key must be <=256 characters and each value <=1024 characters";
    let rows: Rows<'_> = vec![
        (
            vec![("/spec/extraOptions", option(long(256), long(1024)))],
            vec![],
        ),
        (
            vec![("/spec/extraOptions", option(long(257), "1".into()))],
            vec![too_long],
        ),
        (
            vec![(
                "/spec/extraOptions",
                option("nfs_mount_attempts".into(), long(1025)),
            )],
            vec![too_long],
        ),
    ];
    assert_create_rows(nfs, &rows);
}

#[test]
fn an_update_keeps_the_cinder_and_the_type_and_may_change_the_rest() {
    let update = |changes: &[(&str, Value)]| {
        field_errors(&validate_object(
            &FakeCluster::new(),
            &request(Operation::Update, with(nfs(), changes), Some(nfs())),
        ))
    };
    // (changes, errors)
    let table: Rows<'_> = vec![
        (
            vec![("/spec/nfs/server", json!("nfs2.example.com"))],
            vec![],
        ),
        (
            vec![("/spec/cinderRef/name", json!("cinder2"))],
            vec!["spec: Invalid value: \"object\": cinderRef is immutable"],
        ),
        (
            vec![
                ("/spec/type", json!("RBD")),
                ("/spec/nfs", json!(null)),
                ("/spec/rbd", rbd()["spec"]["rbd"].clone()),
                ("/spec/extraOptions", json!(null)),
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
fn a_backend_written_through_admission_is_stored_with_its_defaults() {
    let cluster = FakeCluster::new().admitting::<CinderBackendReconciler>();
    cluster
        .create(&with(nfs(), &[("/spec/nfs/mountOptions", json!(null))]))
        .expect("admitted");
    cluster
        .create(&with(rbd(), &[("/spec/rbd/clusterName", json!(null))]))
        .expect("admitted");
    let raw = cluster.object(&stored("nfs-a")).expect("stored");
    assert_eq!(
        raw["spec"]["nfs"]["mountOptions"],
        "nfsvers=4.1,soft,timeo=30,retrans=2"
    );
    let written: CinderBackend = cluster
        .get_typed(Some(NAMESPACE), "rbd-a")
        .expect("reads")
        .expect("stored");
    assert_eq!(written.spec.rbd.expect("an rbd block").cluster_name, "ceph");
    let raw = cluster.object(&stored("rbd-a")).expect("stored");
    assert_eq!(raw["spec"]["rbd"]["clusterName"], "ceph");
}

#[test]
fn a_reserved_name_is_refused_with_kube_apiserver_s_invalid_message() {
    let cluster = FakeCluster::new().admitting::<CinderBackendReconciler>();
    let refused = cluster
        .create(&with(nfs(), &[("/metadata/name", json!("nova"))]))
        .expect_err("refused");
    assert_eq!(
        refused,
        ApiError::Invalid(
            "CinderBackend.cinder.openstack.c5c3.io \"nova\" is invalid: metadata.name: \
             Invalid value: \"nova\": name \"nova\" collides with the [nova] section \
             cinder.conf already carries"
                .into()
        )
    );
    assert!(cluster.object(&stored("nova")).is_none());
}

#[test]
fn an_update_of_the_cinder_ref_is_refused_through_admission() {
    let cluster = FakeCluster::new().admitting::<CinderBackendReconciler>();
    cluster.create(&nfs()).expect("admitted");
    let moved = with(nfs(), &[("/spec/cinderRef/name", json!("cinder2"))]);
    let refused = cluster.apply(&moved, None).expect_err("refused");
    assert_eq!(
        refused,
        ApiError::Invalid(
            "CinderBackend.cinder.openstack.c5c3.io \"nfs-a\" is invalid: spec: Invalid \
             value: \"object\": cinderRef is immutable"
                .into()
        )
    );
}

#[test]
fn a_backend_is_deleted_without_validation() {
    let cluster = FakeCluster::new().admitting::<CinderBackendReconciler>();
    cluster.create(&nfs()).expect("admitted");
    cluster
        .delete(&stored("nfs-a"), wasm_operator_sdk::Propagation::Background)
        .expect("deleted");
    assert!(cluster.object(&stored("nfs-a")).is_none());
}
