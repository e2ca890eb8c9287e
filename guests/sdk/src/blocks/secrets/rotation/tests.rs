use serde_json::{Value, json};

use super::*;
use crate::cluster::{DeleteOptions, EventType};
use crate::error::ApiError;
use crate::object::ObjectRef;
use crate::testing::{Call, FakeCluster, Op};

const AT: &str = "2026-03-01T12:00:00Z";
const EARLIER: &str = "2026-02-01T12:00:00Z";

fn key(first: char) -> String {
    format!("{first}{}=", "A".repeat(42))
}

/// Secret data from text values.
fn data(entries: &[(&str, &str)]) -> BTreeMap<String, ByteString> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
        .collect()
}

fn new_keys() -> BTreeMap<String, ByteString> {
    data(&[("0", &key('n')), ("1", &key('o')), ("2", &key('p'))])
}

fn old_keys() -> BTreeMap<String, ByteString> {
    data(&[
        ("0", &key('a')),
        ("1", &key('b')),
        ("2", &key('c')),
        ("3", &key('d')),
    ])
}

fn secret(name: &str, data: &BTreeMap<String, ByteString>, completed: Option<&str>) -> Value {
    let mut secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": "ns"},
        "data": serde_json::to_value(data).expect("encodes")});
    if let Some(at) = completed {
        secret["metadata"]["annotations"] = json!({ROTATION_COMPLETED_AT: at});
    }
    secret
}

fn keystone() -> ObjectRef {
    ObjectRef {
        api_version: "keystone.openstack.c5c3.io/v1alpha1".into(),
        kind: "Keystone".into(),
        namespace: Some("ns".into()),
        name: "keystone".into(),
    }
}

fn commit(cluster: &FakeCluster, rotation: Rotation) -> Result<bool, RotationError> {
    let regarding = keystone();
    commit_staged_rotation(
        cluster,
        &StagedRotation {
            rotation,
            namespace: "ns",
            staging: "staging",
            target: "target",
            regarding: &regarding,
        },
    )
}

fn fernet() -> Rotation {
    Rotation::fernet_keys(3)
}

/// The staging and target Secrets.
fn cluster(staging: Value, target: Value) -> FakeCluster {
    FakeCluster::new().with(staging).with(target)
}

fn staging_was_read(cluster: &FakeCluster) -> bool {
    cluster
        .calls()
        .iter()
        .any(|c| matches!(c, Call::Get(r, _) if r.name == "staging"))
}

fn events(cluster: &FakeCluster) -> Vec<(EventType, String)> {
    cluster
        .events()
        .into_iter()
        .map(|(regarding, e)| {
            assert_eq!(regarding, keystone(), "events regard the CR");
            (e.event_type, e.reason)
        })
        .collect()
}

#[test]
fn a_staging_secret_without_the_completion_annotation_is_left_alone() {
    let cluster = cluster(
        secret("staging", &new_keys(), None),
        secret("target", &old_keys(), Some(EARLIER)),
    );
    assert!(!commit(&cluster, fernet()).expect("commits"));
    assert!(
        staging_was_read(&cluster),
        "the staging Secret was looked at"
    );
    assert_eq!(cluster.write_log(), Vec::<String>::new());
    assert!(events(&cluster).is_empty());
}

#[test]
fn a_completion_annotation_that_is_not_rfc3339_is_a_warning_and_nothing_is_applied() {
    for (rotation, reason) in [
        (fernet(), "RotationAnnotationInvalid"),
        (
            Rotation::admin_password(24),
            "AdminPasswordRotationAnnotationInvalid",
        ),
    ] {
        let staged = data(&[("password", &"p".repeat(24))]);
        let staged = if rotation == fernet() {
            new_keys()
        } else {
            staged
        };
        let cluster = cluster(
            secret("staging", &staged, Some("last tuesday")),
            secret("target", &old_keys(), Some(EARLIER)),
        );
        assert!(!commit(&cluster, rotation).expect("commits"));
        assert_eq!(events(&cluster), [(EventType::Warning, reason.to_owned())]);
        let note = &cluster.events()[0].1.note;
        assert!(
            note.contains("\"last tuesday\" is not an RFC 3339 time"),
            "{note}"
        );
        assert_eq!(cluster.write_log(), Vec::<String>::new(), "{reason}");
    }
}

