//! Jobs: pods as the Job controller creates them, run to success or failure as the
//! kubelet would report, and the Job's status and conditions as Kubernetes 1.31+ writes
//! them.
//!
//! One pod runs at a time (parallelism is not modelled). A pod is created labelled
//! `job-name=<job>`, `batch.kubernetes.io/job-name`, `controller-uid` and
//! `batch.kubernetes.io/controller-uid`, owned by the Job, and reported Running; a step
//! later it ends as [`JOB_OUTCOME`] says. The Job is `Complete` (`SuccessCriteriaMet`, then
//! `Complete`, reason `CompletionsReached`) once `completions` pods succeeded, `Failed`
//! (`FailureTarget`, then `Failed`, reason `BackoffLimitExceeded`) once `backoffLimit` + 1
//! pods failed. A suspended Job gets no pods.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::ResourceExt as _;
use kube::api::{Api, ListParams, PostParams};
use serde_json::{Value, json};

use super::{
    CONTROLLER_MANAGER, KUBELET, STEP, WorkloadError, condition, conditions_of, counter, holds,
    now, patch_status,
};
use crate::defaults::JOB_LABELS;

/// An annotation on a Job saying how its pods end: `Succeed` (the default), `Fail` (each
/// pod fails with exit code 1 and [`JOB_FAILURE_MESSAGE`] as its termination message) or
/// `Run` (the pod keeps running and the Job stays active until the annotation changes).
pub const JOB_OUTCOME: &str = "actors.wasm-operator.dev/job-outcome";

/// An annotation on a Job: the termination message of its failed pods' first container.
pub const JOB_FAILURE_MESSAGE: &str = "actors.wasm-operator.dev/job-failure-message";

/// A ConfigMap in a Job's namespace saying how Jobs end before they exist: key `<job>` holds
/// an outcome as [`JOB_OUTCOME`] does, key `<job>.message` a termination message as
/// [`JOB_FAILURE_MESSAGE`] does. The Job's own annotations win over it. A test or a user
/// sets it up front (`kubectl create configmap job-outcomes.actors.wasm-operator.dev
/// --from-literal=ks-db-sync=Fail`), so a Job created later by a reconciler fails without a
/// race against its first pod.
pub const JOB_OUTCOMES_CONFIG_MAP: &str = "job-outcomes.actors.wasm-operator.dev";

/// The termination message when [`JOB_FAILURE_MESSAGE`] is not set.
const DEFAULT_FAILURE_MESSAGE: &str = "the container exited with code 1";

/// When the actor last stepped each Job, by uid.
#[derive(Default)]
pub(crate) struct Runs {
    last_step: BTreeMap<String, Instant>,
}

/// How a Job's pods end.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Succeed,
    Fail,
    Run,
}

impl Runs {
    /// Drops what it knows of Jobs no longer in the cluster.
    pub(crate) fn forget_missing(&mut self, live: &[Arc<Job>]) {
        self.last_step
            .retain(|uid, _| live.iter().any(|j| j.uid().as_deref() == Some(uid)));
    }

