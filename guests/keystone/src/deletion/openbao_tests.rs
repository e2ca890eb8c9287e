use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::{Call, FakeCluster, Op};

use super::*;
use crate::deletion::testing::{
    FOREIGN, deletes, deleting, event_reasons, finalizers, note, pass_at, push_secret,
};
use crate::finalizers::OPENBAO_FINALIZER;
use crate::testing::condition;

const FERNET_BACKUP: &str = "ks-fernet-keys-backup";
const CREDENTIAL_BACKUP: &str = "ks-credential-keys-backup";
const BOTH_DELETES: [&str; 2] = [
    "PushSecret ks-fernet-keys-backup",
    "PushSecret ks-credential-keys-backup",
];

/// A Keystone whose main finalizer is released, with its two backups as `backups` makes
/// them.
fn cluster_with(backups: impl Fn(&str) -> serde_json::Value) -> FakeCluster {
    FakeCluster::new()
        .with(deleting(&[OPENBAO_FINALIZER, FOREIGN]))
        .with(backups(FERNET_BACKUP))
        .with(backups(CREDENTIAL_BACKUP))
}

fn unadopted(name: &str) -> serde_json::Value {
    push_secret(name, &[], false)
}

fn adopted(name: &str) -> serde_json::Value {
    push_secret(name, &[ESO_FINALIZER], false)
}

fn terminating(name: &str) -> serde_json::Value {
    push_secret(name, &[ESO_FINALIZER], true)
}

fn reasons(cluster: &FakeCluster) -> Vec<String> {
    event_reasons(cluster).into_iter().map(|(_, r)| r).collect()
}

const WAITING_FOR_ADOPTION: &str = "Waiting for ESO to adopt PushSecret \"ks-fernet-keys-backup\" (cleanup finalizer not yet \
     installed)";

#[test]
fn the_backups_are_named_after_the_keystone_and_the_key_kind() {
    assert_eq!(backup_names("ks"), [FERNET_BACKUP, CREDENTIAL_BACKUP]);
}

#[test]
fn unadopted_backups_wait_for_eso_adoption_and_nothing_is_deleted() {
    let cluster = cluster_with(unadopted);
    let mut pass = pass_at(&cluster, 60);
    let waited = release(&mut pass, Children::Local(&cluster)).expect("runs");
    assert_eq!(waited, Some(SECRET_POLLING));
    assert_eq!(
        condition(&pass, SECRETS_READY),
        (
            "False".into(),
            "WaitingForESOAdoption".into(),
            WAITING_FOR_ADOPTION.into()
        )
    );
    assert!(deletes(&cluster).is_empty(), "{:?}", deletes(&cluster));
    assert!(cluster.events().is_empty(), "{:?}", reasons(&cluster));
    assert_eq!(finalizers(&cluster), [OPENBAO_FINALIZER, FOREIGN]);
}

#[test]
fn at_9m59s_after_deletion_an_unadopted_backup_still_waits() {
    let cluster = cluster_with(unadopted);
    let mut pass = pass_at(&cluster, 9 * 60 + 59);
    let waited = release(&mut pass, Children::Local(&cluster)).expect("runs");
    assert_eq!(waited, Some(SECRET_POLLING));
    assert_eq!(condition(&pass, SECRETS_READY).1, "WaitingForESOAdoption");
    assert!(deletes(&cluster).is_empty(), "{:?}", deletes(&cluster));
    assert!(cluster.events().is_empty(), "{:?}", reasons(&cluster));
}

#[test]
fn at_10m01s_after_deletion_an_unadopted_backup_is_force_deleted_with_eso_adoption_timed_out() {
    let cluster = cluster_with(unadopted);
    let mut pass = pass_at(&cluster, 10 * 60 + 1);
    let released = release(&mut pass, Children::Local(&cluster)).expect("runs");
    assert_eq!(released, None);
    assert_eq!(deletes(&cluster), BOTH_DELETES);
    assert_eq!(
        event_reasons(&cluster),
        [
            ("Warning".into(), "ESOAdoptionTimedOut".into()),
            ("Warning".into(), "ESOAdoptionTimedOut".into()),
            ("Normal".into(), "OpenBaoSecretsFinalized".into()),
        ]
    );
    let notes: Vec<String> = crate::testing::events(&cluster)
        .into_iter()
        .map(|(_, _, note)| note)
        .collect();
    assert_eq!(
        notes[0],
        "PushSecret \"ks-fernet-keys-backup\" not adopted by ESO within 10m0s of deletion; \
         force-deleting to release the openbao-finalizer (the OpenBao kv-v2 path may be \
         orphaned only if ESO is not running)"
    );
    assert_eq!(finalizers(&cluster), [FOREIGN]);
}