#[test]
fn rejected_staged_keys_are_a_warning_and_the_staging_secret_is_cleared() {
    let two = data(&[("0", &key('n')), ("1", &key('o'))]);
    let cluster = cluster(
        secret("staging", &two, Some(AT)),
        secret("target", &old_keys(), Some(EARLIER)),
    );
    assert!(!commit(&cluster, fernet()).expect("commits"));
    assert_eq!(
        events(&cluster),
        [(EventType::Warning, "RotationRejected".to_owned())]
    );
    let note = &cluster.events()[0].1.note;
    assert!(
        note.contains("rejected: the staged rotation holds 2 keys, want 3 to 4"),
        "{note}"
    );
    let staging = cluster.server("Secret", "staging").expect("kept");
    assert!(staging.get("data").is_none(), "data cleared: {staging}");
    assert!(
        staging["metadata"]["annotations"]
            .get(ROTATION_COMPLETED_AT)
            .is_none(),
        "annotation removed: {staging}"
    );
    assert_eq!(cluster.secret_data("target").len(), 4, "target untouched");
    assert_eq!(cluster.write_log(), ["patch Secret ns/staging"]);
}

#[test]
fn a_rejected_staged_admin_password_is_a_warning_and_the_staging_secret_is_left() {
    let short = data(&[("password", "short")]);
    let cluster = cluster(
        secret("staging", &short, Some(AT)),
        secret("target", &data(&[("password", &"p".repeat(32))]), None),
    );
    assert!(!commit(&cluster, Rotation::admin_password(0)).expect("commits"));
    assert_eq!(
        events(&cluster),
        [(
            EventType::Warning,
            "AdminPasswordRotationRejected".to_owned()
        )]
    );
    let note = &cluster.events()[0].1.note;
    assert!(
        !note.contains("short"),
        "no staged value in the note: {note}"
    );
    assert_eq!(cluster.write_log(), Vec::<String>::new());
    assert_eq!(cluster.secret_data("staging")["password"], b"short");
}

#[test]
fn an_already_committed_rotation_deletes_the_staging_secret_and_is_not_applied() {
    let cluster = cluster(
        secret("staging", &new_keys(), Some(AT)),
        secret("target", &new_keys(), Some(AT)),
    );
    assert!(!commit(&cluster, fernet()).expect("commits"));
    assert_eq!(cluster.write_log(), ["delete Secret ns/staging"]);
    assert!(
        events(&cluster).is_empty(),
        "no event for a commit already made"
    );
}

#[test]
fn a_valid_staged_rotation_is_copied_onto_the_target_and_the_staging_secret_deleted() {
    let password = data(&[("password", &"n".repeat(32))]);
    let cases = [
        (fernet(), new_keys(), old_keys(), "FernetKeysRotated"),
        (
            Rotation::credential_keys(3),
            new_keys(),
            old_keys(),
            "CredentialKeysRotated",
        ),
        (
            Rotation::admin_password(32),
            password,
            data(&[("password", &"o".repeat(32)), ("stale", "x")]),
            "AdminPasswordRotated",
        ),
    ];
    for (rotation, staged, old, reason) in cases {
        let cluster = cluster(
            secret("staging", &staged, Some(AT)),
            secret("target", &old, Some(EARLIER)),
        );
        let staging_before = cluster.server("Secret", "staging").expect("staging");
        assert!(commit(&cluster, rotation).expect("commits"), "{reason}");

        let target = cluster.server("Secret", "target").expect("target");
        let got: BTreeMap<String, ByteString> =
            serde_json::from_value(target["data"].clone()).expect("data");
        assert_eq!(
            got, staged,
            "{reason}: the target holds exactly the staged data"
        );
        assert_eq!(target["metadata"]["annotations"][ROTATION_COMPLETED_AT], AT);
        assert!(cluster.server("Secret", "staging").is_none(), "{reason}");
        assert_eq!(
            cluster.write_log(),
            ["patch Secret ns/target", "delete Secret ns/staging"],
            "{reason}"
        );
        assert_eq!(events(&cluster), [(EventType::Normal, reason.to_owned())]);

        let calls = cluster.calls();
        let delete = calls.iter().find_map(|c| match c {
            Call::Delete(_, DeleteOptions { preconditions, .. }) => Some(preconditions.clone()),
            _ => None,
        });
        let delete = delete.expect("a delete");
        assert_eq!(
            delete.uid.as_deref(),
            staging_before["metadata"]["uid"].as_str(),
            "{reason}: the staging Secret is deleted as it was read"
        );
        assert_eq!(
            delete.resource_version.as_deref(),
            staging_before["metadata"]["resourceVersion"].as_str()
        );
    }
}

#[test]
fn a_staging_secret_the_cronjob_rewrote_since_it_was_read_is_not_deleted() {
    let cluster = cluster(
        secret("staging", &new_keys(), Some(AT)),
        secret("target", &old_keys(), Some(EARLIER)),
    );
    cluster.freeze_cache();
    cluster.change("Secret", "staging", |s| {
        s["metadata"]["annotations"][ROTATION_COMPLETED_AT] = json!("2026-03-02T12:00:00Z");
    });
    assert!(commit(&cluster, fernet()).expect("a Conflict on the delete is tolerated"));
    let staging = cluster
        .server("Secret", "staging")
        .expect("kept for the next pass");
    assert_eq!(
        staging["metadata"]["annotations"][ROTATION_COMPLETED_AT],
        "2026-03-02T12:00:00Z"
    );
    assert_eq!(cluster.write_log(), ["patch Secret ns/target"]);
}

