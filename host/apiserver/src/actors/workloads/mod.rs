//! The workload controllers of kube-controller-manager, as one actor: Deployments get their
//! status and roll a changed pod template out in steps ([`deployment`]), Jobs get pods
//! labelled `job-name=<job>` that succeed or fail ([`job`]), HorizontalPodAutoscalers get
//! current and desired replicas ([`hpa`]).
//!
//! The actor watches Deployments, Jobs and HPAs through the API (a reflector each) and
//! works on a tick of [`STEP`] and on every watch event; each step of a rollout or a Job
//! waits at least [`STEP`] after the previous one, so a test sees every intermediate state.
//! Every write goes through the status subresource (pods' status as `kubelet`, the rest as
//! `kube-controller-manager`, the real controllers' field managers).
//!
//! What a user sets (annotations on the object, from kubectl or a test):
//! - [`HOLD_ROLLOUT`] on a Deployment holds its rollout where it is.
//! - [`JOB_OUTCOME`] on a Job: `Succeed` (the default), `Fail` (every pod fails, the Job
//!   fails after `backoffLimit` + 1 pods) or `Run` (the pod keeps running).
//! - [`JOB_FAILURE_MESSAGE`] on a Job: the failed container's termination message.
//! - [`JOB_OUTCOMES_CONFIG_MAP`] in a namespace: both of the above for Jobs by name, set
//!   before a reconciler creates them.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::{WatchStreamExt as _, reflector, watcher};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::{ActorContext, ActorError, Started};
pub(crate) use crate::objects::now;

mod deployment;
mod hpa;
mod job;

pub use deployment::HOLD_ROLLOUT;
pub use job::{JOB_FAILURE_MESSAGE, JOB_OUTCOME, JOB_OUTCOMES_CONFIG_MAP};

/// The least time between two steps of one rollout or one Job.
pub(crate) const STEP: Duration = Duration::from_millis(300);

/// The field manager of the workload controllers' writes.
pub(crate) const CONTROLLER_MANAGER: &str = "kube-controller-manager";

/// The field manager of pods' status (the kubelet's).
pub(crate) const KUBELET: &str = "kubelet";

/// Why a write of the actor failed (logged; the next tick tries again).
#[derive(Debug, thiserror::Error)]
pub(crate) enum WorkloadError {
    #[error("{kind} {namespace}/{name}: {action}: {source}")]
    Write {
        kind: &'static str,
        namespace: String,
        name: String,
        action: &'static str,
        #[source]
        source: kube::Error,
    },
    #[error("Job {namespace}/{job}: cannot build a pod from its template: {message}")]
    Pod {
        namespace: String,
        job: String,
        message: String,
    },
}

pub(crate) async fn start(ctx: ActorContext) -> Result<Started, ActorError> {
    let wake = Arc::new(Notify::new());
    let client = ctx.client;
    let (deployments, watch_deployments) = watch(&client, &wake);
    let (jobs, watch_jobs) = watch(&client, &wake);
    let (hpas, watch_hpas) = watch(&client, &wake);
    let worker = tokio::spawn(async move {
        let mut rollouts = deployment::Rollouts::default();
        let mut runs = job::Runs::default();
        loop {
            tokio::select! {
                () = wake.notified() => {}
                () = tokio::time::sleep(STEP / 3) => {}
            }
            for d in deployments.state() {
                if let Err(e) = rollouts.step(&client, &d).await {
                    tracing::warn!(error = %e, "workloads actor: a Deployment's status write failed");
                }
            }
            rollouts.forget_missing(&deployments.state());
            for j in jobs.state() {
                if let Err(e) = runs.step(&client, &j).await {
                    tracing::warn!(error = %e, "workloads actor: a Job step failed");
                }
            }
            runs.forget_missing(&jobs.state());
            for h in hpas.state() {
                if let Err(e) = hpa::step(&client, &h, &deployments).await {
                    tracing::warn!(error = %e, "workloads actor: an HPA's status write failed");
                }
            }
        }
    });
    Ok(Started {
        tasks: vec![watch_deployments, watch_jobs, watch_hpas, worker],
        handle: None,
    })
}

