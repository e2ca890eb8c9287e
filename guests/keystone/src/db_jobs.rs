//! The Jobs that run `keystone-manage db_sync` and its variants (facts §2.14): one builder
//! for all of them, so their pods never drift apart.
//!
//! | Job | Container | Command (after `keystone-manage --config-dir=…`) | backoffLimit | Image |
//! |---|---|---|---|---|
//! | `{name}-db-sync` | `db-sync` | `db_sync` | 4 | `spec.image` |
//! | `{name}-schema-check` | `schema-check` | `db_sync --check`, through `/bin/sh -eu -c` | 2 | `spec.image` |
//! | `{name}-db-expand` | `db-expand` | `db_sync --expand` | 4 | `repository:<tag>` |
//! | `{name}-db-migrate` | `db-migrate` | `db_sync --migrate` | 4 | `repository:<tag>` |
//! | `{name}-db-contract` | `db-contract` | `db_sync --contract` | 4 | `repository:<tag>` |
//!
//! Every one: restartPolicy Never, the restricted security context, the Deployment's
//! priorityClassName, the `config` volume, env `OS_DATABASE__CONNECTION`, and the `db-tls`
//! and `domains` volumes when they apply. No labels: a Job is found by name.

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::error::Error;
use crate::pass::Pass;
use crate::pod::{self, CONFIG_DIR};

/// The backoffLimit of db_sync and the upgrade phases.
const SYNC_BACKOFF_LIMIT: i32 = 4;
/// The backoffLimit of the read-only schema check.
const SCHEMA_CHECK_BACKOFF_LIMIT: i32 = 2;

/// The Job suffixes of the upgrade phases, which an abort deletes.
pub(crate) const UPGRADE_JOB_SUFFIXES: [&str; 3] = ["db-expand", "db-migrate", "db-contract"];

/// `keystone-manage --config-dir=/etc/keystone/keystone.conf.d/ db_sync` and `flags`.
fn db_sync(flags: &[&str]) -> Vec<String> {
    let mut command = vec![
        "keystone-manage".to_owned(),
        format!("--config-dir={CONFIG_DIR}"),
        "db_sync".to_owned(),
    ];
    command.extend(flags.iter().map(|f| (*f).to_owned()));
    command
}

/// `{name}-{suffix}`.
pub(crate) fn job_name(keystone: &str, suffix: &str) -> String {
    format!("{keystone}-{suffix}")
}

