//! Jobs: labelled pods that succeed, fail (with their termination message) or keep running.

use super::*;

fn job_condition(j: &Job, kind: &str) -> Option<(String, String)> {
    j.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .map(|c| (c.status.clone(), c.reason.clone().unwrap_or_default()))
}

async fn pods_of(client: &kube::Client, job: &str) -> Vec<Pod> {
    Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels(&format!("job-name={job}")))
        .await
        .expect("pods list")
        .items
}

#[tokio::test]
async fn a_job_runs_a_labelled_pod_and_completes() {
    let (_server, client) = start().await;
    let api: Api<Job> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &job("bootstrap", json!({}), 6))
        .await
        .expect("created");
    let done = eventually(
        "the Job to complete",
        || async { api.get("bootstrap").await.expect("get") },
        |j| job_condition(j, "Complete").is_some(),
    )
    .await;
    let status = done.status.clone().expect("a status");
    let types: Vec<_> = status
        .conditions
        .iter()
        .flatten()
        .map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_deref()))
        .collect();
    assert_eq!(
        types,
        [
            ("SuccessCriteriaMet", "True", Some("CompletionsReached")),
            ("Complete", "True", Some("CompletionsReached"))
        ]
    );
    assert_eq!(status.succeeded, Some(1));
    assert_eq!(status.failed, None);
    assert!(status.completion_time.is_some() && status.start_time.is_some());
    let pods = pods_of(&client, "bootstrap").await;
    assert_eq!(pods.len(), 1, "one pod");
    let pod = &pods[0];
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let uid = done.metadata.uid.clone().expect("a uid");
    assert_eq!(
        labels
            .get("batch.kubernetes.io/job-name")
            .map(String::as_str),
        Some("bootstrap")
    );
    assert_eq!(labels.get("controller-uid"), Some(&uid));
    let owner = &pod.metadata.owner_references.as_ref().expect("owned")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
        ("Job", uid.as_str(), Some(true))
    );
    assert_eq!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded")
    );
}

#[tokio::test]
async fn a_job_told_to_fail_fails_after_backoff_limit_plus_one_pods_with_their_termination_message()
{
    let (_server, client) = start().await;
    let api: Api<Job> = Api::default_namespaced(client.clone());
    let annotations = json!({"actors.wasm-operator.dev/job-outcome": "Fail",
        "actors.wasm-operator.dev/job-failure-message": "policy.yaml: rule admin_required is undefined"});
    api.create(
        &PostParams::default(),
        &job("policy-validation", annotations, 2),
    )
    .await
    .expect("created");
    let failed = eventually(
        "the Job to fail",
        || async { api.get("policy-validation").await.expect("get") },
        |j| job_condition(j, "Failed").is_some(),
    )
    .await;
    let status = failed.status.clone().expect("a status");
    assert_eq!(status.failed, Some(3), "backoffLimit 2: three pods failed");
    assert_eq!(
        job_condition(&failed, "FailureTarget"),
        Some(("True".into(), "BackoffLimitExceeded".into()))
    );
    assert_eq!(
        job_condition(&failed, "Failed"),
        Some(("True".into(), "BackoffLimitExceeded".into()))
    );
    assert_eq!(job_condition(&failed, "Complete"), None);
    let pods = pods_of(&client, "policy-validation").await;
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        let s = pod.status.as_ref().expect("a pod status");
        assert_eq!(s.phase.as_deref(), Some("Failed"));
        let terminated = s.container_statuses.as_ref().expect("container statuses")[0]
            .state
            .as_ref()
            .and_then(|st| st.terminated.as_ref())
            .expect("terminated");
        assert_eq!(terminated.exit_code, 1);
        assert_eq!(
            terminated.message.as_deref(),
            Some("policy.yaml: rule admin_required is undefined")
        );
    }
}

#[tokio::test]
async fn the_outcomes_config_map_decides_jobs_by_name_before_they_exist_and_annotations_win() {
    let (_server, client) = start().await;
    let config_maps: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let table: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": wasm_operator_apiserver::JOB_OUTCOMES_CONFIG_MAP},
        "data": {"schema-check": "Fail", "schema-check.message": "schema drift: table x",
                 "overridden": "Fail"}}))
    .expect("a ConfigMap");
    config_maps
        .create(&PostParams::default(), &table)
        .await
        .expect("the table");
    let api: Api<Job> = Api::default_namespaced(client.clone());
    for job in [
        job("schema-check", json!({}), 0),
        job(
            "overridden",
            json!({"actors.wasm-operator.dev/job-outcome": "Succeed"}),
            0,
        ),
        job("unlisted", json!({}), 0),
    ] {
        api.create(&PostParams::default(), &job)
            .await
            .expect("created");
    }
    let finished =
        |j: &Job| job_condition(j, "Failed").is_some() || job_condition(j, "Complete").is_some();
    let failed = eventually(
        "schema-check to end",
        || async { api.get("schema-check").await.expect("get") },
        finished,
    )
    .await;
    assert_eq!(
        job_condition(&failed, "Failed"),
        Some(("True".into(), "BackoffLimitExceeded".into()))
    );
    let pods = pods_of(&client, "schema-check").await;
    let terminated = pods[0]
        .status
        .as_ref()
        .expect("a pod status")
        .container_statuses
        .as_ref()
        .expect("container statuses")[0]
        .state
        .as_ref()
        .and_then(|st| st.terminated.clone())
        .expect("terminated");
    assert_eq!(terminated.message.as_deref(), Some("schema drift: table x"));
    for name in ["overridden", "unlisted"] {
        let done = eventually(
            &format!("{name} to end"),
            || async { api.get(name).await.expect("get") },
            finished,
        )
        .await;
        assert_eq!(
            job_condition(&done, "Complete"),
            Some(("True".into(), "CompletionsReached".into())),
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_job_told_to_run_stays_active_until_told_otherwise() {
    let (_server, client) = start().await;
    let api: Api<Job> = Api::default_namespaced(client.clone());
    let run = json!({"actors.wasm-operator.dev/job-outcome": "Run"});
    api.create(&PostParams::default(), &job("db-sync", run, 6))
        .await
        .expect("created");
    let active = |j: &Job| {
        j.status
            .as_ref()
            .is_some_and(|s| s.active == Some(1) && s.ready == Some(1))
    };
    eventually(
        "the Job to run",
        || async { api.get("db-sync").await.expect("get") },
        active,
    )
    .await;
    // A second Job completes meanwhile: the actor kept stepping Jobs.
    api.create(&PostParams::default(), &job("other", json!({}), 6))
        .await
        .expect("created");
    eventually(
        "the other Job",
        || async { api.get("other").await.expect("get") },
        |j| job_condition(j, "Complete").is_some(),
    )
    .await;
    let still = api.get("db-sync").await.expect("get");
    assert!(
        active(&still) && job_condition(&still, "Complete").is_none(),
        "still running: {:#?}",
        still.status
    );
    let pods = pods_of(&client, "db-sync").await;
    assert_eq!(pods.len(), 1);
    assert_eq!(
        pods[0].status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Running")
    );
    let succeed =
        json!({"metadata": {"annotations": {"actors.wasm-operator.dev/job-outcome": "Succeed"}}});
    api.patch("db-sync", &PatchParams::default(), &Patch::Merge(succeed))
        .await
        .expect("annotated");
    eventually(
        "the Job to complete",
        || async { api.get("db-sync").await.expect("get") },
        |j| job_condition(j, "Complete").is_some(),
    )
    .await;
}
