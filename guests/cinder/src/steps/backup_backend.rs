//! BackupBackend (facts §3.5 "Parent step"): the one CinderBackupBackend a Cinder backs up
//! to, rendered into `{cinder}-backup-{name}-{hash}`.
//!
//! | Case | BackupBackendReady | Projection |
//! |---|---|---|
//! | none attached | True `NoBackupBackend` "No CinderBackupBackend is attached; the backup service is not rendered" | none |
//! | more than one credential-ready | False `MultipleBackupBackends` "More than one attached, credential-ready CinderBackupBackend (a, b); exactly one is supported" | none (the backup Deployment is deleted) |
//! | attached, none credential-ready, or the one skipped (no block for its type, its RBD key missing, a CR/LF) | False `WaitingForBackupBackend` "Waiting for backup backend: b"; a skip warns `CinderBackupBackendSkipped` "Skipping backup backend b: <why>" | none |
//! | rendered | True `BackupBackendProjected` "Backup backend b is projected" | the Secret |
//!
//! `backup.conf` (`[DEFAULT]`): NFS — `backup_compression_algorithm`, `backup_driver =
//! cinder.backup.drivers.nfs.NFSBackupDriver`, `backup_file_size`, `backup_mount_options`,
//! `backup_mount_point_base = /var/lib/cinder/backup_mount`, `backup_share = server:path`;
//! RBD — `backup_ceph_conf`, `backup_ceph_pool`, `backup_ceph_user`, `backup_driver =
//! cinder.backup.drivers.ceph.CephBackupDriver`, with `ceph.conf` and `keyring`; both
//! `backup_use_same_host = false` and `host = {cinder}-backup`, then extraOptions that
//! override no operator key.
//!
//! DECISION: the messages of the waiting and multiple cases are ours (the facts give the
//! reasons only); the never-requeue, never-fail contract is the Backends step's.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use wasm_operator_sdk::blocks::config::{create_immutable_secret, prune_immutable_secrets};
use wasm_operator_sdk::blocks::satellite::{CollectParams, collect};
use wasm_operator_sdk::{ClusterExt, EventType};

use crate::ceph;
use crate::conditions::BACKUP_BACKEND_READY;
use crate::error::Error;
use crate::pass::{BackupProjection, Pass, StepResult};
use crate::satellites::{
    DEFAULT_BACKUP_COMPRESSION, DEFAULT_BACKUP_FILE_SIZE, Satellite, USER_KEY, backup_backend_kind,
};
use crate::steps::backends::{CEPH_CONF, KEYRING, RETAIN, list};

/// The data key of the backup Secret.
pub(crate) const BACKUP_CONF: &str = "backup.conf";

/// `{cinder}-backup-{name}`.
pub(crate) fn base_name(cinder: &str, backup: &str) -> String {
    format!("{cinder}-backup-{backup}")
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let listed = list(pass, &backup_backend_kind())?;
    let gate = |b: &Satellite| b.credentials_ready();
    let always = |_: &Satellite| true;
    let collection = collect(CollectParams {
        items: listed.iter().collect(),
        gate: Some(&gate),
        is_default: Some(&always),
    });
    pass.backup = None;
    if collection.attached.is_empty() {
        pass.condition(
            BACKUP_BACKEND_READY,
            true,
            "NoBackupBackend",
            "No CinderBackupBackend is attached; the backup service is not rendered",
        );
        return Ok(None);
    }
    if collection.gated.len() > 1 {
        let names: Vec<&str> = collection.gated.iter().map(|b| b.name()).collect();
        let message = format!(
            "More than one attached, credential-ready CinderBackupBackend ({}); exactly one is \
             supported",
            names.join(", ")
        );
        pass.condition(
            BACKUP_BACKEND_READY,
            false,
            "MultipleBackupBackends",
            &message,
        );
        return Ok(None);
    }
    let Some(backup) = collection.gated.first().copied() else {
        let names: Vec<&str> = collection.attached.iter().map(|b| b.name()).collect();
        let message = format!("Waiting for backup backend: {}", names.join(", "));
        pass.condition(
            BACKUP_BACKEND_READY,
            false,
            "WaitingForBackupBackend",
            &message,
        );
        return Ok(None);
    };
    let data = match render(pass, backup)? {
        Ok(data) => data,
        Err(why) => {
            let name = backup.name();
            pass.event(
                EventType::Warning,
                "CinderBackupBackendSkipped",
                &format!("Skipping backup backend {name}: {why}"),
            );
            let message = format!("Waiting for backup backend: {name}");
            pass.condition(
                BACKUP_BACKEND_READY,
                false,
                "WaitingForBackupBackend",
                &message,
            );
            return Ok(None);
        }
    };
    let base = base_name(pass.name(), backup.name());
    let namespace = pass.namespace().to_owned();
    let secret = create_immutable_secret(pass.cluster, &pass.owner, &base, &namespace, &data)
        .map_err(|source| Error::ImmutableSecret {
            what: "backup",
            source,
        })?;
    prune_immutable_secrets(
        pass.cluster,
        &pass.owner,
        &base,
        &namespace,
        &secret,
        RETAIN,
    )
    .map_err(|source| Error::Prune {
        what: "backup",
        source: Box::new(source),
    })?;
    let message = format!("Backup backend {} is projected", backup.name());
    pass.condition(
        BACKUP_BACKEND_READY,
        true,
        "BackupBackendProjected",
        &message,
    );
    pass.backup = Some(BackupProjection {
        name: backup.name().to_owned(),
        secret,
        spec: backup.spec.clone(),
    });
    Ok(None)
}

