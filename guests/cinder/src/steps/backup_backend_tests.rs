use super::*;
use crate::testing::{backup_backend, cluster, pass, pass_condition, secret_text};

fn t(status: &str, reason: &str, message: &str) -> (String, String, String) {
    (status.into(), reason.into(), message.into())
}

#[test]
fn exactly_one_credential_ready_backup_backend_is_projected() {
    // (backup backends as (name, credential-ready), condition, projected)
    type Row<'a> = (
        Vec<(&'a str, bool)>,
        (String, String, String),
        Option<&'a str>,
    );
    let table: Vec<Row<'_>> = vec![
        (
            vec![],
            t(
                "True",
                "NoBackupBackend",
                "No CinderBackupBackend is attached; the backup service is not rendered",
            ),
            None,
        ),
        (
            vec![("a", false)],
            t(
                "False",
                "WaitingForBackupBackend",
                "Waiting for backup backend: a",
            ),
            None,
        ),
        (
            vec![("a", true), ("b", true)],
            t(
                "False",
                "MultipleBackupBackends",
                "More than one attached, credential-ready CinderBackupBackend (a, b); exactly one is supported",
            ),
            None,
        ),
        (
            vec![("a", true), ("b", false)],
            t(
                "True",
                "BackupBackendProjected",
                "Backup backend a is projected",
            ),
            Some("a"),
        ),
    ];
    for (backups, want, projected) in table {
        let mut cluster = cluster();
        for (name, ready) in &backups {
            cluster = cluster.with(backup_backend(name, *ready));
        }
        let mut pass = pass(&cluster);
        assert_eq!(run(&mut pass).expect("runs"), None);
        assert_eq!(
            pass_condition(&pass, BACKUP_BACKEND_READY),
            want,
            "{backups:?}"
        );
        assert_eq!(
            pass.backup.as_ref().map(|b| b.name.as_str()),
            projected,
            "{backups:?}"
        );
    }
}

#[test]
fn an_nfs_backup_backend_renders_backup_conf_with_its_defaults() {
    let cluster = cluster().with(backup_backend("nightly", true));
    let mut pass = pass(&cluster);
    run(&mut pass).expect("runs");
    let backup = pass.backup.expect("projected");
    assert!(
        backup.secret.starts_with("cinder-backup-nightly-"),
        "{}",
        backup.secret
    );
    assert_eq!(
        secret_text(&cluster, &backup.secret, BACKUP_CONF),
        "[DEFAULT]\n\
         backup_compression_algorithm = zlib\n\
         backup_driver = cinder.backup.drivers.nfs.NFSBackupDriver\n\
         backup_file_size = 52428800\n\
         backup_mount_options = nfsvers=4.1,soft,timeo=30,retrans=2\n\
         backup_mount_point_base = /var/lib/cinder/backup_mount\n\
         backup_share = nfs.example.com:/exports/nightly\n\
         backup_use_same_host = false\n\
         host = cinder-backup\n"
    );
}
