//! Run-once Jobs with a re-run key (RunJob), and CronJobs (EnsureCronJob).
//!
//! A Job is never updated in place. It carries its re-run key in the
//! [`POD_SPEC_HASH_ANNOTATION`]; a finished Job (complete or permanently failed) whose key
//! no longer matches the desired one is deleted and created again, so a Job that failed
//! under a since-fixed spec re-runs instead of wedging. [`decide_job`] is the decision,
//! [`run_job`] the calls.
//!
//! DECISION: the key is the annotation the builder set on the Job when it set one (a
//! bootstrap Job keys on a digest of the password it uses), otherwise the SHA-256 hex of
//! the JSON of the pod template.
//!
//! DECISION: a Job to re-run is confirmed on the server ([`ReadFrom::Server`]) before it
//! is deleted, and deleted with its uid and resourceVersion as preconditions
//! ([`ClusterExt::delete_unchanged`]): a cache that has not seen the re-created Job yet
//! never deletes it, and a Job changed between the read and the delete is a conflict (the
//! pass fails and the next one reads again).
//!
//! DECISION: a create answered with AlreadyExists reports "not complete yet" (`Ok(false)`):
//! the Job is there (a concurrent pass made it, or the deletion of its predecessor is
//! still pending), and the next pass reads it.

use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use sha2::{Digest, Sha256};

use crate::blocks::apply::{controller_reference, ensure_object, name_of};
use crate::cluster::{Cluster, ClusterExt, Owner, Propagation, ReadFrom};
use crate::error::ApiError;
use crate::object::object_key;

/// The annotation carrying a Job's re-run key.
pub const POD_SPEC_HASH_ANNOTATION: &str = "cobaltcore.c5c3.io/pod-spec-hash";

/// Why running a Job or ensuring a CronJob failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Job failed permanently (e.g. exhausted its backoffLimit) under the current
    /// re-run key; it is not re-run until the key changes (`ErrJobFailed`).
    #[error("job failed: Job {job} failed permanently and its pod template is unchanged")]
    JobFailed { job: String },
    /// The pod template did not encode for hashing.
    #[error("hashing the pod template of Job {job}: {source}")]
    Hash {
        job: String,
        #[source]
        source: serde_json::Error,
    },
    /// Reading the existing Job failed.
    #[error("fetching {what}: {source}")]
    Get {
        what: String,
        #[source]
        source: crate::Error,
    },
    /// Creating the Job failed.
    #[error("creating {what}: {source}")]
    Create {
        what: String,
        #[source]
        source: crate::Error,
    },
    /// Deleting a finished Job whose re-run key changed failed.
    #[error("deleting {what} to re-run it: {source}")]
    Delete {
        what: String,
        #[source]
        source: crate::Error,
    },
    /// Applying a CronJob failed.
    #[error("applying {what}: {source}")]
    Apply {
        what: String,
        #[source]
        source: crate::Error,
    },
}

impl Error {
    /// Whether this is the permanent failure of a Job (`errors.Is(err, ErrJobFailed)`).
    pub fn is_job_failed(&self) -> bool {
        matches!(self, Self::JobFailed { .. })
    }
}

/// What [`run_job`] does about a Job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobAction {
    /// No Job yet: create it.
    Create,
    /// The Job is still running: wait, whatever its key.
    Wait,
    /// The Job completed under the current key.
    Done,
    /// The Job finished under another key: delete it and create it again.
    Recreate,
    /// The Job failed permanently under the current key.
    Failed,
}

/// The SHA-256 hex of the JSON of `template`.
pub fn pod_spec_hash(template: &PodTemplateSpec) -> Result<String, serde_json::Error> {
    let json = serde_json::to_vec(template)?;
    Ok(hex::encode(Sha256::digest(json)))
}

/// Whether `job` has a `Complete` condition with status `True`.
fn is_job_complete(job: &Job) -> bool {
    has_condition(job, "Complete")
}

/// Whether `job` has a `Failed` condition with status `True`.
fn is_job_failed(job: &Job) -> bool {
    has_condition(job, "Failed")
}

fn has_condition(job: &Job, type_: &str) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == type_ && c.status == "True"))
}

fn stored_key(job: &Job) -> Option<&str> {
    job.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(POD_SPEC_HASH_ANNOTATION))
        .map(String::as_str)
}

