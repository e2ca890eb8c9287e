//! Step 11, TrustFlush (facts §2.18): the CronJob purging expired trusts.
//!
//! | spec.trustFlush | CronJob `{name}-trust-flush` | Event | TrustFlushReady |
//! |---|---|---|---|
//! | absent (admission bypassed) | deleted if the Keystone controls it | Warning `TrustFlushBypass`, see below | True `TrustFlushNotRequired` |
//! | set | applied | — | True `TrustFlushReady` |
//!
//! The CronJob: labels commonLabels, `schedule` and `suspend` from the spec; its pods carry
//! componentLabels(`trust-flush`), run with restartPolicy OnFailure, the Deployment's
//! priority class and fsGroup 42424, and one container `trust-flush` (the Keystone image,
//! restricted) running `keystone-manage --config-dir=/etc/keystone/keystone.conf.d/
//! trust_flush <args...>` with `OS_DATABASE__CONNECTION`. Volumes: `config`, `fernet-keys`
//! and `credential-keys` (0400, read-only), then `db-tls` and `domains` when they apply.
//!
//! DECISION: the Warning `TrustFlushBypass` is recorded when this pass deleted the CronJob
//! or when TrustFlushReady was not already True `TrustFlushNotRequired` (the Keystone
//! enters the bypass). CobaltCore records it on every pass; an event is a write, and a
//! converged pass makes none.
//!
//! DECISION: the pods mount `db-tls` when database TLS is on, as every other
//! database-connected pod does: the connection string names the certificate files under
//! `/etc/keystone/db-tls/`, so `trust_flush` could not connect without them. CobaltCore's
//! trust-flush CronJob does not mount it.
//!
//! DECISION: the key volumes have mode 0400 like the Deployment's (CobaltCore leaves the
//! Secret volume default, 0644).

use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec, JobSpec, JobTemplateSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::EventType;
use wasm_operator_sdk::blocks::job::ensure_cron_job;
use wasm_operator_sdk::blocks::optional::{Optional, WhenAbsent, ensure_or_delete};

use crate::conditions::TRUST_FLUSH_READY;
use crate::error::Error;
use crate::labels::{common_labels, component_labels};
use crate::pass::{Pass, StepResult};
use crate::pod;
use crate::types::TrustFlushSpec;

const NOT_REQUIRED: &str = "TrustFlushNotRequired";

/// `{name}-trust-flush`.
pub(crate) fn cron_job_name(keystone: &str) -> String {
    format!("{keystone}-trust-flush")
}

/// The trust-flush CronJob of this pass, its pods reading the config ConfigMap
/// `config_map`.
pub(crate) fn cron_job(pass: &Pass<'_>, trust_flush: &TrustFlushSpec, config_map: &str) -> CronJob {
    let name = pass.name();
    let spec = &pass.keystone.spec;
    let (volumes, mounts) = pod::key_volumes(pass, config_map, "");
    let mut command = vec![
        "keystone-manage".to_owned(),
        format!("--config-dir={}", pod::CONFIG_DIR),
        "trust_flush".to_owned(),
    ];
    command.extend(trust_flush.args.iter().cloned());
    let container = Container {
        name: "trust-flush".into(),
        image: Some(spec.image.reference()),
        command: Some(command),
        env: Some(vec![pod::db_connection_env(name)]),
        volume_mounts: Some(mounts),
        security_context: Some(pod::restricted()),
        ..Default::default()
    };
    CronJob {
        metadata: ObjectMeta {
            name: Some(cron_job_name(name)),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(common_labels(name)),
            ..Default::default()
        },
        spec: CronJobSpec {
            schedule: trust_flush.schedule.clone(),
            suspend: Some(trust_flush.suspend),
            job_template: JobTemplateSpec {
                metadata: None,
                spec: Some(JobSpec {
                    template: PodTemplateSpec {
                        metadata: Some(ObjectMeta {
                            labels: Some(component_labels(name, "trust-flush")),
                            ..Default::default()
                        }),
                        spec: Some(PodSpec {
                            restart_policy: Some("OnFailure".into()),
                            priority_class_name: spec.deployment.priority_class_name.clone(),
                            security_context: Some(pod::pod_security()),
                            containers: vec![container],
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

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let name = cron_job_name(pass.name());
    let Some(trust_flush) = pass.keystone.spec.trust_flush.clone() else {
        return bypass(pass, &name);
    };
    let config_map = pass.config_map("trust-flush")?;
    ensure_cron_job(
        pass.cluster,
        &pass.owner,
        &cron_job(pass, &trust_flush, &config_map),
    )
    .map_err(|source| Error::Job {
        what: "ensuring the trust flush CronJob".into(),
        source,
    })?;
    pass.condition(
        TRUST_FLUSH_READY,
        true,
        "TrustFlushReady",
        "Trust flush CronJob is configured",
    );
    Ok(None)
}

/// `spec.trustFlush` is absent: admission did not default it. The CronJob goes, and the
/// bypass is reported (see the module's DECISION).
fn bypass(pass: &mut Pass<'_>, name: &str) -> StepResult {
    let namespace = pass.namespace().to_owned();
    let deleted = ensure_or_delete::<_, CronJob>(
        pass.cluster,
        &pass.owner,
        &namespace,
        name,
        None,
        WhenAbsent::Delete,
    )?;
    let already_bypassed = pass
        .conditions_of(TRUST_FLUSH_READY)
        .is_some_and(|c| c.status == "True" && c.reason == NOT_REQUIRED);
    if deleted == (Optional::Absent { deleted: true }) || !already_bypassed {
        pass.event(
            EventType::Warning,
            "TrustFlushBypass",
            "Trust flush legacy bypass: spec.trustFlush is nil (webhook defaulting did not run); \
             existing CronJob deleted",
        );
    }
    pass.condition(
        TRUST_FLUSH_READY,
        true,
        NOT_REQUIRED,
        "Trust flush bypass: spec.trustFlush is nil (webhook did not default this object)",
    );
    Ok(None)
}

#[cfg(test)]
#[path = "trust_flush_tests.rs"]
mod tests;