#[test]
fn a_staging_secret_deleted_meanwhile_is_tolerated() {
    let cluster = cluster(
        secret("staging", &new_keys(), Some(AT)),
        secret("target", &old_keys(), Some(EARLIER)),
    )
    .failing(Op::Delete, "staging", ApiError::NotFound("gone".into()));
    assert!(commit(&cluster, fernet()).expect("NotFound is tolerated"));
    assert_eq!(cluster.secret_data("target"), cluster_data(&new_keys()));
}

fn cluster_data(data: &BTreeMap<String, ByteString>) -> BTreeMap<String, Vec<u8>> {
    data.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect()
}

#[test]
fn a_target_changed_since_it_was_read_fails_the_commit_and_keeps_the_staging_secret() {
    let cluster = cluster(
        secret("staging", &new_keys(), Some(AT)),
        secret("target", &old_keys(), Some(EARLIER)),
    );
    cluster.freeze_cache();
    cluster.change("Secret", "target", |s| {
        s["metadata"]["labels"] = json!({"touched": "yes"});
    });
    let err = commit(&cluster, fernet()).expect_err("the update conflicts");
    assert!(
        matches!(&err, RotationError::UpdateTarget { name, source: crate::Error::Api(ApiError::Conflict(_)), .. } if name == "target"),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("committing the staged rotation onto Secret ns/target: "),
        "{err}"
    );
    assert!(cluster.server("Secret", "staging").is_some());
    assert!(events(&cluster).is_empty());
}

#[test]
fn a_missing_staging_secret_is_nothing_to_commit_and_a_missing_target_an_error() {
    let cluster = FakeCluster::new().with(secret("target", &old_keys(), None));
    assert!(!commit(&cluster, fernet()).expect("nothing staged"));
    assert!(staging_was_read(&cluster));

    let cluster = FakeCluster::new().with(secret("staging", &new_keys(), Some(AT)));
    let err = commit(&cluster, fernet()).expect_err("no target");
    assert!(
        matches!(&err, RotationError::TargetNotFound { name, .. } if name == "target"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "the target Secret ns/target of the staged rotation does not exist"
    );
}

#[test]
fn an_event_that_cannot_be_recorded_does_not_undo_or_fail_the_commit() {
    let cluster = cluster(
        secret("staging", &new_keys(), Some(AT)),
        secret("target", &old_keys(), Some(EARLIER)),
    )
    .failing(
        Op::RecordEvent,
        "keystone",
        ApiError::Forbidden("no".into()),
    );
    assert!(commit(&cluster, fernet()).expect("commits"));
    assert!(
        cluster.calls().iter().any(|c| matches!(c, Call::Event(..))),
        "the event was tried"
    );
    assert_eq!(cluster.secret_data("target"), cluster_data(&new_keys()));
}

#[test]
fn the_bounds_are_normalized_as_cobaltcore_normalizes_the_spec() {
    let cases = [
        (
            Rotation::fernet_keys(0),
            Rotation::FernetKeys { max_active_keys: 3 },
        ),
        (
            Rotation::fernet_keys(-1),
            Rotation::FernetKeys { max_active_keys: 3 },
        ),
        (
            Rotation::credential_keys(5),
            Rotation::CredentialKeys { max_active_keys: 5 },
        ),
        (
            Rotation::admin_password(0),
            Rotation::AdminPassword { length: 32 },
        ),
        (
            Rotation::admin_password(10),
            Rotation::AdminPassword { length: 24 },
        ),
        (
            Rotation::admin_password(40),
            Rotation::AdminPassword { length: 40 },
        ),
    ];
    for (got, want) in cases {
        assert_eq!(got, want);
    }
}

#[test]
fn the_key_age_comes_from_the_targets_annotation_else_the_staging_secrets() {
    let secret = |at: Option<&str>| Secret {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            annotations: at
                .map(|a| BTreeMap::from([(ROTATION_COMPLETED_AT.to_owned(), a.to_owned())])),
            ..Default::default()
        },
        ..Default::default()
    };
    let at = parse_rfc3339(AT);
    let earlier = parse_rfc3339(EARLIER);
    assert_eq!(
        rotation_completed_at(&secret(Some(EARLIER)), Some(&secret(Some(AT)))),
        earlier
    );
    assert_eq!(
        rotation_completed_at(&secret(None), Some(&secret(Some(AT)))),
        at
    );
    assert_eq!(rotation_completed_at(&secret(Some("bad")), None), None);
}
