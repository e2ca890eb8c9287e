//! The pods every Cinder Deployment runs: the image, the config Secret at
//! `/etc/cinder/cinder.conf.d/`, the connection and service password from the
//! environment, the connection's hash on the template; and the one-container Deployment
//! the API, each cinder-volume and the cinder-backup are built as.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Container, KeyToPath, PodSpec, PodTemplateSpec, SecretVolumeSource, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::pass::Pass;
use crate::steps::config::CONFIG_VOLUME;
use wasm_operator_sdk::blocks::service::authtoken;
use wasm_operator_sdk::blocks::service::connection::connection_env;

/// Where the config Secret is mounted.
pub(crate) const CONFIG_DIR: &str = "/etc/cinder/cinder.conf.d/";
/// The pod annotation carrying the connection string's SHA-256.
pub(crate) const CONNECTION_HASH_ANNOTATION: &str = "cinder.openstack.c5c3.io/db-connection-hash";

/// The labels of a component's pods.
pub(crate) fn labels(cinder: &str, component: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "cinder".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), cinder.to_owned()),
        (
            "app.kubernetes.io/component".to_owned(),
            component.to_owned(),
        ),
    ])
}

/// A volume of Secret `secret`, the `items` as `(key, path)` (all keys when empty).
pub(crate) fn secret_volume(name: &str, secret: &str, items: &[(&str, &str)]) -> Volume {
    let items: Vec<KeyToPath> = items
        .iter()
        .map(|(key, path)| KeyToPath {
            key: (*key).to_owned(),
            path: (*path).to_owned(),
            ..Default::default()
        })
        .collect();
    Volume {
        name: name.to_owned(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(secret.to_owned()),
            items: (!items.is_empty()).then_some(items),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A read-only mount of volume `name` at `path`.
pub(crate) fn mount(name: &str, path: &str) -> VolumeMount {
    VolumeMount {
        name: name.to_owned(),
        mount_path: path.to_owned(),
        read_only: Some(true),
        ..Default::default()
    }
}

/// What distinguishes one Cinder Deployment from another.
pub(crate) struct Workload<'a> {
    /// The Deployment's name.
    pub(crate) name: String,
    /// `api`, `volume-{backend}`, `backup`.
    pub(crate) component: String,
    /// The process and its arguments (the config dir is added).
    pub(crate) command: Vec<String>,
    /// Volumes and mounts beyond the config.
    pub(crate) volumes: Vec<Volume>,
    pub(crate) mounts: Vec<VolumeMount>,
    /// Replicas; 1 and the Recreate strategy for the volume and backup services.
    pub(crate) replicas: i32,
    pub(crate) recreate: bool,
    pub(crate) pass: &'a Pass<'a>,
}

impl Workload<'_> {
    /// The Deployment.
    pub(crate) fn deployment(self) -> Deployment {
        let pass = self.pass;
        let spec = &pass.cinder.spec;
        let password = authtoken::password_env(&pass.service());
        let mut command = self.command;
        command.extend(["--config-dir".to_owned(), CONFIG_DIR.to_owned()]);
        let mut mounts = vec![mount(CONFIG_VOLUME, CONFIG_DIR)];
        mounts.extend(self.mounts);
        let mut volumes = vec![secret_volume(CONFIG_VOLUME, &pass.config_secret, &[])];
        volumes.extend(self.volumes);
        let labels = labels(pass.name(), &self.component);
        let container = Container {
            name: format!("cinder-{}", self.component),
            image: Some(spec.image.reference()),
            command: Some(command),
            env: Some(vec![connection_env(pass.name()), password]),
            volume_mounts: Some(mounts),
            ..Default::default()
        };
        Deployment {
            metadata: ObjectMeta {
                name: Some(self.name),
                namespace: Some(pass.namespace().to_owned()),
                labels: Some(labels.clone()),
                ..Default::default()
            },
            spec: DeploymentSpec {
                replicas: Some(self.replicas),
                selector: LabelSelector {
                    match_labels: Some(labels.clone()),
                    ..Default::default()
                },
                strategy: self.recreate.then(|| DeploymentStrategy {
                    type_: Some("Recreate".into()),
                    ..Default::default()
                }),
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(labels),
                        annotations: Some(BTreeMap::from([(
                            CONNECTION_HASH_ANNOTATION.to_owned(),
                            pass.db_connection_hash.clone(),
                        )])),
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
}