/// The Job `{name}-{suffix}` whose one container `suffix` runs `command` on `image`.
fn build(
    pass: &Pass<'_>,
    suffix: &str,
    image: String,
    command: Vec<String>,
    backoff_limit: i32,
) -> Result<Job, Error> {
    let config_map = pass.config_map("database")?;
    let (volumes, mounts) = pod::keystone_volumes(pass, &config_map);
    let container = Container {
        name: suffix.to_owned(),
        image: Some(image),
        command: Some(command),
        env: Some(vec![pod::db_connection_env(pass.name())]),
        volume_mounts: Some(mounts),
        security_context: Some(pod::restricted()),
        ..Default::default()
    };
    Ok(Job {
        metadata: ObjectMeta {
            name: Some(job_name(pass.name(), suffix)),
            namespace: Some(pass.namespace().to_owned()),
            ..Default::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(backoff_limit),
            template: PodTemplateSpec {
                metadata: None,
                spec: Some(PodSpec {
                    restart_policy: Some("Never".into()),
                    priority_class_name: pass.keystone.spec.deployment.priority_class_name.clone(),
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

/// `{name}-db-sync` on `spec.image`.
pub(crate) fn db_sync_job(pass: &Pass<'_>) -> Result<Job, Error> {
    let image = pass.keystone.spec.image.reference();
    build(pass, "db-sync", image, db_sync(&[]), SYNC_BACKOFF_LIMIT)
}

/// `{name}-schema-check` on `spec.image`: exits 0 when the schema is at the head.
pub(crate) fn schema_check_job(pass: &Pass<'_>) -> Result<Job, Error> {
    let image = pass.keystone.spec.image.reference();
    let command = vec![
        "/bin/sh".to_owned(),
        "-eu".to_owned(),
        "-c".to_owned(),
        db_sync(&["--check"]).join(" "),
    ];
    build(
        pass,
        "schema-check",
        image,
        command,
        SCHEMA_CHECK_BACKOFF_LIMIT,
    )
}

/// `{name}-db-<phase>` running `db_sync --<phase>` on `repository:<tag>`, the release the
/// upgrade goes to (its migration tree owns the schema changes).
pub(crate) fn upgrade_job(pass: &Pass<'_>, phase: &str, tag: &str) -> Result<Job, Error> {
    let image = pass.keystone.spec.image.at_tag(tag);
    let flag = format!("--{phase}");
    let suffix = format!("db-{phase}");
    build(pass, &suffix, image, db_sync(&[&flag]), SYNC_BACKOFF_LIMIT)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wasm_operator_sdk::testing::FakeCluster;

    use super::*;
    use crate::testing::{CONFIG_MAP, keystone_with, pass, pass_with_config};

    #[test]
    fn every_db_job_runs_restricted_with_the_connection_env_config_tls_domains_and_priority() {
        let cluster = FakeCluster::new();
        let spec = json!({"deployment": {"priorityClassName": "openstack-critical"},
            "database": {"tls": {"mode": "require", "caBundleSecretRef": {"name": "ca"},
                "clientCertSecretRef": {"name": "client"}}}});
        let mut pass = pass_with_config(&cluster, &keystone_with(spec));
        pass.domains_secret_name = "ks-domains-2".into();
        let jobs = [
            db_sync_job(&pass),
            schema_check_job(&pass),
            upgrade_job(&pass, "expand", "2026.1"),
        ];
        let config = "--config-dir=/etc/keystone/keystone.conf.d/";
        let expected = [
            (
                "ks-db-sync",
                "db-sync",
                "ghcr.io/c5c3/keystone:2025.2",
                json!(["keystone-manage", config, "db_sync"]),
                4,
            ),
            (
                "ks-schema-check",
                "schema-check",
                "ghcr.io/c5c3/keystone:2025.2",
                json!([
                    "/bin/sh",
                    "-eu",
                    "-c",
                    "keystone-manage --config-dir=/etc/keystone/keystone.conf.d/ db_sync --check"
                ]),
                2,
            ),
            (
                "ks-db-expand",
                "db-expand",
                "ghcr.io/c5c3/keystone:2026.1",
                json!(["keystone-manage", config, "db_sync", "--expand"]),
                4,
            ),
        ];
        for (job, (name, container, image, command, backoff)) in jobs.into_iter().zip(expected) {
            let job = serde_json::to_value(job.expect("builds")).expect("encodes");
            assert_eq!(job["metadata"], json!({"name": name, "namespace": "ns"}));
            assert_eq!(job["spec"]["backoffLimit"], backoff, "{name}");
            let pod = &job["spec"]["template"]["spec"];
            assert_eq!(pod["restartPolicy"], "Never", "{name}");
            assert_eq!(pod["priorityClassName"], "openstack-critical", "{name}");
            let names: Vec<&str> = pod["volumes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v["name"].as_str())
                .collect();
            assert_eq!(names, ["config", "db-tls", "domains"], "{name}");
            assert_eq!(pod["volumes"][0]["configMap"]["name"], CONFIG_MAP);
            let c = &pod["containers"][0];
            assert_eq!(pod["containers"].as_array().map(Vec::len), Some(1));
            assert_eq!(
                (c["name"].clone(), c["image"].clone(), c["command"].clone()),
                (json!(container), json!(image), command),
                "{name}"
            );
            assert_eq!(
                c["securityContext"],
                serde_json::to_value(pod::restricted()).expect("encodes")
            );
            assert_eq!(
                c["env"],
                json!([{"name": "OS_DATABASE__CONNECTION", "valueFrom": {"secretKeyRef":
                    {"name": "ks-db-connection", "key": "connection"}}}])
            );
            let paths: Vec<&str> = c["volumeMounts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["mountPath"].as_str())
                .collect();
            assert_eq!(
                paths,
                [
                    "/etc/keystone/keystone.conf.d/",
                    "/etc/keystone/db-tls/",
                    "/etc/keystone/domains"
                ]
            );
        }
    }

    #[test]
    fn a_db_job_before_the_config_step_ran_is_a_step_order_error() {
        let cluster = FakeCluster::new();
        let pass = pass(&cluster, &keystone_with(json!({})));
        let error = db_sync_job(&pass).expect_err("no ConfigMap name");
        assert!(
            matches!(
                error,
                Error::StepOrder {
                    step: "database",
                    value: "the config ConfigMap's name"
                }
            ),
            "{error}"
        );
        assert!(
            error.to_string().contains("which an earlier step sets"),
            "{error}"
        );
    }
}
