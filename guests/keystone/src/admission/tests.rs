//! The admission tests' fixtures — a valid Keystone, requests, a test-only reconciler that
//! admits Keystones with [`default_object`] and [`validate_object`] — and the tests that
//! write Keystones through `FakeCluster::admitting`, as the API server calls the webhooks.

use serde_json::{Value, json};
use wasm_operator_sdk::admission::{
    AdmissionRequest, AdmittedKind, Defaulted, Denial, FailurePolicy, Operation, UserInfo,
    Validated,
};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{
    ApiError, Cluster, ClusterExt, Description, KindRef, ObjectRef, Outcome, Permission,
    ReconcileError, Reconciler, Request, Verb,
};

use super::{default_object, validate_object};
use crate::types::{API_VERSION, KIND, Keystone, PLURAL};

/// The Keystone kind.
pub(super) fn kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        plural: PLURAL.into(),
        namespaced: true,
    }
}

/// A valid Keystone `keystone` in `openstack`, as stored after defaulting.
pub(super) fn keystone() -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": "keystone", "namespace": "openstack"},
        "spec": {
            "deployment": {"replicas": 3},
            "image": {"repository": "ghcr.io/c5c3/keystone", "tag": "2022.2"},
            "database": {"clusterRef": {"name": "mariadb"}, "database": "keystone",
                         "secretRef": {"name": "keystone-db"}, "credentialsMode": "Static"},
            "cache": {"clusterRef": {"name": "memcached"},
                      "backend": "dogpile.cache.pymemcache"},
            "fernet": {"rotationSchedule": "0 0 * * 0", "maxActiveKeys": 3},
            "credentialKeys": {"rotationSchedule": "0 0 * * 0", "maxActiveKeys": 3},
            "trustFlush": {"schedule": "0 * * * *"},
            "bootstrap": {"adminUser": "admin", "region": "RegionOne",
                          "adminPasswordSecretRef": {"name": "keystone-admin"}},
            "logging": {"format": "text", "level": "INFO", "debug": false}
        }
    })
}