/// A reflector of every `K` in the cluster; each event wakes the worker.
fn watch<K>(client: &kube::Client, wake: &Arc<Notify>) -> (reflector::Store<K>, JoinHandle<()>)
where
    K: kube::Resource<DynamicType = ()>
        + k8s_openapi::Resource
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    let (reader, writer) = reflector::store();
    let api = Api::<K>::all(client.clone());
    let wake = wake.clone();
    let task = tokio::spawn(async move {
        let stream = reflector(writer, watcher(api, watcher::Config::default())).default_backoff();
        futures::pin_mut!(stream);
        while let Some(event) = stream.next().await {
            match event {
                Ok(_) => wake.notify_one(),
                Err(e) => {
                    tracing::warn!(kind = K::KIND, error = %e, "workloads actor: watch failed")
                }
            }
        }
    });
    (reader, task)
}

/// Merges `status` into the status of `K` `namespace/name` as `manager`.
pub(crate) async fn patch_status<K>(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    manager: &str,
    status: Value,
) -> Result<(), WorkloadError>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + k8s_openapi::Resource
        + Clone
        + DeserializeOwned
        + Debug,
{
    let api = Api::<K>::namespaced(client.clone(), namespace);
    let params = PatchParams {
        field_manager: Some(manager.to_owned()),
        ..PatchParams::default()
    };
    api.patch_status(
        name,
        &params,
        &Patch::Merge(serde_json::json!({ "status": status })),
    )
    .await
    .map(drop)
    .map_err(|source| WorkloadError::Write {
        kind: K::KIND,
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        action: "patch status",
        source,
    })
}

/// A condition of `type` with `status`, `reason` and `message`, keeping the transition time
/// of `previous` (the object's conditions) when its status is unchanged, and its update
/// time when nothing changed.
pub(crate) fn condition(
    previous: &[Value],
    kind: &str,
    status: bool,
    reason: &str,
    message: &str,
    update_time: bool,
) -> Value {
    let status = if status { "True" } else { "False" };
    let old = previous.iter().find(|c| c["type"] == kind);
    let now = now();
    let transition = old
        .filter(|c| c["status"] == status)
        .and_then(|c| c["lastTransitionTime"].as_str())
        .map_or_else(|| now.clone(), str::to_owned);
    let mut c = serde_json::json!({
        "type": kind, "status": status, "reason": reason, "message": message,
        "lastTransitionTime": transition,
    });
    if update_time {
        let unchanged = old.is_some_and(|o| {
            o["status"] == status && o["reason"] == reason && o["message"] == message
        });
        let updated = old
            .filter(|_| unchanged)
            .and_then(|o| o["lastUpdateTime"].as_str())
            .map_or(now, str::to_owned);
        c["lastUpdateTime"] = Value::String(updated);
    }
    c
}

/// The conditions of a status, as values.
pub(crate) fn conditions_of(status: Option<&Value>) -> Vec<Value> {
    status
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Whether the object's status already holds every field of `desired` (a `null` in
/// `desired` is a field that must be absent).
pub(crate) fn holds(current: Option<&Value>, desired: &Value) -> bool {
    let Some(map) = desired.as_object() else {
        return current == Some(desired);
    };
    map.iter().all(|(k, v)| {
        let have = current.and_then(|c| c.get(k));
        if v.is_null() {
            have.is_none_or(Value::is_null)
        } else {
            have == Some(v)
        }
    })
}

/// `Some(n)` as a number, `None` for 0 (the API omits zero counters).
pub(crate) fn counter(n: i64) -> Value {
    if n == 0 { Value::Null } else { Value::from(n) }
}
