//! The admission tests' fixtures — a valid backend, requests, a table runner — the table
//! of the spec-wide rules (union, store name, CEL), and the tests that write backends
//! through `FakeCluster::admitting`, as the API server calls the webhooks.

use serde_json::{Value, json};
use wasm_operator_sdk::admission::{AdmissionRequest, Operation, UserInfo, Validated};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ApiError, Cluster, ClusterExt, KindRef, ObjectRef};

use super::validate_object;
use crate::GlanceBackendReconciler;
use crate::types::{API_VERSION, BucketUrlFormat, GlanceBackend, KIND, PLURAL};

/// The namespace of the fixtures.
pub(super) const NAMESPACE: &str = "openstack";

/// The backend kind.
fn kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        plural: PLURAL.into(),
        namespaced: true,
    }
}

/// A valid S3 backend `images` of Glance `glance`, the default store, as stored after
/// defaulting.
pub(super) fn s3() -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND,
    "metadata": {"name": "images", "namespace": NAMESPACE},
    "spec": {
        "glanceRef": {"name": "glance"},
        "type": "S3",
        "isDefault": true,
        "s3": {
            "host": "https://s3.example.com",
            "bucket": "images",
            "credentialsSecretRef": {"name": "images-s3"},
            "bucketURLFormat": "path",
            "region": "eu-de-1",
            "largeObjectSize": 100,
            "largeObjectChunkSize": 10
        },
        "extraOptions": {"s3_store_thread_pools": "10"}
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

/// Rows of `(changes to the valid backend, the field errors expected)`.
pub(super) type Rows<'a> = Vec<(Vec<(&'a str, Value)>, Vec<&'a str>)>;

/// Runs rows on create, alone in the namespace. Exactly one row is valid.
pub(super) fn assert_create_rows(rows: &Rows<'_>) {
    let valid = rows.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!(valid, 1, "a table has exactly one valid row");
    for (changes, expected) in rows {
        let got = create_errors_among(&[], with(s3(), changes));
        assert_eq!(got, *expected, "{changes:?}");
    }
}

#[test]
fn a_backend_is_refused_a_missing_block_and_a_reserved_store_name() {
    let renamed = |name: &str| vec![("/metadata/name", json!(name))];
    let prefix = "metadata.name: Invalid value: ";
    let rows: Rows<'_> = vec![
        (vec![], vec![]),
        (
            vec![("/spec/s3", json!(null))],
            vec![
                "spec.s3: Invalid value: \"S3\": exactly one backend block matching spec.type must be set (type S3 requires spec.s3)",
            ],
        ),
        (
            renamed("default"),
            vec![
                "metadata.name: Invalid value: \"default\": name \"default\" collides with the reserved or operator-managed Glance store section of the same name",
            ],
        ),
        (
            renamed("DEFAULT"),
            vec![
                "metadata.name: Invalid value: \"DEFAULT\": name \"DEFAULT\" collides with the reserved or operator-managed Glance store section of the same name",
            ],
        ),
        (
            renamed("Glance_Store"),
            vec![
                "metadata.name: Invalid value: \"Glance_Store\": name \"Glance_Store\" collides with the reserved or operator-managed Glance store section of the same name",
            ],
        ),
        (
            renamed("os_glance_tasks_store"),
            vec![
                "metadata.name: Invalid value: \"os_glance_tasks_store\": name \"os_glance_tasks_store\" collides with the reserved or operator-managed Glance store section of the same name",
            ],
        ),
        (
            renamed("os-glance-cache"),
            vec![
                "metadata.name: Invalid value: \"os-glance-cache\": name must not use the reserved \"os_glance_\" / \"os-glance-\" store-section prefix (Glance owns that namespace for its staging and tasks stores)",
            ],
        ),
        (
            renamed("OS_GLANCE_x"),
            vec![
                "metadata.name: Invalid value: \"OS_GLANCE_x\": name must not use the reserved \"os_glance_\" / \"os-glance-\" store-section prefix (Glance owns that namespace for its staging and tasks stores)",
            ],
        ),
    ];
    assert_create_rows(&rows);
    // Every reserved name, each refused.
    for name in super::store_name::RESERVED {
        let got = create_errors_among(&[], with(s3(), &renamed(name)));
        assert_eq!(got.len(), 1, "{name}");
        assert!(got[0].starts_with(prefix), "{got:?}");
    }
    // Near misses are store names like any other.
    for name in ["defaults", "my-default", "os-glance", "glance-store"] {
        assert_eq!(
            create_errors_among(&[], with(s3(), &renamed(name))),
            Vec::<String>::new(),
            "{name}"
        );
    }
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
                option("s3_store_thread_pools".into(), long(1025)),
            )],
            vec![too_long],
        ),
    ];
    assert_create_rows(&rows);
}

