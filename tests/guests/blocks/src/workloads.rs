//! Scenarios of the workload blocks: EnsureDeployment, EnsureService, RunJob,
//! EnsureCronJob.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::{deployment, job};
use wasm_operator_sdk::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use wasm_operator_sdk::k8s_openapi::api::batch::v1::{
    CronJob, CronJobSpec, Job, JobSpec, JobTemplateSpec,
};
use wasm_operator_sdk::k8s_openapi::api::core::v1::{
    Container, PodSpec, PodTemplateSpec, Service, ServicePort, ServiceSpec,
};
use wasm_operator_sdk::k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta,
};

use crate::error::ScenarioError;
use crate::scenario::Scenario;

fn labels(s: &Scenario) -> BTreeMap<String, String> {
    BTreeMap::from([("app".to_owned(), s.name.clone())])
}

fn meta(s: &Scenario) -> ObjectMeta {
    ObjectMeta {
        name: Some(s.name.clone()),
        namespace: Some(s.namespace.clone()),
        labels: Some(labels(s)),
        ..Default::default()
    }
}

/// The pod labels: `params.labels`, else `app: <name>`.
fn pod_labels(s: &Scenario) -> Result<BTreeMap<String, String>, ScenarioError> {
    let given = s.map("labels")?;
    Ok(if given.is_empty() { labels(s) } else { given })
}

/// A pod template of one container running `params.image` with `params.args`.
fn pod_template(
    s: &Scenario,
    restart_policy: Option<&str>,
) -> Result<PodTemplateSpec, ScenarioError> {
    let args = s.list("args")?;
    Ok(PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(pod_labels(s)?),
            ..Default::default()
        }),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some(s.text("image", "registry.invalid/app:1.0")?),
                args: (!args.is_empty()).then_some(args),
                ..Default::default()
            }],
            restart_policy: restart_policy.map(str::to_owned),
            ..Default::default()
        }),
    })
}

/// EnsureDeployment of Deployment `<name>` selecting its pod labels; replicas only when
/// `params.replicas` is set.
/// Outcome: `ready`.
pub fn deployment(
    cluster: &dyn Cluster,
    s: &Scenario,
) -> Result<Map<String, Value>, ScenarioError> {
    let replicas = s
        .int("replicas")?
        .map(i32::try_from)
        .transpose()
        .map_err(|_| ScenarioError::Param {
            name: "replicas",
            problem: "out of range",
        })?;
    let desired = Deployment {
        metadata: meta(s),
        spec: DeploymentSpec {
            replicas,
            selector: LabelSelector {
                match_labels: Some(pod_labels(s)?),
                ..Default::default()
            },
            template: pod_template(s, None)?,
            ..Default::default()
        },
        status: None,
    };
    let stored = deployment::ensure_deployment(cluster, &s.owner, &desired)?;
    let ready = deployment::is_deployment_ready(&stored);
    Ok(outcome([("ready", json!(ready))]))
}

/// EnsureService of Service `<name>` with port `http` (`params.port`, default 80), and
/// `spec.clusterIP` only when `params.clusterIP` is set. Outcome: `applied`.
pub fn service(cluster: &dyn Cluster, s: &Scenario) -> Result<Map<String, Value>, ScenarioError> {
    let desired = Service {
        metadata: meta(s),
        spec: Some(ServiceSpec {
            selector: Some(labels(s)),
            cluster_ip: s.opt_text("clusterIP")?,
            ports: Some(vec![ServicePort {
                name: Some("http".into()),
                port: port(s)?,
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    };
    deployment::ensure_service(cluster, &s.owner, &desired)?;
    Ok(outcome([("applied", json!(true))]))
}

fn port(s: &Scenario) -> Result<i32, ScenarioError> {
    i32::try_from(s.int("port")?.unwrap_or(80)).map_err(|_| ScenarioError::Param {
        name: "port",
        problem: "out of range",
    })
}

/// RunJob of Job `<name>` whose pod runs `params.image` with `params.args`. Outcome:
/// `complete`; a permanently failed Job is the error `job failed: …`.
pub fn run_job(cluster: &dyn Cluster, s: &Scenario) -> Result<Map<String, Value>, ScenarioError> {
    let desired = Job {
        metadata: meta(s),
        spec: Some(JobSpec {
            template: pod_template(s, Some("Never"))?,
            backoff_limit: Some(0),
            ..Default::default()
        }),
        status: None,
    };
    let complete = job::run_job(cluster, &s.owner, &desired)?;
    Ok(outcome([("complete", json!(complete))]))
}

/// EnsureCronJob of CronJob `<name>` on `params.schedule`. Outcome: `applied`.
pub fn cron_job(cluster: &dyn Cluster, s: &Scenario) -> Result<Map<String, Value>, ScenarioError> {
    let desired = CronJob {
        metadata: meta(s),
        spec: CronJobSpec {
            schedule: s.text("schedule", "*/5 * * * *")?,
            job_template: JobTemplateSpec {
                metadata: None,
                spec: Some(JobSpec {
                    template: pod_template(s, Some("OnFailure"))?,
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    };
    job::ensure_cron_job(cluster, &s.owner, &desired)?;
    Ok(outcome([("applied", json!(true))]))
}

/// An outcome of `entries`.
pub fn outcome<const N: usize>(entries: [(&str, Value); N]) -> Map<String, Value> {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}