/// Decides what to do about the `existing` Job given the desired re-run key. A finished
/// Job without a stored key counts as one whose key changed.
pub fn decide_job(existing: Option<&Job>, desired_key: &str) -> JobAction {
    let Some(job) = existing else {
        return JobAction::Create;
    };
    let same_key = stored_key(job) == Some(desired_key);
    match (is_job_complete(job), is_job_failed(job), same_key) {
        (true, _, true) => JobAction::Done,
        (false, true, true) => JobAction::Failed,
        (true, _, false) | (_, true, false) => JobAction::Recreate,
        (false, false, _) => JobAction::Wait,
    }
}

/// The re-run key of `job`: the annotation the builder set, else the pod-template hash.
fn rerun_key(job: &Job, what: &str) -> Result<String, Error> {
    if let Some(key) = stored_key(job) {
        return Ok(key.to_owned());
    }
    let template = job.spec.as_ref().map(|s| &s.template);
    pod_spec_hash(template.unwrap_or(&PodTemplateSpec::default())).map_err(|source| Error::Hash {
        job: what.to_owned(),
        source,
    })
}

/// Creates `job` under `owner` if it does not exist and reports whether it completed.
///
/// `Ok(true)`: complete under the current re-run key. `Ok(false)`: just created, still
/// running, or deleted and created again because its key changed.
/// [`Error::JobFailed`]: failed permanently under the current key. Never updates a Job.
pub fn run_job<C: Cluster + ?Sized>(cluster: &C, owner: &Owner, job: &Job) -> Result<bool, Error> {
    let (namespace, name) = name_of(job).map_err(|source| Error::Create {
        what: "Job".into(),
        source,
    })?;
    let what = format!("Job {}", object_key(namespace, name));
    let key = rerun_key(job, &what)?;
    let get = |from: ReadFrom| -> Result<Option<Job>, Error> {
        cluster
            .get_typed_from(namespace, name, from)
            .map_err(|source| Error::Get {
                what: what.clone(),
                source,
            })
    };
    let mut existing = get(ReadFrom::Cache)?;
    let mut action = decide_job(existing.as_ref(), &key);
    if action == JobAction::Recreate {
        // The cache may not show yet the Job an earlier pass re-created: confirm on the
        // server before deleting anything.
        existing = get(ReadFrom::Server)?;
        action = decide_job(existing.as_ref(), &key);
    }
    match (action, existing) {
        (JobAction::Done, _) => Ok(true),
        (JobAction::Wait, _) => Ok(false),
        (JobAction::Failed, _) => Err(Error::JobFailed {
            job: object_key(namespace, name),
        }),
        (JobAction::Recreate, Some(stale)) => {
            cluster
                .delete_unchanged(&stale, Propagation::Background)
                .map_err(|source| Error::Delete {
                    what: what.clone(),
                    source,
                })?;
            create(cluster, owner, job, &key, &what)
        }
        (JobAction::Create | JobAction::Recreate, _) => create(cluster, owner, job, &key, &what),
    }
}

fn create<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    job: &Job,
    key: &str,
    what: &str,
) -> Result<bool, Error> {
    let mut job = job.clone();
    job.status = None;
    job.metadata
        .annotations
        .get_or_insert_default()
        .insert(POD_SPEC_HASH_ANNOTATION.to_owned(), key.to_owned());
    job.metadata.owner_references = Some(vec![controller_reference(owner)]);
    match cluster.create_typed(&job) {
        Ok(_) | Err(crate::Error::Api(ApiError::Conflict(_))) => Ok(false),
        Err(source) => Err(Error::Create {
            what: what.to_owned(),
            source,
        }),
    }
}

/// Creates or updates `cron_job` under `owner` by server-side apply; a converged CronJob
/// is not rewritten, and a spec change takes effect at the next scheduled run.
pub fn ensure_cron_job<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    cron_job: &CronJob,
) -> Result<(), Error> {
    let what = match name_of(cron_job) {
        Ok((namespace, name)) => format!("CronJob {}", object_key(namespace, name)),
        Err(_) => "CronJob".to_owned(),
    };
    ensure_object(cluster, owner, cron_job).map_err(|source| Error::Apply { what, source })?;
    Ok(())
}

#[cfg(test)]
mod tests;
