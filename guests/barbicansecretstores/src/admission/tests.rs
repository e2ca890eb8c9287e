//! The admission tests' fixtures — a valid store, requests, a table runner — the table
//! of the spec-wide rules (union, modes, store name, CEL), and the tests that write stores
//! through `FakeCluster::admitting`, as the API server calls the webhooks.

use serde_json::{Value, json};
use wasm_operator_sdk::admission::{AdmissionRequest, Operation, UserInfo, Validated};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ApiError, Cluster, ClusterExt, KindRef, ObjectRef};

use super::validate_object;
use crate::BarbicanSecretStoreReconciler;
use crate::types::{API_VERSION, BarbicanSecretStore, KIND, PLURAL};

/// The namespace of the fixtures.
pub(super) const NAMESPACE: &str = "openstack";

/// The store kind.
fn kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        plural: PLURAL.into(),
        namespaced: true,
    }
}

/// A valid brownfield store `vault` of Barbican `barbican`, the default store, as stored
/// after defaulting.
pub(super) fn brownfield() -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND,
    "metadata": {"name": "vault", "namespace": NAMESPACE},
    "spec": {
        "barbicanRef": {"name": "barbican"},
        "type": "OpenBao",
        "isDefault": true,
        "openBao": {
            "server": {
                "url": "https://openbao.example.com:8200",
                "credentialsSecretRef": {"name": "vault-credentials"},
                "caBundleSecretRef": {"name": "vault-ca"}
            },
            "kvMountpoint": "secrets",
            "namespace": "tenant-a"
        },
        "extraOptions": {"retry_delay": "2"}
    }})
}

/// A valid managed store `vault` of Barbican `barbican` on OpenBaoCluster `bao`.
pub(super) fn managed() -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND,
    "metadata": {"name": "vault", "namespace": NAMESPACE},
    "spec": {
        "barbicanRef": {"name": "barbican"},
        "type": "OpenBao",
        "isDefault": true,
        "openBao": {"instanceRef": {"name": "bao"}, "kvMountpoint": "barbican"}
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

/// Rows of `(changes to the valid brownfield store, the field errors expected)`.
pub(super) type Rows<'a> = Vec<(Vec<(&'a str, Value)>, Vec<&'a str>)>;

/// Runs rows on create, alone in the namespace. Exactly one row is valid.
pub(super) fn assert_create_rows(rows: &Rows<'_>) {
    let valid = rows.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!(valid, 1, "a table has exactly one valid row");
    for (changes, expected) in rows {
        let got = create_errors_among(&[], with(brownfield(), changes));
        assert_eq!(got, *expected, "{changes:?}");
    }
}

#[test]
fn a_store_is_refused_a_missing_block_a_wrong_mode_and_a_reserved_or_long_name() {
    let renamed = |name: &str| vec![("/metadata/name", json!(name))];
    let rows: Rows<'_> = vec![
        (vec![], vec![]),
        (
            vec![("/spec/openBao", json!(null))],
            vec![
                "spec.openBao: Invalid value: \"OpenBao\": exactly one store block matching spec.type must be set (type OpenBao requires spec.openBao)",
            ],
        ),
        (
            vec![("/spec/openBao/instanceRef", json!({"name": "bao"}))],
            vec![
                "spec.openBao: Invalid value: \"object\": exactly one of instanceRef or server must be set",
                "spec.openBao.kvMountpoint: Invalid value: \"secrets\": a managed store (instanceRef) must keep kvMountpoint \"barbican\": the self-init contract provisions only that mount",
                "spec.openBao.namespace: Invalid value: \"tenant-a\": a managed store (instanceRef) must leave namespace unset: the self-init contract provisions at the root namespace",
            ],
        ),
        (
            vec![("/spec/openBao/server", json!(null))],
            vec!["spec.openBao: Invalid value: \"object\": exactly one of instanceRef or server must be set"],
        ),
        (
            vec![("/spec/openBao/server/url", json!("http://openbao.example.com:8200"))],
            vec![
                "spec.openBao.server.url: Invalid value: \"http://openbao.example.com:8200\": url must use the https:// scheme: the AppRole credentials and every stored secret travel it",
            ],
        ),
        (
            renamed("vault_plugin"),
            vec![
                "metadata.name: Invalid value: \"vault_plugin\": name \"vault_plugin\" collides with the reserved or operator-managed barbican.conf section of the same name",
            ],
        ),
        (
            renamed("DEFAULT"),
            vec![
                "metadata.name: Invalid value: \"DEFAULT\": name \"DEFAULT\" collides with the reserved or operator-managed barbican.conf section of the same name",
            ],
        ),
        (
            renamed(&"v".repeat(56)),
            vec![Box::leak(
                format!(
                    "metadata.name: Invalid value: \"{}\": name must be at most 55 characters: the operator appends \"-approle\" to name the AppRole credentials Secret",
                    "v".repeat(56)
                )
                .into_boxed_str(),
            )],
        ),
    ];
    assert_create_rows(&rows);
    // Every reserved name, each refused.
    for name in super::store_name::RESERVED {
        let got = create_errors_among(&[], with(brownfield(), &renamed(name)));
        assert_eq!(got.len(), 1, "{name}");
        assert!(
            got[0].starts_with("metadata.name: Invalid value: "),
            "{got:?}"
        );
    }
    // Near misses, and a name of exactly 55 characters, are store names like any other.
    for name in ["defaults", "my-default", "secretstore-a", &"v".repeat(55)] {
        assert_eq!(
            create_errors_among(&[], with(brownfield(), &renamed(name))),
            Vec::<String>::new(),
            "{name}"
        );
    }
    // A valid managed store.
    assert_eq!(create_errors_among(&[], managed()), Vec::<String>::new());
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
                option("retry_delay".into(), long(1025)),
            )],
            vec![too_long],
        ),
    ];
    assert_create_rows(&rows);
}