/// `object` with each `(pointer, value)` set, creating objects on the way; a `null` value
/// removes the field.
pub(super) fn with(mut object: Value, changes: &[(&str, Value)]) -> Value {
    for (pointer, value) in changes {
        let (parent, last) = pointer.rsplit_once('/').expect("a pointer");
        let mut node = &mut object;
        for part in parent.split('/').skip(1) {
            node = node
                .as_object_mut()
                .expect("an object on the way")
                .entry(part.to_owned())
                .or_insert_with(|| json!({}));
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
    AdmissionRequest {
        operation,
        kind: kind(),
        namespace: Some("openstack".into()),
        name: "keystone".into(),
        object: Some(object),
        old_object: old,
        user: UserInfo::default(),
        dry_run: false,
    }
}

/// The field errors validating `object` on create finds, as `field: message`.
pub(super) fn create_errors(object: Value) -> Vec<String> {
    let validated = validate_object(
        &FakeCluster::new(),
        &request(Operation::Create, object, None),
    );
    field_errors(&validated)
}

/// The field errors of a validation, as `field: message`.
pub(super) fn field_errors(validated: &Validated) -> Vec<String> {
    validated
        .denial
        .iter()
        .flat_map(|d| d.fields.iter().map(ToString::to_string))
        .collect()
}

/// Runs a table of `(changes to the valid Keystone, the field errors expected)` on create.
pub(super) fn assert_create_table(table: Table<'_>) {
    for (changes, expected) in table {
        let got = create_errors(with(keystone(), changes));
        assert_eq!(got, *expected, "{changes:?}");
    }
}

/// Changes to a Keystone: `(JSON pointer, value)`; a `null` value removes the field.
pub(super) type Changes<'a> = &'a [(&'a str, Value)];
/// Rows of `(changes, the field errors expected)`.
pub(super) type Table<'a> = &'a [(Changes<'a>, &'a [&'a str])];

/// A test-only plugin admitting Keystones with the entry points under test.
pub(super) struct Admitting;

impl Reconciler for Admitting {
    fn describe() -> Description {
        Description {
            name: "keystone".into(),
            version: "0.1.0".into(),
            field_manager: "keystone".into(),
            primary: kind(),
            primary_predicates: vec![],
            watches: vec![],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![AdmittedKind {
                kind: kind(),
                default_on: vec![Operation::Create, Operation::Update],
                validate_on: vec![Operation::Create, Operation::Update, Operation::Delete],
                failure_policy: FailurePolicy::Fail,
            }],
            egress: vec![],
            indexes: vec![],
            permissions: vec![
                Permission {
                    kind: kind(),
                    verbs: vec![Verb::Get, Verb::List, Verb::Watch],
                },
                Permission {
                    kind: KindRef::of::<k8s_openapi::api::scheduling::v1::PriorityClass>(),
                    verbs: vec![Verb::Get],
                },
            ],
            targets: Default::default(),
            primary_selector: None,
        }
    }

    fn reconcile(_: &dyn Cluster, _: &Request) -> Result<Outcome, ReconcileError> {
        Ok(Outcome::done())
    }

    fn default_object(_: &dyn Cluster, request: &AdmissionRequest) -> Result<Defaulted, Denial> {
        default_object(request)
    }

    fn validate_object(cluster: &dyn Cluster, request: &AdmissionRequest) -> Validated {
        validate_object(cluster, request)
    }
}

fn stored() -> ObjectRef {
    ObjectRef {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        namespace: Some("openstack".into()),
        name: "keystone".into(),
    }
}

/// The smallest Keystone a user writes: the required blocks and the schedules (which the
/// CRD's defaults fill in a real API server, and the fake has no schema).
fn minimal() -> Value {
    let mut object = keystone();
    let spec = object["spec"].as_object_mut().expect("a spec");
    spec.retain(|k, _| ["image", "database", "cache", "bootstrap"].contains(&k.as_str()));
    object = with(
        object,
        &[
            ("/spec/database/credentialsMode", Value::Null),
            ("/spec/cache/backend", Value::Null),
            ("/spec/bootstrap/adminUser", Value::Null),
            ("/spec/bootstrap/region", Value::Null),
            ("/spec/fernet/rotationSchedule", json!("0 0 * * 0")),
            ("/spec/credentialKeys/rotationSchedule", json!("0 0 * * 0")),
        ],
    );
    object
}

#[test]
fn a_keystone_written_through_admission_is_stored_with_its_defaults() {
    let cluster = FakeCluster::new().admitting::<Admitting>();
    cluster.create(&minimal()).expect("admitted");
    let stored: Keystone = cluster
        .get_typed(Some("openstack"), "keystone")
        .expect("reads")
        .expect("stored");
    let spec = &stored.spec;
    assert_eq!(spec.deployment.replicas, 3);
    assert_eq!(spec.fernet.max_active_keys, 3);
    assert_eq!(spec.cache.backend, "dogpile.cache.pymemcache");
    assert_eq!(
        (
            spec.bootstrap.admin_user.as_str(),
            spec.bootstrap.region.as_str()
        ),
        ("admin", "RegionOne")
    );
    assert_eq!(spec.database.credentials_mode, "Static");
    assert_eq!(
        spec.trust_flush.as_ref().map(|t| t.schedule.as_str()),
        Some("0 * * * *")
    );
}

#[test]
fn an_invalid_keystone_is_refused_with_kube_apiserver_s_invalid_message() {
    let cluster = FakeCluster::new().admitting::<Admitting>();
    let object = with(minimal(), &[("/spec/fernet/maxActiveKeys", json!(2))]);
    let refused = cluster.create(&object).expect_err("refused");
    assert_eq!(
        refused,
        ApiError::Invalid(
            "Keystone.keystone.openstack.c5c3.io \"keystone\" is invalid: \
             spec.fernet.maxActiveKeys: Invalid value: 2: must be at least 3"
                .into()
        )
    );
    assert!(cluster.object(&stored()).is_none());
}

#[test]
fn an_update_of_an_immutable_field_is_refused_and_others_pass() {
    let cluster = FakeCluster::new().admitting::<Admitting>();
    cluster.create(&minimal()).expect("admitted");
    let scaled = with(minimal(), &[("/spec/deployment/replicas", json!(5))]);
    cluster
        .apply(&scaled, None)
        .expect("an edit of a mutable field passes");
    let stored_replicas =
        cluster.object(&stored()).expect("stored")["spec"]["deployment"]["replicas"].clone();
    assert_eq!(stored_replicas, json!(5));
    let moved = with(minimal(), &[("/spec/bootstrap/region", json!("RegionTwo"))]);
    let refused = cluster.apply(&moved, None).expect_err("refused");
    assert_eq!(
        refused,
        ApiError::Invalid(
            "Keystone.keystone.openstack.c5c3.io \"keystone\" is invalid: \
             spec.bootstrap.region: Invalid value: \"string\": bootstrap.region is immutable"
                .into()
        )
    );
}