#[test]
fn an_update_keeps_the_glance_and_the_type_and_may_change_the_rest() {
    let update = |changes: &[(&str, Value)]| {
        field_errors(&validate_object(
            &FakeCluster::new(),
            &request(Operation::Update, with(s3(), changes), Some(s3())),
        ))
    };
    // (changes, errors)
    let table: Rows<'_> = vec![
        (
            vec![
                ("/spec/isDefault", json!(false)),
                ("/spec/s3/bucket", json!("other")),
                ("/spec/s3/bucketURLFormat", json!("virtual")),
            ],
            vec![],
        ),
        (
            vec![("/spec/glanceRef/name", json!("glance2"))],
            vec!["spec: Invalid value: \"object\": glanceRef is immutable"],
        ),
    ];
    for (changes, expected) in table {
        assert_eq!(update(&changes), expected, "{changes:?}");
    }
    // The type has one value; a stored object of another (written before an upgrade, or
    // past the schema) does not read, and its update is refused naming the decode error.
    let old = with(s3(), &[("/spec/type", json!("Swift"))]);
    let validated = validate_object(
        &FakeCluster::new(),
        &request(Operation::Update, s3(), Some(old)),
    );
    let denial = validated.denial.expect("refused");
    assert!(
        denial
            .message
            .starts_with("GlanceBackend \"images\" cannot be read: unknown variant `Swift`"),
        "{}",
        denial.message
    );
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
fn a_backend_written_through_admission_is_stored_with_its_default() {
    let cluster = FakeCluster::new().admitting::<GlanceBackendReconciler>();
    let minimal = with(s3(), &[("/spec/s3/bucketURLFormat", json!(null))]);
    cluster.create(&minimal).expect("admitted");
    let written: GlanceBackend = cluster
        .get_typed(Some(NAMESPACE), "images")
        .expect("reads")
        .expect("stored");
    let s3 = written.spec.s3.expect("an s3 block");
    assert_eq!(s3.bucket_url_format, BucketUrlFormat::Path);
    let raw = cluster.object(&stored("images")).expect("stored");
    assert_eq!(raw["spec"]["s3"]["bucketURLFormat"], "path");
}

#[test]
fn a_second_default_of_a_glance_is_refused_with_kube_apiserver_s_invalid_message() {
    let cluster = FakeCluster::new().admitting::<GlanceBackendReconciler>();
    cluster
        .create(&s3())
        .expect("the first default is admitted");
    let second = with(s3(), &[("/metadata/name", json!("archive"))]);
    let refused = cluster.create(&second).expect_err("refused");
    assert_eq!(
        refused,
        ApiError::Invalid(
            "GlanceBackend.glance.openstack.c5c3.io \"archive\" is invalid: spec.isDefault: \
             Invalid value: true: GlanceBackend \"images\" attached to the same Glance \
             \"glance\" is already marked isDefault; exactly one default store is allowed"
                .into()
        )
    );
    assert!(cluster.object(&stored("archive")).is_none());
    let not_default = with(second, &[("/spec/isDefault", json!(false))]);
    cluster
        .create(&not_default)
        .expect("a second, non-default store is admitted");
}

#[test]
fn an_update_of_the_glance_ref_is_refused_through_admission() {
    let cluster = FakeCluster::new().admitting::<GlanceBackendReconciler>();
    cluster.create(&s3()).expect("admitted");
    let moved = with(s3(), &[("/spec/glanceRef/name", json!("glance2"))]);
    let refused = cluster.apply(&moved, None).expect_err("refused");
    assert_eq!(
        refused,
        ApiError::Invalid(
            "GlanceBackend.glance.openstack.c5c3.io \"images\" is invalid: spec: Invalid \
             value: \"object\": glanceRef is immutable"
                .into()
        )
    );
}

#[test]
fn a_backend_is_deleted_without_validation() {
    let cluster = FakeCluster::new().admitting::<GlanceBackendReconciler>();
    cluster.create(&s3()).expect("admitted");
    cluster
        .delete(
            &stored("images"),
            wasm_operator_sdk::Propagation::Background,
        )
        .expect("deleted");
    assert!(cluster.object(&stored("images")).is_none());
}
