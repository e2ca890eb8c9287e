//! BackupService (facts §3.5, §4): the cinder-backup Deployment `{cinder}-backup` over the
//! BackupBackend step's projection.
//!
//! | Case | What the step does | BackupServiceReady |
//! |---|---|---|
//! | no projection (none attached, several, or waiting) | the Deployment deleted when there is one | True `BackupNotConfigured` "No backup backend is projected; the backup service does not run" |
//! | projected, the Deployment not ready | applied (1 replica, Recreate, 2Gi memory, `MALLOC_ARENA_MAX=2`) | False `WaitingForBackupService` "Deployment {cinder}-backup is rolling out" (10 s) |
//! | projected and ready | — | True `BackupServiceReady` "Deployment {cinder}-backup serves backup backend {name}" |
//!
//! The pod mounts the backup Secret as volume `backup` (its `backup.conf` at
//! `/etc/cinder/backup.conf.d/backup.conf`, a further config dir), and for RBD its Ceph
//! files as `ceph` at `/etc/ceph`.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use wasm_operator_sdk::blocks::deployment::{ensure_deployment, is_deployment_ready};
use wasm_operator_sdk::{ClusterExt, Propagation};

use crate::ceph;
use crate::conditions::BACKUP_SERVICE_READY;
use crate::error::Error;
use crate::pass::{BackupProjection, DEPLOYMENT_POLLING, Pass, StepResult};
use crate::steps::backends::{CEPH_CONF, KEYRING};
use crate::steps::backup_backend::BACKUP_CONF;
use crate::workload::{Workload, mount, secret_volume};

/// `{cinder}-backup`.
pub(crate) fn deployment_name(cinder: &str) -> String {
    format!("{cinder}-backup")
}

/// The cinder-backup Deployment over `backup`.
pub(crate) fn deployment(pass: &Pass<'_>, backup: &BackupProjection) -> Deployment {
    let mut volumes = vec![secret_volume(
        "backup",
        &backup.secret,
        &[(BACKUP_CONF, BACKUP_CONF)],
    )];
    let mut mounts = vec![mount("backup", "/etc/cinder/backup.conf.d/")];
    if let Some(rbd) = &backup.spec.rbd {
        let (conf, keyring) = ceph::file_names(rbd);
        volumes.push(secret_volume(
            "ceph",
            &backup.secret,
            &[(CEPH_CONF, conf.as_str()), (KEYRING, keyring.as_str())],
        ));
        mounts.push(mount("ceph", "/etc/ceph"));
    }
    let mut deployment = Workload {
        name: deployment_name(pass.name()),
        component: "backup".into(),
        command: vec![
            "cinder-backup".into(),
            "--config-dir".into(),
            "/etc/cinder/backup.conf.d/".into(),
        ],
        volumes,
        mounts,
        replicas: 1,
        recreate: true,
        pass,
    }
    .deployment();
    if let Some(container) = deployment
        .spec
        .template
        .spec
        .as_mut()
        .and_then(|p| p.containers.first_mut())
    {
        container.env.get_or_insert_default().push(EnvVar {
            name: "MALLOC_ARENA_MAX".into(),
            value: Some("2".into()),
            ..Default::default()
        });
        container.resources = Some(ResourceRequirements {
            limits: Some([("memory".to_owned(), Quantity("2Gi".into()))].into()),
            ..Default::default()
        });
    }
    deployment
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let name = deployment_name(pass.name());
    let Some(backup) = pass.backup.clone() else {
        let what = format!("reading Deployment {}", pass.key(&name));
        let running = pass
            .cluster
            .get_typed::<Deployment>(Some(pass.namespace()), &name)
            .map_err(Error::cluster(what))?;
        if running.is_some_and(|d| {
            wasm_operator_sdk::blocks::apply::is_controlled_by(&d.metadata, &pass.owner.uid)
        }) {
            let what = format!("deleting Deployment {}", pass.key(&name));
            pass.cluster
                .delete_typed::<Deployment>(Some(pass.namespace()), &name, Propagation::Background)
                .map_err(Error::cluster(what))?;
        }
        pass.condition(
            BACKUP_SERVICE_READY,
            true,
            "BackupNotConfigured",
            "No backup backend is projected; the backup service does not run",
        );
        return Ok(None);
    };
    let applied = ensure_deployment(pass.cluster, &pass.owner, &deployment(pass, &backup))
        .map_err(|source| Error::Workload {
            what: "cinder-backup Deployment",
            source,
        })?;
    if !is_deployment_ready(&applied) {
        let message = format!("Deployment {name} is rolling out");
        pass.condition(
            BACKUP_SERVICE_READY,
            false,
            "WaitingForBackupService",
            &message,
        );
        return Ok(Some(DEPLOYMENT_POLLING));
    }
    let message = format!("Deployment {name} serves backup backend {}", backup.name);
    pass.condition(BACKUP_SERVICE_READY, true, "BackupServiceReady", &message);
    Ok(None)
}
