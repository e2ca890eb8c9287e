//! The objects of one key kind's rotation (facts §2.8–2.12): the staging Secret, the
//! rotation RBAC, the CronJob and the backup PushSecret.

use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec, JobSpec, JobTemplateSpec};
use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, Container, EmptyDirVolumeSource, EnvVar, PodSpec, PodTemplateSpec,
    Secret, ServiceAccount, Volume,
};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::external::eso::PushSecret;

use super::KeyKind;
use crate::labels::{common_labels, component_labels};
use crate::pass::Pass;
use crate::pod;
use crate::rotation::{self, meta};

/// The staging Secret: labels only, so an apply never touches the data the CronJob
/// stages.
pub(crate) fn staging_secret(pass: &Pass<'_>, kind: &KeyKind) -> Secret {
    rotation::staging_secret(
        pass,
        kind.staging(pass.name()),
        &format!("{}-keys", kind.name),
    )
}

/// The ServiceAccount, Role and RoleBinding the CronJob runs as: get of the keys Secret,
/// get and patch of the staging Secret, nothing else.
pub(crate) fn rbac(pass: &Pass<'_>, kind: &KeyKind) -> (ServiceAccount, Role, RoleBinding) {
    rotation::rbac(
        pass,
        &kind.rotate(pass.name()),
        &kind.secret(pass.name()),
        &kind.staging(pass.name()),
    )
}

/// The rotation CronJob (facts §2.10).
pub(crate) fn cron_job(pass: &Pass<'_>, kind: &KeyKind, config_map: &str, script: &str) -> CronJob {
    let name = pass.name();
    let spec = &pass.keystone.spec;
    let rotation = kind.spec(&pass.keystone);
    let own_dir = format!("/etc/keystone/{}-keys", kind.name);
    let other_dir = format!("/etc/keystone/{}-keys", kind.other);
    let src = format!("{}-keys-src", kind.name);
    let own = format!("{}-keys", kind.name);
    let other = format!("{}-keys", kind.other);
    let copy = Container {
        name: "copy-keys".into(),
        image: Some(spec.image.reference()),
        command: Some(vec![
            "sh".into(),
            "-c".into(),
            format!("install -m 0400 /{src}/* {own_dir}/"),
        ]),
        volume_mounts: Some(vec![
            pod::read_only(&src, &format!("/{src}")),
            writable(&own, &own_dir),
        ]),
        security_context: Some(pod::restricted()),
        ..Default::default()
    };
    let (config_volume, config_mount) = pod::config(config_map);
    let mut mounts = vec![
        writable(&own, &own_dir),
        pod::read_only(&other, &other_dir),
        config_mount,
        pod::read_only("scripts", "/scripts"),
    ];
    let mut volumes = vec![
        pod::secret_volume(&src, &kind.secret(name), 0o400),
        Volume {
            name: own.clone(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Default::default()
        },
        pod::secret_volume(&other, &format!("{name}-{}-keys", kind.other), 0o400),
        config_volume,
        Volume {
            name: "scripts".into(),
            config_map: Some(ConfigMapVolumeSource {
                name: script.into(),
                default_mode: Some(0o555),
                ..Default::default()
            }),
            ..Default::default()
        },
    ];
    if let Some((volume, mount)) = pod::domains(pass) {
        volumes.push(volume);
        mounts.push(mount);
    }
    let mut env = crate::rotation::staging_env(kind.staging(name));
    env.push(EnvVar {
        name: kind.max_active_keys_env.into(),
        value: Some(rotation.active_keys().to_string()),
        value_from: None,
    });
    env.push(pod::db_connection_env(name));
    let rotate = Container {
        name: format!("{}-rotate", kind.name),
        image: Some(spec.image.reference()),
        command: Some(vec![format!("/scripts/{}", kind.script_key())]),
        env: Some(env),
        volume_mounts: Some(mounts),
        security_context: Some(pod::restricted()),
        ..Default::default()
    };
    CronJob {
        metadata: meta(pass, kind.rotate(name), common_labels(name)),
        spec: CronJobSpec {
            schedule: rotation.rotation_schedule.clone(),
            suspend: Some(rotation.suspend),
            job_template: JobTemplateSpec {
                metadata: None,
                spec: Some(JobSpec {
                    template: PodTemplateSpec {
                        metadata: Some(ObjectMeta {
                            labels: Some(component_labels(
                                name,
                                &format!("{}-rotation", kind.name),
                            )),
                            ..Default::default()
                        }),
                        spec: Some(PodSpec {
                            service_account_name: Some(kind.rotate(name)),
                            restart_policy: Some("OnFailure".into()),
                            priority_class_name: spec.deployment.priority_class_name.clone(),
                            security_context: Some(pod::pod_security()),
                            init_containers: Some(vec![copy]),
                            containers: vec![rotate],
                            volumes: Some(volumes),
                            ..Default::default()
                        }),
                    },
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    }
}

fn writable(volume: &str, path: &str) -> k8s_openapi::api::core::v1::VolumeMount {
    k8s_openapi::api::core::v1::VolumeMount {
        name: volume.into(),
        mount_path: path.into(),
        ..Default::default()
    }
}

/// The PushSecret backing the keys Secret up to the store (facts §2.12).
pub(crate) fn backup(pass: &Pass<'_>, kind: &KeyKind) -> PushSecret {
    let name = pass.name();
    rotation::backup_push_secret(
        pass,
        format!("{name}-{}-keys-backup", kind.name),
        "Delete",
        kind.secret(name),
        format!(
            "openstack/keystone/{}/{name}/{}-keys",
            pass.namespace(),
            kind.name
        ),
        None,
    )
}