/// The Secret data of the backup backend; `Ok(Err(why))` for a fault of its own.
fn render(
    pass: &Pass<'_>,
    backup: &Satellite,
) -> Result<Result<BTreeMap<String, ByteString>, String>, Error> {
    let spec = &backup.spec;
    let mut section = BTreeMap::from([
        ("backup_use_same_host".to_owned(), "false".to_owned()),
        ("host".to_owned(), format!("{}-backup", pass.name())),
    ]);
    let mut data = BTreeMap::new();
    match (spec.type_.as_str(), &spec.nfs, &spec.rbd) {
        ("NFS", Some(nfs), _) => {
            let compression = if spec.compression.is_empty() {
                DEFAULT_BACKUP_COMPRESSION
            } else {
                &spec.compression
            };
            let size = spec.file_size.unwrap_or(DEFAULT_BACKUP_FILE_SIZE);
            for (key, value) in [
                ("backup_compression_algorithm", compression.to_owned()),
                (
                    "backup_driver",
                    "cinder.backup.drivers.nfs.NFSBackupDriver".to_owned(),
                ),
                ("backup_file_size", size.to_string()),
                ("backup_mount_options", nfs.mount_options().to_owned()),
                (
                    "backup_mount_point_base",
                    "/var/lib/cinder/backup_mount".to_owned(),
                ),
                ("backup_share", format!("{}:{}", nfs.server, nfs.path)),
            ] {
                section.insert(key.to_owned(), value);
            }
        }
        ("RBD", _, Some(rbd)) => {
            let key_secret = &rbd.key_secret_ref.name;
            let what = format!("reading Secret {}", pass.key(key_secret));
            let secret = pass
                .cluster
                .get_typed::<Secret>(Some(pass.namespace()), key_secret)
                .map_err(Error::cluster(what))?;
            let Some(key) = secret
                .and_then(|s| s.data)
                .and_then(|d| d.get(USER_KEY).cloned())
                .map(|v| String::from_utf8_lossy(&v.0).into_owned())
            else {
                return Ok(Err(format!(
                    "Secret {} has no key {USER_KEY:?}",
                    pass.key(key_secret)
                )));
            };
            let (conf, _) = ceph::file_names(rbd);
            for (key, value) in [
                ("backup_ceph_conf", format!("/etc/ceph/{conf}")),
                ("backup_ceph_pool", rbd.pool.clone()),
                ("backup_ceph_user", rbd.user.clone()),
                (
                    "backup_driver",
                    "cinder.backup.drivers.ceph.CephBackupDriver".to_owned(),
                ),
            ] {
                section.insert(key.to_owned(), value);
            }
            let keyring = ceph::keyring(rbd, &key);
            if keyring.trim_end().lines().count() != 2 || keyring.contains('\r') {
                return Ok(Err(control_char()));
            }
            data.insert(
                CEPH_CONF.to_owned(),
                ByteString(ceph::ceph_conf(rbd).into_bytes()),
            );
            data.insert(KEYRING.to_owned(), ByteString(keyring.into_bytes()));
        }
        (type_, _, _) => {
            return Ok(Err(format!(
                "backup backend {} has type {type_} but no {} block",
                backup.name(),
                type_.to_ascii_lowercase()
            )));
        }
    }
    for (key, value) in &spec.extra_options {
        section.entry(key.clone()).or_insert_with(|| value.clone());
    }
    if section
        .iter()
        .any(|(k, v)| k.contains(['\n', '\r']) || v.contains(['\n', '\r']))
    {
        return Ok(Err(control_char()));
    }
    let sections =
        wasm_operator_sdk::blocks::config::ini::Sections::from([("DEFAULT".to_owned(), section)]);
    let conf = wasm_operator_sdk::blocks::config::ini::render_ini(&sections);
    data.insert(BACKUP_CONF.to_owned(), ByteString(conf.into_bytes()));
    Ok(Ok(data))
}

fn control_char() -> String {
    "an option name or value contains a newline or carriage-return character".to_owned()
}

#[cfg(test)]
#[path = "backup_backend_tests.rs"]
mod tests;
