//! Deployment (facts §3.6, §4; the handshake's step 4): the barbican-api Deployment
//! `{name}` mounting the config Secret, its Service `{name}` on 9311, and the API's
//! readiness.
//!
//! | Case | DeploymentReady | BarbicanAPIReady | Pass |
//! |---|---|---|---|
//! | the projection is invalid | False `WaitingForSecretStores` "Waiting for a valid secret-store projection: see SecretStoresReady" (the Deployment, if any, left as it runs) | as the running Deployment is | goes on |
//! | applied, not every replica ready | False `DeploymentNotReady` "Deployment {name} is rolling out (r/d ready)" | False `WaitingForDeployment` | 10 s |
//! | applied and ready | True `DeploymentReady` "Deployment {name} is ready" | True `APIAvailable` "Barbican API is served at {endpoint}" | goes on; status.endpoint set |
//!
//! The pod template mounts `config` (`{name}-config-{hash}`) at `/etc/barbican` and, when
//! the default store has one, `secret-store-ca` (its `ca.crt`, mode 0444) at
//! `/etc/barbican-secret-store-ca`: a new config Secret name is a new pod template, so the
//! pods roll (the handshake's step 4). The AppRole secret ID reaches the pods as
//! `OS_VAULT_PLUGIN__APPROLE_SECRET_ID` from the default store's credentials Secret, and
//! its SHA-256 is the pod annotation `barbican.c5c3.io/secret-store-credentials-hash`, so
//! a new secret ID rolls the pods too.
//!
//! DECISION: BarbicanAPIReady follows the Deployment's readiness (no health probe of the
//! API yet: there is no Barbican to answer one here); the README lists it as minimal.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, EnvVarSource, KeyToPath, PodSpec, PodTemplateSpec,
    SecretKeySelector, SecretVolumeSource, Service, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use wasm_operator_sdk::ClusterExt as _;
use wasm_operator_sdk::blocks::deployment::{
    ensure_deployment, ensure_service, is_deployment_ready,
};
use wasm_operator_sdk::blocks::service::api;

use crate::conditions::{BARBICAN_API_READY, DEPLOYMENT_READY};
use crate::error::Error;
use crate::pass::{DEPLOYMENT_POLLING, Pass, StepResult};
use crate::steps::config::{API_PORT, BARBICAN_CONF, CONFIG_VOLUME};
use crate::store::{CA_KEY, SECRET_ID_KEY};
use wasm_operator_sdk::blocks::service::authtoken;
use wasm_operator_sdk::blocks::service::connection::connection_env;

/// Where the config Secret is mounted.
pub(crate) const CONFIG_DIR: &str = "/etc/barbican";
/// The CA volume and where it is mounted.
pub(crate) const CA_VOLUME: &str = "secret-store-ca";
pub(crate) const CA_DIR: &str = "/etc/barbican-secret-store-ca";
/// The pod annotation carrying the connection string's SHA-256.
pub(crate) const CONNECTION_HASH_ANNOTATION: &str = "barbican.openstack.c5c3.io/db-connection-hash";
/// The pod annotation carrying the AppRole secret ID's SHA-256.
pub(crate) const CREDENTIALS_HASH_ANNOTATION: &str =
    "barbican.c5c3.io/secret-store-credentials-hash";

const NO_PROJECTION: &str = "Waiting for a valid secret-store projection: see SecretStoresReady";

/// The labels of the Barbican's pods.
fn labels(barbican: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "barbican".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), barbican.to_owned()),
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
    let spec = &pass.barbican.spec;
    let password = authtoken::password_env(&pass.service());
    let projection = &pass.projection;
    let secret_id = EnvVar {
        name: "OS_VAULT_PLUGIN__APPROLE_SECRET_ID".into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: projection.credentials_secret.clone(),
                key: SECRET_ID_KEY.into(),
                optional: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut mounts = vec![mount(CONFIG_VOLUME, CONFIG_DIR)];
    let mut volumes = vec![secret_volume(CONFIG_VOLUME, &pass.config_secret)];
    if let Some(ca) = &projection.ca_secret {
        mounts.push(mount(CA_VOLUME, CA_DIR));
        volumes.push(Volume {
            name: CA_VOLUME.into(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(ca.clone()),
                default_mode: Some(0o444),
                items: Some(vec![KeyToPath {
                    key: CA_KEY.into(),
                    path: CA_KEY.into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
    let container = Container {
        name: "barbican-api".into(),
        image: Some(spec.image.reference()),
        command: Some(vec![
            "barbican-api".into(),
            "--config-file".into(),
            format!("{CONFIG_DIR}/{BARBICAN_CONF}"),
        ]),
        ports: Some(vec![ContainerPort {
            name: Some("barbican-api".into()),
            container_port: API_PORT,
            ..Default::default()
        }]),
        env: Some(vec![connection_env(name), password, secret_id]),
        volume_mounts: Some(mounts),
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
                    annotations: Some(BTreeMap::from([
                        (
                            CONNECTION_HASH_ANNOTATION.to_owned(),
                            pass.db_connection_hash.clone(),
                        ),
                        (
                            CREDENTIALS_HASH_ANNOTATION.to_owned(),
                            projection.secret_id_digest.clone(),
                        ),
                    ])),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    volumes: Some(volumes),
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
        "barbican-api",
        API_PORT,
    )
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    if !pass.projection.valid || pass.config_secret.is_empty() {
        pass.condition(
            DEPLOYMENT_READY,
            false,
            "WaitingForSecretStores",
            NO_PROJECTION,
        );
        let what = format!("reading Deployment {}", pass.key(pass.name()));
        let running = pass
            .cluster
            .get_typed::<Deployment>(Some(pass.namespace()), pass.name())
            .map_err(Error::cluster(what))?;
        match running.filter(is_deployment_ready) {
            Some(_) => api_available(pass),
            None => pass.condition(
                BARBICAN_API_READY,
                false,
                "WaitingForDeployment",
                "Barbican API waits for its Deployment",
            ),
        }
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
            BARBICAN_API_READY,
            false,
            "WaitingForDeployment",
            "Barbican API waits for its Deployment",
        );
        return Ok(Some(DEPLOYMENT_POLLING));
    }
    let message = format!("Deployment {} is ready", pass.name());
    pass.condition(DEPLOYMENT_READY, true, "DeploymentReady", &message);
    api_available(pass);
    Ok(None)
}

/// BarbicanAPIReady True at the endpoint, which status.endpoint records.
fn api_available(pass: &mut Pass<'_>) {
    let endpoint = endpoint(pass);
    pass.condition(
        BARBICAN_API_READY,
        true,
        "APIAvailable",
        &format!("Barbican API is served at {endpoint}"),
    );
    pass.status_mut().service.endpoint = endpoint;
}

#[cfg(test)]
#[path = "deployment_tests.rs"]
mod tests;
