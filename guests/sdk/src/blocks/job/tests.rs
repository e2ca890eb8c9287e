use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{
    CronJob, CronJobSpec, Job, JobCondition, JobSpec, JobStatus, JobTemplateSpec,
};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::object::ObjectRef;
use crate::testing::{Call, FakeCluster, Op, owner};

fn template(image: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: None,
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "db-sync".into(),
                image: Some(image.into()),
                ..Default::default()
            }],
            restart_policy: Some("Never".into()),
            ..Default::default()
        }),
    }
}

fn job(image: &str) -> Job {
    Job {
        metadata: ObjectMeta {
            name: Some("db-sync".into()),
            namespace: Some("ns".into()),
            ..Default::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(4),
            template: template(image),
            ..Default::default()
        }),
        status: None,
    }
}

fn key(image: &str) -> String {
    pod_spec_hash(&template(image)).expect("hashes")
}

/// A Job stored under the key of `stored_image`, with `condition` (`Complete`/`Failed`)
/// True when given.
fn existing(stored_image: Option<&str>, condition: Option<&str>) -> Job {
    let mut j = job("x");
    if let Some(image) = stored_image {
        j.metadata.annotations = Some(BTreeMap::from([(
            POD_SPEC_HASH_ANNOTATION.to_owned(),
            key(image),
        )]));
    }
    j.status = Some(JobStatus {
        conditions: condition.map(|c| {
            vec![JobCondition {
                type_: c.into(),
                status: "True".into(),
                ..Default::default()
            }]
        }),
        ..Default::default()
    });
    j
}

#[test]
fn the_pod_spec_hash_is_the_sha256_hex_of_the_template_json_and_changes_with_it() {
    // Known answer: the template's JSON is
    // {"spec":{"containers":[{"image":"a","name":"db-sync"}],"restartPolicy":"Never"}}
    // and `printf '%s' "$json" | sha256sum` gives:
    assert_eq!(
        key("a"),
        "570e6683d99f36226dd68b47f5f6d2dec3bdbb669d63fa222a42b5decd217d07"
    );
    assert_ne!(key("a"), key("b"));
}

#[test]
fn decide_job_covers_every_state_and_key() {
    let cases = [
        ("no Job is created", None, JobAction::Create),
        (
            "a running Job is waited for",
            Some(existing(Some("a"), None)),
            JobAction::Wait,
        ),
        (
            "a running Job whose key changed is still waited for, never updated",
            Some(existing(Some("old"), None)),
            JobAction::Wait,
        ),
        (
            "a complete Job with the same key is done",
            Some(existing(Some("a"), Some("Complete"))),
            JobAction::Done,
        ),
        (
            "a complete Job whose key changed is re-created",
            Some(existing(Some("old"), Some("Complete"))),
            JobAction::Recreate,
        ),
        (
            "a failed Job with the same key is a permanent failure",
            Some(existing(Some("a"), Some("Failed"))),
            JobAction::Failed,
        ),
        (
            "a failed Job whose key changed is re-created",
            Some(existing(Some("old"), Some("Failed"))),
            JobAction::Recreate,
        ),
        (
            "a finished Job without a stored key counts as changed",
            Some(existing(None, Some("Complete"))),
            JobAction::Recreate,
        ),
    ];
    for (case, job, action) in cases {
        assert_eq!(decide_job(job.as_ref(), &key("a")), action, "{case}");
    }
}

fn stored(job: &Job) -> serde_json::Value {
    serde_json::to_value(job).expect("encodes")
}

fn the_job(cluster: &FakeCluster) -> serde_json::Value {
    cluster
        .object(&ObjectRef::of::<Job>(Some("ns"), "db-sync"))
        .expect("stored")
}

#[test]
fn a_missing_job_is_created_with_owner_and_key_and_is_not_complete() {
    let cluster = FakeCluster::new();
    assert!(!run_job(&cluster, &owner(), &job("a")).expect("ok"));
    let created = the_job(&cluster);
    assert_eq!(
        created["metadata"]["annotations"][POD_SPEC_HASH_ANNOTATION],
        key("a")
    );
    assert_eq!(
        created["metadata"]["ownerReferences"][0]["uid"],
        "owner-uid"
    );
    assert_eq!(
        created["metadata"]["ownerReferences"][0]["controller"],
        true
    );
}

#[test]
fn a_complete_job_with_an_unchanged_key_is_done_without_side_effects() {
    let cluster = FakeCluster::new().with(stored(&existing(Some("a"), Some("Complete"))));
    assert!(run_job(&cluster, &owner(), &job("a")).expect("ok"));
    assert!(cluster.writes().is_empty(), "{:?}", cluster.writes());
}

#[test]
fn a_running_job_is_not_complete_and_is_left_alone() {
    let cluster = FakeCluster::new().with(stored(&existing(Some("old"), None)));
    assert!(!run_job(&cluster, &owner(), &job("a")).expect("ok"));
    assert!(cluster.writes().is_empty());
}

#[test]
fn a_finished_job_with_a_changed_key_is_deleted_and_recreated_never_updated() {
    for condition in ["Complete", "Failed"] {
        let cluster = FakeCluster::new().with(stored(&existing(Some("old"), Some(condition))));
        assert!(
            !run_job(&cluster, &owner(), &job("a")).expect("ok"),
            "{condition}"
        );
        let writes = cluster.writes();
        assert!(
            matches!(
                &writes[..],
                [
                    Call::Delete(
                        _,
                        crate::cluster::DeleteOptions {
                            propagation: Propagation::Background,
                            ..
                        }
                    ),
                    Call::Create(_)
                ]
            ),
            "{condition}: {writes:?}"
        );
        let recreated = the_job(&cluster);
        assert_eq!(
            recreated["metadata"]["annotations"][POD_SPEC_HASH_ANNOTATION],
            key("a")
        );
        assert!(recreated.get("status").is_none(), "{condition}");
    }
}