    /// Runs `job` one step on when one is due, and writes its status when it changed.
    pub(crate) async fn step(
        &mut self,
        client: &kube::Client,
        job: &Job,
    ) -> Result<(), WorkloadError> {
        let (Some(ns), Some(uid)) = (job.namespace(), job.uid()) else {
            return Ok(());
        };
        let Some(spec) = &job.spec else { return Ok(()) };
        let status = serde_json::to_value(&job.status).ok();
        let previous = conditions_of(status.as_ref());
        let finished = previous
            .iter()
            .any(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True");
        if finished || job.metadata.deletion_timestamp.is_some() || spec.suspend == Some(true) {
            return Ok(());
        }
        let due = self.last_step.get(&uid).is_none_or(|t| t.elapsed() >= STEP);
        if !due {
            return Ok(());
        }
        let name = job.name_any();
        let (outcome, message) = outcome_of(client, &ns, job).await?;
        let pods_api = Api::<Pod>::namespaced(client.clone(), &ns);
        let selector = format!("{}={uid}", JOB_LABELS[0]);
        let pods = pods_api
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|source| write_error("Pod", &ns, &name, "list pods", source))?
            .items;
        let phase = |p: &Pod| {
            p.status
                .as_ref()
                .and_then(|s| s.phase.clone())
                .unwrap_or_default()
        };
        let mut succeeded = pods.iter().filter(|p| phase(p) == "Succeeded").count() as i64;
        let mut failed = pods.iter().filter(|p| phase(p) == "Failed").count() as i64;
        let active: Vec<&Pod> = pods
            .iter()
            .filter(|p| !matches!(phase(p).as_str(), "Succeeded" | "Failed"))
            .collect();
        let completions = i64::from(spec.completions.unwrap_or(1));
        let backoff_limit = i64::from(spec.backoff_limit.unwrap_or(6));
        let mut running = active.len() as i64;
        if let Some(pod) = active.first() {
            if outcome != Outcome::Run {
                end_pod(client, &ns, pod, outcome == Outcome::Succeed, &message).await?;
                running -= 1;
                match outcome {
                    Outcome::Succeed => succeeded += 1,
                    _ => failed += 1,
                }
            }
        } else if succeeded < completions && failed <= backoff_limit {
            create_pod(client, &ns, job, &uid).await?;
            running += 1;
        }
        self.last_step.insert(uid, Instant::now());
        let start_time = status
            .as_ref()
            .and_then(|s| s.get("startTime"))
            .cloned()
            .unwrap_or_else(|| json!(now()));
        let mut want = json!({
            "startTime": start_time,
            "active": counter(running),
            "ready": running,
            "terminating": 0,
            "succeeded": counter(succeeded),
            "failed": counter(failed),
            "uncountedTerminatedPods": {},
        });
        if succeeded >= completions {
            let message = "Reached expected number of succeeded pods";
            want["completionTime"] = json!(now());
            want["conditions"] = json!([
                condition(
                    &previous,
                    "SuccessCriteriaMet",
                    true,
                    "CompletionsReached",
                    message,
                    true
                ),
                condition(
                    &previous,
                    "Complete",
                    true,
                    "CompletionsReached",
                    message,
                    true
                ),
            ]);
        } else if failed > backoff_limit {
            let message = "Job has reached the specified backoff limit";
            want["conditions"] = json!([
                condition(
                    &previous,
                    "FailureTarget",
                    true,
                    "BackoffLimitExceeded",
                    message,
                    true
                ),
                condition(
                    &previous,
                    "Failed",
                    true,
                    "BackoffLimitExceeded",
                    message,
                    true
                ),
            ]);
        }
        if holds(status.as_ref(), &want) {
            return Ok(());
        }
        patch_status::<Job>(client, &ns, &name, CONTROLLER_MANAGER, want).await
    }
}

/// How `job`'s pods end and their termination message: the Job's annotations, else its
/// entries in [`JOB_OUTCOMES_CONFIG_MAP`], else success.
async fn outcome_of(
    client: &kube::Client,
    ns: &str,
    job: &Job,
) -> Result<(Outcome, String), WorkloadError> {
    let name = job.name_any();
    let table = Api::<ConfigMap>::namespaced(client.clone(), ns)
        .get_opt(JOB_OUTCOMES_CONFIG_MAP)
        .await
        .map_err(|source| write_error("ConfigMap", ns, &name, "read job outcomes", source))?
        .and_then(|c| c.data)
        .unwrap_or_default();
    let annotations = job.annotations();
    let outcome = annotations
        .get(JOB_OUTCOME)
        .or_else(|| table.get(&name))
        .map(String::as_str);
    let outcome = match outcome {
        Some("Fail") => Outcome::Fail,
        Some("Run") => Outcome::Run,
        _ => Outcome::Succeed,
    };
    let message = annotations
        .get(JOB_FAILURE_MESSAGE)
        .or_else(|| table.get(&format!("{name}.message")))
        .map_or(DEFAULT_FAILURE_MESSAGE, String::as_str);
    Ok((outcome, message.to_owned()))
}

fn write_error(
    kind: &'static str,
    ns: &str,
    name: &str,
    action: &'static str,
    source: kube::Error,
) -> WorkloadError {
    WorkloadError::Write {
        kind,
        namespace: ns.to_owned(),
        name: name.to_owned(),
        action,
        source,
    }
}