#[test]
fn an_update_keeps_the_barbican_the_mount_and_the_mode_and_not_the_name_bound() {
    let update = |old: Value, changes: &[(&str, Value)]| {
        field_errors(&validate_object(
            &FakeCluster::new(),
            &request(Operation::Update, with(old.clone(), changes), Some(old)),
        ))
    };
    // (stored, changes, errors)
    let table: Vec<(Value, Changes<'_>, Vec<&str>)> = vec![
        (
            brownfield(),
            vec![
                ("/spec/isDefault", json!(false)),
                (
                    "/spec/openBao/server/url",
                    json!("https://other.example.com:8200"),
                ),
                ("/spec/openBao/namespace", json!(null)),
            ],
            vec![],
        ),
        (
            brownfield(),
            vec![("/spec/barbicanRef/name", json!("barbican2"))],
            vec!["spec: Invalid value: \"object\": barbicanRef is immutable"],
        ),
        (
            brownfield(),
            vec![("/spec/openBao/kvMountpoint", json!("other"))],
            vec![
                "spec.openBao: Invalid value: \"object\": kvMountpoint is immutable: the secret material already written under the old mount is not reachable under a new one",
            ],
        ),
        (
            managed(),
            vec![
                ("/spec/openBao/instanceRef", json!(null)),
                (
                    "/spec/openBao/server",
                    json!({"url": "https://b.example.com:8200", "credentialsSecretRef": {"name": "c"}}),
                ),
            ],
            vec![
                "spec.openBao: Invalid value: \"object\": the store mode (instanceRef vs server) is immutable: delete and recreate the store instead",
            ],
        ),
        // A long name stored before the bound is not refused on update.
        (
            with(brownfield(), &[("/metadata/name", json!("v".repeat(60)))]),
            vec![("/spec/isDefault", json!(false))],
            vec![],
        ),
    ];
    for (old, changes, expected) in table {
        assert_eq!(update(old, &changes), expected, "{changes:?}");
    }
}

/// Changes to a store, as `(pointer, value)`.
type Changes<'a> = Vec<(&'a str, Value)>;

fn stored(name: &str) -> ObjectRef {
    ObjectRef {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        namespace: Some(NAMESPACE.into()),
        name: name.into(),
    }
}

#[test]
fn a_store_written_through_admission_is_stored_with_its_default_mount() {
    let cluster = FakeCluster::new().admitting::<BarbicanSecretStoreReconciler>();
    let minimal = with(managed(), &[("/spec/openBao/kvMountpoint", json!(null))]);
    cluster.create(&minimal).expect("admitted");
    let written: BarbicanSecretStore = cluster
        .get_typed(Some(NAMESPACE), "vault")
        .expect("reads")
        .expect("stored");
    assert_eq!(
        written.spec.open_bao.expect("openBao").kv_mountpoint,
        "barbican"
    );
    let raw = cluster.object(&stored("vault")).expect("stored");
    assert_eq!(raw["spec"]["openBao"]["kvMountpoint"], "barbican");
}

#[test]
fn a_second_openbao_store_of_a_barbican_is_refused_with_kube_apiserver_s_invalid_message() {
    let cluster = FakeCluster::new().admitting::<BarbicanSecretStoreReconciler>();
    cluster
        .create(&brownfield())
        .expect("the first store is admitted");
    let second = with(
        brownfield(),
        &[
            ("/metadata/name", json!("archive")),
            ("/spec/isDefault", json!(false)),
        ],
    );
    let refused = cluster.create(&second).expect_err("refused");
    assert_eq!(
        refused,
        ApiError::Invalid(
            "BarbicanSecretStore.barbican.openstack.c5c3.io \"archive\" is invalid: spec.type: \
             Invalid value: \"OpenBao\": BarbicanSecretStore \"vault\" attached to the same \
             Barbican \"barbican\" is already of type OpenBao; the vault plugin's \
             [vault_plugin] options are process-global, so both stores would share one \
             server, one credential, and one mount"
                .into()
        )
    );
    assert!(cluster.object(&stored("archive")).is_none());
    let elsewhere = with(second, &[("/spec/barbicanRef/name", json!("barbican2"))]);
    cluster
        .create(&elsewhere)
        .expect("a store of another Barbican is admitted");
}

#[test]
fn a_store_is_deleted_without_validation() {
    let cluster = FakeCluster::new().admitting::<BarbicanSecretStoreReconciler>();
    cluster.create(&brownfield()).expect("admitted");
    cluster
        .delete(&stored("vault"), wasm_operator_sdk::Propagation::Background)
        .expect("deleted");
    assert!(cluster.object(&stored("vault")).is_none());
}