#[test]
fn adopted_backups_are_deleted_and_the_finalizer_released_once_they_are_gone() {
    let cluster = cluster_with(adopted);
    let mut pass = pass_at(&cluster, 60);
    let released = release(&mut pass, Children::Local(&cluster)).expect("runs");
    assert_eq!(released, None);
    assert_eq!(deletes(&cluster), BOTH_DELETES);
    assert_eq!(
        reasons(&cluster),
        ["FinalizingOpenBaoSecrets", "OpenBaoSecretsFinalized"]
    );
    assert_eq!(
        note(&cluster, "FinalizingOpenBaoSecrets"),
        "Cleaning up OpenBao backup PushSecrets before removing Keystone"
    );
    assert_eq!(
        note(&cluster, "OpenBaoSecretsFinalized"),
        "OpenBao backup PushSecrets deleted; releasing openbao-finalizer"
    );
    // Whether they are gone is read past the cache.
    assert!(cluster.calls().contains(&Call::Get(
        wasm_operator_sdk::ObjectRef::of::<PushSecret>(Some("ns"), FERNET_BACKUP),
        ReadFrom::Server
    )));
    assert_eq!(finalizers(&cluster), [FOREIGN]);
}

#[test]
fn backups_that_are_already_gone_release_the_finalizer_without_finalizing_openbao_secrets() {
    let cluster = FakeCluster::new().with(deleting(&[OPENBAO_FINALIZER, FOREIGN]));
    let mut pass = pass_at(&cluster, 60);
    assert_eq!(
        release(&mut pass, Children::Local(&cluster)).expect("runs"),
        None
    );
    assert_eq!(deletes(&cluster), BOTH_DELETES, "NotFound is tolerated");
    assert_eq!(reasons(&cluster), ["OpenBaoSecretsFinalized"]);
    assert_eq!(finalizers(&cluster), [FOREIGN]);
}

#[test]
fn at_4m59s_a_backup_still_terminating_blocks_the_finalizer_and_is_not_deleted_again() {
    let cluster = cluster_with(terminating);
    let mut pass = pass_at(&cluster, 4 * 60 + 59);
    let waited = release(&mut pass, Children::Local(&cluster)).expect("runs");
    assert_eq!(waited, Some(SECRET_POLLING));
    assert_eq!(
        condition(&pass, SECRETS_READY),
        (
            "False".into(),
            "OpenBaoFinalizerBlocked".into(),
            "Waiting for PushSecret \"ks-fernet-keys-backup\" to be garbage-collected before \
             releasing openbao-finalizer"
                .into()
        )
    );
    assert!(deletes(&cluster).is_empty(), "{:?}", deletes(&cluster));
    assert!(
        cluster.events().is_empty(),
        "FinalizingOpenBaoSecrets was the deleting pass's: {:?}",
        reasons(&cluster)
    );
    assert_eq!(
        cluster.server("PushSecret", FERNET_BACKUP).expect("kept")["metadata"]["finalizers"],
        serde_json::json!([ESO_FINALIZER])
    );
    assert_eq!(finalizers(&cluster), [OPENBAO_FINALIZER, FOREIGN]);
}

#[test]
fn at_5m01s_a_stalled_backup_has_its_finalizers_stripped_with_openbao_cleanup_stalled() {
    let cluster = cluster_with(terminating);
    let mut pass = pass_at(&cluster, 5 * 60 + 1);
    let released = release(&mut pass, Children::Local(&cluster)).expect("runs");
    assert_eq!(released, None);
    for name in [FERNET_BACKUP, CREDENTIAL_BACKUP] {
        let stored = cluster.server("PushSecret", name).expect("stored");
        assert!(
            stored["metadata"].get("finalizers").is_none(),
            "{name}: {stored}"
        );
    }
    assert_eq!(
        event_reasons(&cluster),
        [
            ("Warning".into(), "OpenBaoCleanupStalled".into()),
            ("Normal".into(), "OpenBaoSecretsFinalized".into()),
        ]
    );
    assert_eq!(
        note(&cluster, "OpenBaoCleanupStalled"),
        "ESO could not delete the OpenBao data behind PushSecret(s) [ks-fernet-keys-backup \
         ks-credential-keys-backup] within 5m0s of deletion; the kv-v2 path(s) \
         [openstack/keystone/ns/ks/fernet-keys openstack/keystone/ns/ks/credential-keys] may \
         still hold the backed-up keys — delete them by hand"
    );
    assert_eq!(finalizers(&cluster), [FOREIGN]);
}