/// Creates the next pod of `job` from its template (as `kube-controller-manager`) and
/// reports it Running (as `kubelet`).
async fn create_pod(
    client: &kube::Client,
    ns: &str,
    job: &Job,
    uid: &str,
) -> Result<(), WorkloadError> {
    let name = job.name_any();
    let template = job.spec.as_ref().map(|s| &s.template);
    let mut labels = template
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    for (key, value) in JOB_LABELS.into_iter().zip([uid, &name, uid, &name]) {
        labels
            .entry(key.to_owned())
            .or_insert_with(|| value.to_owned());
    }
    let annotations = template
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.annotations.clone());
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": format!("{name}-"),
            "namespace": ns,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [{
                "apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid,
                "controller": true, "blockOwnerDeletion": true,
            }],
        },
        "spec": template.and_then(|t| t.spec.as_ref()),
    });
    let pod: Pod = serde_json::from_value(pod).map_err(|e| WorkloadError::Pod {
        namespace: ns.to_owned(),
        job: name.clone(),
        message: e.to_string(),
    })?;
    let api = Api::<Pod>::namespaced(client.clone(), ns);
    let params = PostParams {
        field_manager: Some(CONTROLLER_MANAGER.to_owned()),
        ..PostParams::default()
    };
    let created = api
        .create(&params, &pod)
        .await
        .map_err(|source| write_error("Pod", ns, &name, "create pod", source))?;
    let containers = containers(&created);
    let started = now();
    let statuses: Vec<Value> = containers
        .iter()
        .map(|(c, image)| {
            json!({
                "name": c, "image": image, "imageID": "", "ready": true, "restartCount": 0,
                "started": true, "state": {"running": {"startedAt": started}},
            })
        })
        .collect();
    let status = json!({
        "phase": "Running",
        "startTime": started,
        "conditions": [
            {"type": "Initialized", "status": "True", "lastTransitionTime": started},
            {"type": "Ready", "status": "True", "lastTransitionTime": started},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": started},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
        ],
        "containerStatuses": statuses,
    });
    patch_status::<Pod>(client, ns, &created.name_any(), KUBELET, status).await
}

/// Reports `pod` Succeeded (every container exited 0) or Failed (its first container
/// exited 1 with `message`), as `kubelet`.
async fn end_pod(
    client: &kube::Client,
    ns: &str,
    pod: &Pod,
    success: bool,
    message: &str,
) -> Result<(), WorkloadError> {
    let finished = now();
    let started = pod
        .status
        .as_ref()
        .and_then(|s| s.start_time.as_ref())
        .map_or_else(|| finished.clone(), |t| t.0.to_string());
    let statuses: Vec<Value> = containers(pod)
        .iter()
        .enumerate()
        .map(|(i, (c, image))| {
            let mut terminated = if success || i > 0 {
                json!({"exitCode": 0, "reason": "Completed"})
            } else {
                json!({"exitCode": 1, "reason": "Error", "message": message})
            };
            terminated["startedAt"] = json!(started);
            terminated["finishedAt"] = json!(finished);
            json!({
                "name": c, "image": image, "imageID": "", "ready": false, "restartCount": 0,
                "started": false, "state": {"terminated": terminated},
            })
        })
        .collect();
    let reason = if success { "PodCompleted" } else { "PodFailed" };
    let status = json!({
        "phase": if success { "Succeeded" } else { "Failed" },
        "conditions": [
            {"type": "Initialized", "status": "True", "reason": "PodCompleted", "lastTransitionTime": started},
            {"type": "Ready", "status": "False", "reason": reason, "lastTransitionTime": finished},
            {"type": "ContainersReady", "status": "False", "reason": reason, "lastTransitionTime": finished},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
        ],
        "containerStatuses": statuses,
    });
    patch_status::<Pod>(client, ns, &pod.name_any(), KUBELET, status).await
}

/// The containers of `pod`: name and image.
fn containers(pod: &Pod) -> Vec<(String, String)> {
    pod.spec
        .as_ref()
        .map(|s| {
            s.containers
                .iter()
                .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}
