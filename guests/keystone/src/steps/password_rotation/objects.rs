//! The objects of the admin password rotation (facts §2.19, §2.12): the push-source and
//! staging Secrets, the RBAC, the CronJob and the backup PushSecret.

use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec, JobSpec, JobTemplateSpec};
use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, Container, EnvVar, PodSpec, PodTemplateSpec, Secret, ServiceAccount,
    Volume,
};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::blocks::secrets::rotation::validate::PASSWORD_KEY;
use wasm_operator_sdk::external::eso::PushSecret;

use super::{DEFAULT_SCHEDULE, backup_name, next_name, rotate_name, script, staging_name};
use crate::labels::{common_labels, component_labels};
use crate::pass::Pass;
use crate::pod;
use crate::rotation::{self, meta};
use crate::types::PasswordRotationSpec;

/// The label value of the staging Secret, and the component of the CronJob's pods less
/// `-rotation`.
const TARGET: &str = "admin-password";

/// The push-source Secret: labels only, so an apply never touches the password the
/// commit put there.
pub(crate) fn push_source(pass: &Pass<'_>) -> Secret {
    Secret {
        metadata: meta(pass, next_name(pass.name()), common_labels(pass.name())),
        ..Default::default()
    }
}

/// The staging Secret: labels only, so an apply never touches what the CronJob staged.
pub(crate) fn staging(pass: &Pass<'_>) -> Secret {
    rotation::staging_secret(pass, staging_name(pass.name()), TARGET)
}

/// The ServiceAccount, Role and RoleBinding the CronJob runs as: get of the push-source
/// Secret, get and patch of the staging Secret.
pub(crate) fn rbac(pass: &Pass<'_>) -> (ServiceAccount, Role, RoleBinding) {
    let name = pass.name();
    rotation::rbac(
        pass,
        &rotate_name(name),
        &next_name(name),
        &staging_name(name),
    )
}

/// The rotation CronJob: one container minting a password of `length` characters into
/// the staging Secret, the script ConfigMap `script` its only volume.
pub(crate) fn cron_job(
    pass: &Pass<'_>,
    spec: &PasswordRotationSpec,
    length: usize,
    script: &str,
) -> CronJob {
    let name = pass.name();
    let keystone = &pass.keystone.spec;
    let schedule = if spec.schedule.is_empty() {
        DEFAULT_SCHEDULE.to_owned()
    } else {
        spec.schedule.clone()
    };
    let mut env = crate::rotation::staging_env(staging_name(name));
    env.push(EnvVar {
        name: "PASSWORD_LENGTH".into(),
        value: Some(length.to_string()),
        value_from: None,
    });
    let container = Container {
        name: "admin-password-rotate".into(),
        image: Some(keystone.image.reference()),
        command: Some(vec![format!("/scripts/{}", script::SCRIPT_KEY)]),
        env: Some(env),
        volume_mounts: Some(vec![pod::read_only("scripts", "/scripts")]),
        security_context: Some(pod::restricted()),
        ..Default::default()
    };
    let scripts = Volume {
        name: "scripts".into(),
        config_map: Some(ConfigMapVolumeSource {
            name: script.into(),
            default_mode: Some(0o555),
            ..Default::default()
        }),
        ..Default::default()
    };
    CronJob {
        metadata: meta(pass, rotate_name(name), common_labels(name)),
        spec: CronJobSpec {
            schedule,
            suspend: Some(spec.suspend),
            job_template: JobTemplateSpec {
                metadata: None,
                spec: Some(JobSpec {
                    template: PodTemplateSpec {
                        metadata: Some(ObjectMeta {
                            labels: Some(component_labels(name, &format!("{TARGET}-rotation"))),
                            ..Default::default()
                        }),
                        spec: Some(PodSpec {
                            service_account_name: Some(rotate_name(name)),
                            restart_policy: Some("OnFailure".into()),
                            priority_class_name: keystone.deployment.priority_class_name.clone(),
                            security_context: Some(pod::pod_security()),
                            containers: vec![container],
                            volumes: Some(vec![scripts]),
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

/// The PushSecret mirroring the push-source Secret's `password` to
/// `bootstrap/{ns}/{name}/admin` (facts §2.12). DeletionPolicy None: disabling rotation
/// deletes the PushSecret and leaves the last pushed password in the store.
pub(crate) fn backup(pass: &Pass<'_>) -> PushSecret {
    let name = pass.name();
    rotation::backup_push_secret(
        pass,
        backup_name(name),
        "None",
        next_name(name),
        format!("bootstrap/{}/{name}/admin", pass.namespace()),
        Some(PASSWORD_KEY),
    )
}
