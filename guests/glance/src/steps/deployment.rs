//! Deployment (facts §3.3, §4; the handshake's step 4): the glance-api Deployment `{name}`
//! mounting the config and backends Secrets, its Service `{name}` on 9292, and the API's
//! readiness.
//!
//! | Case | DeploymentReady | GlanceAPIReady | Pass |
//! |---|---|---|---|
//! | no config to mount (no valid projection, no last good one) | False `WaitingForBackends` "Waiting for a valid backends projection: exactly one credential-ready backend must be marked isDefault" | False `WaitingForDeployment` | goes on, no Deployment made |
//! | applied, not every replica ready on the current template | False `DeploymentNotReady` "Deployment {name} is rolling out (r/d ready)" | False `WaitingForDeployment` | 10 s |
//! | applied and ready | True `DeploymentReady` "Deployment {name} is ready" | True `APIAvailable` "Glance API is served at {endpoint}" | goes on; status.endpoint set |
//!
//! The pod template mounts `config` (`{name}-config-{hash}`) at
//! `/etc/glance/glance-api.conf.d/` and `backends` (`{name}-backends-{hash}`) at
//! `/etc/glance/backends.conf.d/`, loaded as the second `--config-dir`: a new backends
//! Secret name is a new pod template, so the pods roll (the handshake's step 4). The
//! connection string and the service user's password come from the environment; the
//! template carries the connection's SHA-256, so a new database password rolls too.
//!
//! DECISION: GlanceAPIReady follows the Deployment's readiness (no health probe of the API
//! yet: there is no Glance to answer one here); the README lists it as minimal.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, PodSpec, PodTemplateSpec, SecretVolumeSource, Service, Volume,
    VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use wasm_operator_sdk::blocks::deployment::{
    ensure_deployment, ensure_service, is_deployment_ready,
};
use wasm_operator_sdk::blocks::service::api;

use crate::conditions::{DEPLOYMENT_READY, GLANCE_API_READY};
use crate::error::Error;
use crate::pass::{DEPLOYMENT_POLLING, Pass, StepResult};
use crate::steps::config::{API_PORT, BACKENDS_VOLUME, CONFIG_VOLUME};
use wasm_operator_sdk::blocks::service::authtoken;
use wasm_operator_sdk::blocks::service::connection::connection_env;

/// Where the config Secret is mounted.
pub(crate) const CONFIG_DIR: &str = "/etc/glance/glance-api.conf.d/";
/// Where the backends Secret is mounted.
pub(crate) const BACKENDS_DIR: &str = "/etc/glance/backends.conf.d/";
/// The pod annotation carrying the connection string's SHA-256.
pub(crate) const CONNECTION_HASH_ANNOTATION: &str = "glance.openstack.c5c3.io/db-connection-hash";

const NO_CONFIG: &str = "Waiting for a valid backends projection: exactly one credential-ready \
                         backend must be marked isDefault";

/// The labels of the Glance's pods.
fn labels(glance: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "glance".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), glance.to_owned()),
        ("app.kubernetes.io/component".to_owned(), "api".to_owned()),
    ])
}

/// `http://{name}.{ns}.svc.cluster.local:9292`.
pub(crate) fn endpoint(pass: &Pass<'_>) -> String {
    api::endpoint(&pass.service(), API_PORT)
}

fn secret_volume(name: &str, secret: &str) -> Volume {
    Volume {
        name: name.to_owned(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(secret.to_owned()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn mount(name: &str, path: &str) -> VolumeMount {
    VolumeMount {
        name: name.to_owned(),
        mount_path: path.to_owned(),
        read_only: Some(true),
        ..Default::default()
    }
}

/// The Deployment `{name}` over the config and backends Secrets the pass settled on.
pub(crate) fn deployment(pass: &Pass<'_>) -> Deployment {
    let name = pass.name();
    let spec = &pass.glance.spec;
    let password = authtoken::password_env(&pass.service());
    let container = Container {
        name: "glance-api".into(),
        image: Some(spec.image.reference()),
        command: Some(vec![
            "glance-api".into(),
            "--config-dir".into(),
            CONFIG_DIR.into(),
            "--config-dir".into(),
            BACKENDS_DIR.into(),
        ]),
        ports: Some(vec![ContainerPort {
            name: Some("glance-api".into()),
            container_port: API_PORT,
            ..Default::default()
        }]),
        env: Some(vec![connection_env(name), password]),
        volume_mounts: Some(vec![
            mount(CONFIG_VOLUME, CONFIG_DIR),
            mount(BACKENDS_VOLUME, BACKENDS_DIR),
        ]),
        ..Default::default()
    };
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(labels(name)),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(spec.replicas.unwrap_or(1)),
            selector: LabelSelector {
                match_labels: Some(labels(name)),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(name)),
                    annotations: Some(BTreeMap::from([(
                        CONNECTION_HASH_ANNOTATION.to_owned(),
                        pass.db_connection_hash.clone(),
                    )])),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    volumes: Some(vec![
                        secret_volume(CONFIG_VOLUME, &pass.config_secret),
                        secret_volume(BACKENDS_VOLUME, &pass.backends_secret),
                    ]),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    }
}

/// The Service `{name}` in front of the API.
fn service(pass: &Pass<'_>) -> Service {
    api::api_service(
        &pass.service(),
        &labels(pass.name()),
        "glance-api",
        API_PORT,
    )
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    if pass.config_secret.is_empty() || pass.backends_secret.is_empty() {
        pass.condition(DEPLOYMENT_READY, false, "WaitingForBackends", NO_CONFIG);
        pass.condition(
            GLANCE_API_READY,
            false,
            "WaitingForDeployment",
            "Glance API waits for its Deployment",
        );
        return Ok(None);
    }
    let applied =
        ensure_deployment(pass.cluster, &pass.owner, &deployment(pass)).map_err(|source| {
            Error::Workload {
                what: "Deployment",
                source,
            }
        })?;
    ensure_service(pass.cluster, &pass.owner, &service(pass)).map_err(|source| {
        Error::Workload {
            what: "Service",
            source,
        }
    })?;
    if !is_deployment_ready(&applied) {
        let ready = applied
            .status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0);
        let desired = applied.spec.replicas.unwrap_or(1);
        let message = format!(
            "Deployment {} is rolling out ({ready}/{desired} ready)",
            pass.name()
        );
        pass.condition(DEPLOYMENT_READY, false, "DeploymentNotReady", &message);
        pass.condition(
            GLANCE_API_READY,
            false,
            "WaitingForDeployment",
            "Glance API waits for its Deployment",
        );
        return Ok(Some(DEPLOYMENT_POLLING));
    }
    let message = format!("Deployment {} is ready", pass.name());
    pass.condition(DEPLOYMENT_READY, true, "DeploymentReady", &message);
    let endpoint = endpoint(pass);
    pass.condition(
        GLANCE_API_READY,
        true,
        "APIAvailable",
        &format!("Glance API is served at {endpoint}"),
    );
    pass.status_mut().endpoint = endpoint;
    Ok(None)
}

#[cfg(test)]
#[path = "deployment_tests.rs"]
mod tests;