#[test]
fn a_failed_job_with_an_unchanged_key_is_err_job_failed() {
    let cluster = FakeCluster::new().with(stored(&existing(Some("a"), Some("Failed"))));
    let err = run_job(&cluster, &owner(), &job("a")).expect_err("failed");
    assert!(err.is_job_failed());
    assert_eq!(
        err.to_string(),
        "job failed: Job ns/db-sync failed permanently and its pod template is unchanged"
    );
    assert!(cluster.writes().is_empty());
}

#[test]
fn a_key_set_by_the_builder_is_the_rerun_key() {
    let mut desired = job("a");
    desired.metadata.annotations = Some(BTreeMap::from([(
        POD_SPEC_HASH_ANNOTATION.to_owned(),
        "password-digest".to_owned(),
    )]));
    let cluster = FakeCluster::new();
    run_job(&cluster, &owner(), &desired).expect("ok");
    assert_eq!(
        the_job(&cluster)["metadata"]["annotations"][POD_SPEC_HASH_ANNOTATION],
        "password-digest"
    );
}

#[test]
fn an_already_existing_job_on_create_is_not_complete_yet() {
    let cluster = FakeCluster::new().failing(
        Op::Create,
        "db-sync",
        ApiError::Conflict("already exists".into()),
    );
    assert!(!run_job(&cluster, &owner(), &job("a")).expect("ok"));
}

#[test]
fn an_unexpected_api_failure_is_an_error_naming_the_job() {
    let cluster =
        FakeCluster::new().failing(Op::Get, "db-sync", ApiError::Unavailable("down".into()));
    let err = run_job(&cluster, &owner(), &job("a")).expect_err("get fails");
    assert_eq!(
        err.to_string(),
        "fetching Job ns/db-sync: unavailable: down"
    );
    assert!(!err.is_job_failed());
}

fn cron_job() -> CronJob {
    CronJob {
        metadata: ObjectMeta {
            name: Some("trust-flush".into()),
            namespace: Some("ns".into()),
            ..Default::default()
        },
        spec: CronJobSpec {
            schedule: "0 * * * *".into(),
            job_template: JobTemplateSpec {
                metadata: None,
                spec: Some(JobSpec {
                    template: template("a"),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    }
}

#[test]
fn a_cron_job_is_applied_with_the_owner_and_a_converged_one_is_not_rewritten() {
    let cluster = FakeCluster::new();
    ensure_cron_job(&cluster, &owner(), &cron_job()).expect("1");
    ensure_cron_job(&cluster, &owner(), &cron_job()).expect("2");
    assert_eq!(cluster.writes().len(), 1);
    let stored = cluster
        .object(&ObjectRef::of::<CronJob>(Some("ns"), "trust-flush"))
        .expect("stored");
    assert_eq!(stored["metadata"]["ownerReferences"][0]["uid"], "owner-uid");
    assert_eq!(stored["spec"]["schedule"], "0 * * * *");
}

fn uid(object: &serde_json::Value) -> String {
    object["metadata"]["uid"]
        .as_str()
        .expect("a stored Job has a uid")
        .to_owned()
}

#[test]
fn a_lagging_cache_never_deletes_the_job_just_recreated() {
    let cluster = FakeCluster::new().with(stored(&existing(Some("old"), Some("Complete"))));
    cluster.freeze_cache();
    assert!(!run_job(&cluster, &owner(), &job("a")).expect("re-run"));
    let recreated = uid(&the_job(&cluster));
    cluster.clear_calls();
    // The cache still shows the finished Job under the old key.
    assert!(!run_job(&cluster, &owner(), &job("a")).expect("second pass"));
    assert_eq!(uid(&the_job(&cluster)), recreated);
    assert!(cluster.writes().is_empty(), "{:?}", cluster.writes());
    assert!(
        cluster
            .calls()
            .iter()
            .any(|c| matches!(c, Call::Get(_, crate::cluster::ReadFrom::Server))),
        "the re-run was confirmed on the server: {:?}",
        cluster.calls()
    );
}

#[test]
fn a_rerun_deletes_with_the_uid_and_resource_version_read_on_the_server() {
    let cluster = FakeCluster::new().with(stored(&existing(Some("old"), Some("Failed"))));
    let before = the_job(&cluster);
    run_job(&cluster, &owner(), &job("a")).expect("re-run");
    let deletes: Vec<_> = cluster
        .writes()
        .into_iter()
        .filter_map(|c| match c {
            Call::Delete(_, options) => Some(options.preconditions),
            _ => None,
        })
        .collect();
    assert_eq!(
        deletes,
        [crate::cluster::Preconditions {
            uid: Some(uid(&before)),
            resource_version: before["metadata"]["resourceVersion"]
                .as_str()
                .map(str::to_owned),
        }]
    );
}

#[test]
fn a_job_changed_between_the_read_and_the_delete_is_a_conflict_and_is_kept() {
    let cluster = FakeCluster::new().with(stored(&existing(Some("old"), Some("Complete"))));
    cluster.after_server_read("db-sync", |job| {
        job["metadata"]["labels"] = serde_json::json!({"touched": "yes"});
    });
    let err = run_job(&cluster, &owner(), &job("a")).expect_err("precondition fails");
    assert!(
        matches!(&err, Error::Delete { source: crate::Error::Api(ApiError::Conflict(m)), .. }
            if m.contains("Precondition failed: ResourceVersion in precondition")),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("deleting Job ns/db-sync to re-run it:"),
        "{err}"
    );
    assert_eq!(the_job(&cluster)["metadata"]["labels"]["touched"], "yes");
}
