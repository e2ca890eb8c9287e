//! Step 8 — PolicyValidation (facts §2.15): `oslopolicy-validator` over the rendered
//! `policy.yaml`, before the Deployment takes it.
//!
//! | Case | Job `{name}-policy-validation` | PolicyValidReady | Pass |
//! |---|---|---|---|
//! | no `policyOverrides` | deleted if the Keystone controls it | True `PolicyValidationNotRequired` | goes on |
//! | running | created | False `PolicyValidationInProgress` | 15 s |
//! | failed | — | False `PolicyValidationFailed`, the validator's message | error |
//! | complete | — | True `PolicyValidationPassed` | goes on |
//!
//! The policy lives in the content-hashed config ConfigMap, so a changed policy changes
//! the Job's pod template and its re-run key: a finished Job is run again. The failure
//! message is the termination message (at most 500 characters, then `...`) of the newest
//! pod labelled `job-name={job}`, or a pointer at `kubectl logs` when there is none.

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::blocks::job::run_job;
use wasm_operator_sdk::blocks::optional::{WhenAbsent, ensure_or_delete};
use wasm_operator_sdk::{ClusterExt, ListOptions, log};

use crate::conditions::POLICY_VALID_READY;
use crate::error::Error;
use crate::pass::{Pass, SECRET_POLLING, StepResult};
use crate::pod::{self, CONFIG_DIR};

/// The validator's backoffLimit.
const BACKOFF_LIMIT: i32 = 2;
/// The longest termination message quoted in the condition.
const MAX_MESSAGE_CHARS: usize = 500;

/// `{name}-policy-validation`.
pub(crate) fn job_name(keystone: &str) -> String {
    format!("{keystone}-policy-validation")
}

/// The validator Job: the Keystone image, the `config` volume (and `domains`), no
/// labels, no priority class, no database.
pub(crate) fn job(pass: &Pass<'_>) -> Result<Job, Error> {
    let config_map = pass.config_map("policy-validation")?;
    let (config, config_mount) = pod::config(&config_map);
    let mut volumes = vec![config];
    let mut mounts = vec![config_mount];
    if let Some((volume, mount)) = pod::domains(pass) {
        volumes.push(volume);
        mounts.push(mount);
    }
    let command = [
        "oslopolicy-validator",
        "--namespace",
        "keystone",
        "--config-dir",
        CONFIG_DIR,
    ];
    let container = Container {
        name: "validator".into(),
        image: Some(pass.keystone.spec.image.reference()),
        command: Some(command.iter().map(|c| (*c).to_owned()).collect()),
        security_context: Some(pod::restricted()),
        termination_message_policy: Some("FallbackToLogsOnError".into()),
        volume_mounts: Some(mounts),
        ..Default::default()
    };
    Ok(Job {
        metadata: ObjectMeta {
            name: Some(job_name(pass.name())),
            namespace: Some(pass.namespace().to_owned()),
            ..Default::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(BACKOFF_LIMIT),
            template: PodTemplateSpec {
                metadata: None,
                spec: Some(PodSpec {
                    restart_policy: Some("Never".into()),
                    containers: vec![container],
                    volumes: Some(volumes),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    })
}

/// The condition message of a failed validation: the newest pod's termination message,
/// else where to read the logs.
fn failure_message(pass: &Pass<'_>, job: &str) -> String {
    let namespace = pass.namespace();
    let fallback = format!(
        "Policy validation failed; check Job {job} logs: kubectl logs -n {namespace} job/{job}"
    );
    let options = ListOptions {
        label_selector: Some(format!("job-name={job}")),
        field_index: None,
    };
    let mut pods = match pass.cluster.list_typed::<Pod>(Some(namespace), &options) {
        Ok(pods) => pods,
        Err(e) => {
            log::warn(&format!("listing the pods of Job {}: {e}", pass.key(job)));
            return fallback;
        }
    };
    pods.sort_by(|a, b| {
        b.metadata
            .creation_timestamp
            .cmp(&a.metadata.creation_timestamp)
    });
    let message = pods
        .iter()
        .filter_map(|p| p.status.as_ref()?.container_statuses.as_ref())
        .flatten()
        .filter_map(|c| c.state.as_ref()?.terminated.as_ref()?.message.as_deref())
        .find(|m| !m.is_empty());
    match message {
        Some(message) if message.chars().count() > MAX_MESSAGE_CHARS => {
            let cut: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
            format!("Policy validation failed: {cut}...")
        }
        Some(message) => format!("Policy validation failed: {message}"),
        None => fallback,
    }
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let name = job_name(pass.name());
    if pass.keystone.spec.policy_overrides.is_none() {
        ensure_or_delete::<_, Job>(
            pass.cluster,
            &pass.owner,
            pass.namespace(),
            &name,
            None,
            WhenAbsent::Delete,
        )?;
        pass.condition(
            POLICY_VALID_READY,
            true,
            "PolicyValidationNotRequired",
            "No policy overrides configured",
        );
        return Ok(None);
    }
    let job = job(pass)?;
    match run_job(pass.cluster, &pass.owner, &job) {
        Err(source) => {
            let message = if source.is_job_failed() {
                failure_message(pass, &name)
            } else {
                format!("Policy validation failed: {source}")
            };
            pass.condition(
                POLICY_VALID_READY,
                false,
                "PolicyValidationFailed",
                &message,
            );
            Err(Error::Job {
                what: "running policy validation".into(),
                source,
            })
        }
        Ok(false) => {
            pass.condition(
                POLICY_VALID_READY,
                false,
                "PolicyValidationInProgress",
                "Policy validation job is running",
            );
            Ok(Some(SECRET_POLLING))
        }
        Ok(true) => {
            pass.condition(
                POLICY_VALID_READY,
                true,
                "PolicyValidationPassed",
                "Policy validation completed successfully",
            );
            Ok(None)
        }
    }
}

#[cfg(test)]
#[path = "policy_validation_tests.rs"]
mod tests;
