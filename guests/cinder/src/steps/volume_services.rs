//! VolumeServices (facts §3.4, §4; the handshake's step 4 for Cinder): one cinder-volume
//! Deployment `{cinder}-volume-{name}` per projected CinderBackend, and the service
//! removal of a deleted one.
//!
//! | Case | What the step does | VolumeServicesReady |
//! |---|---|---|
//! | a projected backend | its Deployment applied (1 replica, Recreate) | — |
//! | a Deployment of a backend no longer projected | deleted | — |
//! | a deleting backend holding `cinder.openstack.c5c3.io/service-remove` | Job `{cinder}-{name}-service-remove` runs `cinder-manage service remove cinder-volume {cinder}@{name}` (exit code 2, "no such service", counts as done); once complete the finalizer is released | False `ServiceRemoveJobFailed` "service removal of backend b failed: …" when the Job failed (the pass fails) |
//! | no backend | — | True `NoBackends` "No CinderBackend is attached; no volume service runs" |
//! | a Deployment not ready, or a removal running | — | False `WaitingForVolumeServices` "Waiting for volume services: a, b" (10 s) |
//! | all ready | — | True `AllVolumeServicesReady` "All 2 volume services are ready"; status.volumeServices |
//!
//! The pod mounts the backend's Secret as `backend` at `/etc/cinder/backends.conf.d/`
//! (`backend.conf`, NFS `{name}.shares`), its `volume.conf` as `volume-overlay` at
//! `/etc/cinder/volume.conf.d/`, and for RBD its Ceph files as `ceph` at `/etc/ceph`.
//!
//! DECISION: the NFS export is not mounted into the pod (CobaltCore mounts it through the
//! inline `nfs.csi.k8s.io` CSI driver, which no cluster here runs); cinder-volume mounts
//! the share itself from `nfs_shares_config`.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;
use wasm_operator_sdk::blocks::deployment::{ensure_deployment, is_deployment_ready};
use wasm_operator_sdk::blocks::job::run_job;
use wasm_operator_sdk::{ClusterExt, ListOptions, Propagation};

use crate::ceph;
use crate::conditions::VOLUME_SERVICES_READY;
use crate::error::Error;
use crate::pass::{BackendProjection, DEPLOYMENT_POLLING, Pass, StepResult};
use crate::satellites::{SERVICE_REMOVE_FINALIZER, Satellite, backend_kind};
use crate::steps::backends::{BACKEND_CONF, CEPH_CONF, KEYRING, SHARES, VOLUME_CONF, list};
use crate::types::VolumeServiceStatus;
use crate::workload::{Workload, labels, mount, secret_volume};
use wasm_operator_sdk::blocks::service::connection::connection_env;

/// `{cinder}-volume-{backend}`.
pub(crate) fn deployment_name(cinder: &str, backend: &str) -> String {
    format!("{cinder}-volume-{backend}")
}

/// `{cinder}-{backend}-service-remove`.
pub(crate) fn removal_job_name(cinder: &str, backend: &str) -> String {
    format!("{cinder}-{backend}-service-remove")
}

/// The Deployment of `backend`.
pub(crate) fn deployment(pass: &Pass<'_>, backend: &BackendProjection) -> Deployment {
    let name = &backend.name;
    let shares = format!("{name}.shares");
    let mut items = vec![(BACKEND_CONF, BACKEND_CONF)];
    if backend.spec.nfs.is_some() {
        items.push((SHARES, shares.as_str()));
    }
    let mut volumes = vec![
        secret_volume("backend", &backend.secret, &items),
        secret_volume(
            "volume-overlay",
            &backend.secret,
            &[(VOLUME_CONF, VOLUME_CONF)],
        ),
    ];
    let mut mounts = vec![
        mount("backend", "/etc/cinder/backends.conf.d/"),
        mount("volume-overlay", "/etc/cinder/volume.conf.d/"),
    ];
    if let Some(rbd) = &backend.spec.rbd {
        let (conf, keyring) = ceph::file_names(rbd);
        volumes.push(secret_volume(
            "ceph",
            &backend.secret,
            &[(CEPH_CONF, conf.as_str()), (KEYRING, keyring.as_str())],
        ));
        mounts.push(mount("ceph", "/etc/ceph"));
    }
    Workload {
        name: deployment_name(pass.name(), name),
        component: format!("volume-{name}"),
        command: vec![
            "cinder-volume".into(),
            "--config-dir".into(),
            "/etc/cinder/backends.conf.d/".into(),
            "--config-dir".into(),
            "/etc/cinder/volume.conf.d/".into(),
        ],
        volumes,
        mounts,
        replicas: 1,
        recreate: true,
        pass,
    }
    .deployment()
}