#[test]
fn stripping_a_stalled_backup_carries_its_resource_version_so_a_concurrent_change_conflicts() {
    let cluster = cluster_with(terminating);
    // ESO touches the fernet backup between the pass's read and its patch.
    cluster.after_server_read(FERNET_BACKUP, |ps| {
        ps["metadata"]["annotations"] = serde_json::json!({"touched": "by ESO"});
    });
    let mut pass = pass_at(&cluster, 5 * 60 + 1);
    let error = release(&mut pass, Children::Local(&cluster)).expect_err("conflicts");
    assert!(
        matches!(&error, Error::Cluster { what, source: wasm_operator_sdk::Error::Api(ApiError::Conflict(_)) }
            if what == "removing the finalizers of PushSecret ns/ks-fernet-keys-backup"),
        "{error}"
    );
    assert_eq!(
        cluster.server("PushSecret", FERNET_BACKUP).expect("kept")["metadata"]["finalizers"],
        serde_json::json!([ESO_FINALIZER])
    );
    assert_eq!(finalizers(&cluster), [OPENBAO_FINALIZER, FOREIGN]);
}

#[test]
fn a_failed_backup_delete_ends_the_pass_naming_it_and_keeps_the_finalizer() {
    let cluster = cluster_with(adopted).failing(
        Op::Delete,
        CREDENTIAL_BACKUP,
        ApiError::Unavailable("etcd timeout".into()),
    );
    let mut pass = pass_at(&cluster, 60);
    let error = release(&mut pass, Children::Local(&cluster)).expect_err("fails");
    assert!(
        matches!(&error, Error::Cluster { what, source: wasm_operator_sdk::Error::Api(ApiError::Unavailable(_)) }
            if what == "deleting PushSecret ns/ks-credential-keys-backup"),
        "{error}"
    );
    assert_eq!(finalizers(&cluster), [OPENBAO_FINALIZER, FOREIGN]);
}

#[test]
fn abandoned_children_release_the_openbao_finalizer_with_remote_children_abandoned() {
    let cluster = cluster_with(adopted);
    let mut pass = pass_at(&cluster, 400);
    assert_eq!(release(&mut pass, Children::Abandoned).expect("runs"), None);
    assert!(deletes(&cluster).is_empty(), "{:?}", deletes(&cluster));
    assert_eq!(
        note(&cluster, "RemoteChildrenAbandoned"),
        "Target cluster is no longer registered; releasing the openbao-finalizer without \
         deleting the backup PushSecrets on it"
    );
    assert_eq!(finalizers(&cluster), [FOREIGN]);
}

#[test]
fn a_keystone_without_the_openbao_finalizer_sends_nothing() {
    let cluster = FakeCluster::new()
        .with(deleting(&[FOREIGN]))
        .with(adopted(FERNET_BACKUP));
    let mut pass = pass_at(&cluster, 60);
    assert_eq!(
        release(&mut pass, Children::Local(&cluster)).expect("runs"),
        None
    );
    assert!(cluster.calls().is_empty(), "{:?}", cluster.calls());
    assert!(cluster.server("PushSecret", FERNET_BACKUP).is_some());
}

#[test]
fn while_one_backup_awaits_adoption_finalizing_openbao_secrets_is_not_recorded_for_the_other() {
    let cluster = FakeCluster::new()
        .with(deleting(&[OPENBAO_FINALIZER, FOREIGN]))
        .with(adopted(FERNET_BACKUP))
        .with(unadopted(CREDENTIAL_BACKUP));
    for seconds in [60, 75] {
        let mut pass = pass_at(&cluster, seconds);
        let waited = release(&mut pass, Children::Local(&cluster)).expect("runs");
        assert_eq!(waited, Some(SECRET_POLLING));
        assert_eq!(condition(&pass, SECRETS_READY).1, "WaitingForESOAdoption");
    }
    assert!(cluster.events().is_empty(), "{:?}", reasons(&cluster));
    assert!(deletes(&cluster).is_empty(), "{:?}", deletes(&cluster));
}