/// The service-remove Job of `backend`.
pub(crate) fn removal_job(pass: &Pass<'_>, backend: &str) -> Job {
    let host = format!("{}@{backend}", pass.name());
    let script = format!(
        "cinder-manage service remove cinder-volume {host}; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 2 ]"
    );
    Job {
        metadata: ObjectMeta {
            name: Some(removal_job_name(pass.name(), backend)),
            namespace: Some(pass.namespace().to_owned()),
            ..Default::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(4),
            template: PodTemplateSpec {
                metadata: None,
                spec: Some(PodSpec {
                    restart_policy: Some("OnFailure".into()),
                    containers: vec![Container {
                        name: "service-remove".into(),
                        image: Some(pass.cinder.spec.image.reference()),
                        command: Some(vec!["/bin/sh".into(), "-c".into(), script]),
                        env: Some(vec![connection_env(pass.name())]),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    }
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let projected = pass.backends.clone();
    let mut waiting = Vec::new();
    for backend in &projected {
        let applied = ensure_deployment(pass.cluster, &pass.owner, &deployment(pass, backend))
            .map_err(|source| Error::Workload {
                what: "cinder-volume Deployment",
                source,
            })?;
        if !is_deployment_ready(&applied) {
            waiting.push(backend.name.clone());
        }
    }
    let names: Vec<String> = projected.iter().map(|b| b.name.clone()).collect();
    delete_stale(pass, &names)?;
    let deleting: Vec<Satellite> = list(pass, &backend_kind())?;
    for backend in deleting
        .iter()
        .filter(|b| b.metadata.deletion_timestamp.is_some() && b.holds_service_remove())
    {
        if !remove_service(pass, backend)? {
            waiting.push(format!("{} (service removal)", backend.name()));
        }
    }
    pass.status_mut().volume_services = projected
        .iter()
        .map(|b| VolumeServiceStatus {
            backend: b.name.clone(),
            host: format!("{}@{}", pass.name(), b.name),
        })
        .collect();
    if !waiting.is_empty() {
        let message = format!("Waiting for volume services: {}", waiting.join(", "));
        pass.condition(
            VOLUME_SERVICES_READY,
            false,
            "WaitingForVolumeServices",
            &message,
        );
        return Ok(Some(DEPLOYMENT_POLLING));
    }
    if projected.is_empty() {
        pass.condition(
            VOLUME_SERVICES_READY,
            true,
            "NoBackends",
            "No CinderBackend is attached; no volume service runs",
        );
    } else {
        let message = format!("All {} volume services are ready", projected.len());
        pass.condition(
            VOLUME_SERVICES_READY,
            true,
            "AllVolumeServicesReady",
            &message,
        );
    }
    Ok(None)
}

/// Deletes the cinder-volume Deployments of backends no longer projected.
fn delete_stale(pass: &Pass<'_>, projected: &[String]) -> Result<(), Error> {
    let what = format!("listing Deployments in {}", pass.namespace());
    let deployments: Vec<Deployment> = pass
        .cluster
        .list_typed(Some(pass.namespace()), &ListOptions::default())
        .map_err(Error::cluster(what))?;
    let prefix = deployment_name(pass.name(), "");
    for deployment in deployments {
        let name = deployment.metadata.name.clone().unwrap_or_default();
        let Some(backend) = name.strip_prefix(&prefix) else {
            continue;
        };
        let ours = wasm_operator_sdk::blocks::apply::is_controlled_by(
            &deployment.metadata,
            &pass.owner.uid,
        ) && deployment
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app.kubernetes.io/component"))
            == labels(pass.name(), &format!("volume-{backend}")).get("app.kubernetes.io/component");
        if ours && !projected.iter().any(|p| p == backend) {
            let what = format!("deleting Deployment {}", pass.key(&name));
            pass.cluster
                .delete_typed::<Deployment>(Some(pass.namespace()), &name, Propagation::Background)
                .map_err(Error::cluster(what))?;
        }
    }
    Ok(())
}

/// Runs the service removal of a deleted backend; `true` once its finalizer is released.
fn remove_service(pass: &mut Pass<'_>, backend: &Satellite) -> Result<bool, Error> {
    let job = removal_job(pass, backend.name());
    match run_job(pass.cluster, &pass.owner, &job) {
        Err(source) => {
            let message = format!(
                "service removal of backend {} failed: {source}",
                backend.name()
            );
            pass.condition(
                VOLUME_SERVICES_READY,
                false,
                "ServiceRemoveJobFailed",
                &message,
            );
            Err(Error::Job { source })
        }
        Ok(false) => Ok(false),
        Ok(true) => {
            let finalizers: Vec<String> = backend
                .metadata
                .finalizers
                .iter()
                .flatten()
                .filter(|f| *f != SERVICE_REMOVE_FINALIZER)
                .cloned()
                .collect();
            let what = format!(
                "releasing the finalizer of CinderBackend {}",
                pass.key(backend.name())
            );
            let resource_version = backend.metadata.resource_version.clone();
            let kind = backend_kind();
            let object = wasm_operator_sdk::ObjectRef {
                api_version: kind.api_version,
                kind: kind.kind,
                namespace: Some(pass.namespace().to_owned()),
                name: backend.name().to_owned(),
            };
            pass.primary_cluster
                .patch(
                    &object,
                    &wasm_operator_sdk::Patch::Merge(
                        json!({"metadata": {"finalizers": finalizers}}),
                    ),
                    resource_version.as_deref(),
                )
                .map_err(|e| Error::cluster(what)(e.into()))?;
            Ok(true)
        }
    }
}

#[cfg(test)]
#[path = "volume_services_tests.rs"]
mod tests;
