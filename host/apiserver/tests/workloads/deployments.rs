//! Deployments: status, stepped rollouts and the hold.

use super::*;

#[tokio::test]
async fn a_new_deployment_becomes_available_with_the_controller_managers_status() {
    let (_server, client) = start().await;
    let api: Api<Deployment> = Api::default_namespaced(client);
    create_deployment(&api, &deployment("api", 2, "keystone:1")).await;
    let d = eventually(
        "the Deployment to be available",
        || async { api.get("api").await.expect("get") },
        |d| rolled_out(d, 2),
    )
    .await;
    let s = status(&d);
    assert_eq!(s["observedGeneration"], 1);
    let available = condition(&s, "Available");
    assert_eq!(
        (&available["status"], &available["reason"]),
        (&json!("True"), &json!("MinimumReplicasAvailable"))
    );
    assert_eq!(condition(&s, "Progressing")["status"], "True");
    let managers: Vec<_> = d
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|m| {
            (
                m.manager.clone(),
                m.operation.clone(),
                m.subresource.clone(),
            )
        })
        .collect();
    assert!(
        managers.contains(&(
            Some("kube-controller-manager".into()),
            Some("Update".into()),
            Some("status".into())
        )),
        "the status is written by kube-controller-manager: {managers:?}"
    );
}

#[tokio::test]
async fn a_changed_pod_template_rolls_out_one_replica_per_step() {
    let (_server, client) = start().await;
    let api: Api<Deployment> = Api::default_namespaced(client);
    create_deployment(&api, &deployment("api", 3, "keystone:1")).await;
    eventually(
        "the first rollout",
        || async { api.get("api").await.expect("get") },
        |d| rolled_out(d, 3),
    )
    .await;
    // Every status write is a watch event: collect them while the new template rolls out.
    let events = watcher(api.clone(), watcher::Config::default())
        .applied_objects()
        .boxed();
    set_image(&api, "api", "keystone:2").await;
    let seen: Vec<Deployment> = tokio::time::timeout(
        Duration::from_secs(60),
        events
            .try_take_while(|d| {
                std::future::ready(Ok(!(d.metadata.generation == Some(2) && rolled_out(d, 3))))
            })
            .try_collect(),
    )
    .await
    .expect("the rollout finishes")
    .expect("the watch runs");
    let steps: Vec<(i64, i64, i64)> = seen
        .iter()
        .filter(|d| d.metadata.generation == Some(2))
        .map(status)
        .filter(|s| s["observedGeneration"] == 2)
        .map(|s| {
            let n = |f: &str| s[f].as_i64().unwrap_or(0);
            (n("replicas"), n("updatedReplicas"), n("readyReplicas"))
        })
        .collect();
    // One surge pod at a time: (replicas, updated, ready).
    let expected = [(4, 1, 3), (3, 1, 3), (4, 2, 3), (3, 2, 3), (4, 3, 3)];
    let mut dedup = steps.clone();
    dedup.dedup();
    assert_eq!(dedup, expected, "the rollout's steps as watched");
}

#[tokio::test]
async fn a_held_rollout_stays_part_way_until_the_hold_is_removed() {
    let (_server, client) = start().await;
    let api: Api<Deployment> = Api::default_namespaced(client);
    create_deployment(&api, &deployment("api", 2, "keystone:1")).await;
    eventually(
        "the first rollout",
        || async { api.get("api").await.expect("get") },
        |d| rolled_out(d, 2),
    )
    .await;
    let hold =
        json!({"metadata": {"annotations": {"actors.wasm-operator.dev/hold-rollout": "true"}}});
    api.patch("api", &PatchParams::default(), &Patch::Merge(hold))
        .await
        .expect("the hold is set");
    set_image(&api, "api", "keystone:2").await;
    let part_way = |d: &Deployment| {
        let s = status(d);
        s["observedGeneration"] == 2 && s["updatedReplicas"] == 1 && s["replicas"] == 3
    };
    eventually(
        "the rollout to start",
        || async { api.get("api").await.expect("get") },
        part_way,
    )
    .await;
    // Another Deployment rolls all the way out meanwhile: the actor kept stepping.
    create_deployment(&api, &deployment("other", 2, "keystone:1")).await;
    eventually(
        "the other rollout",
        || async { api.get("other").await.expect("get") },
        |d| rolled_out(d, 2),
    )
    .await;
    set_image(&api, "other", "keystone:2").await;
    eventually(
        "the other rollout",
        || async { api.get("other").await.expect("get") },
        |d| d.metadata.generation == Some(2) && rolled_out(d, 2),
    )
    .await;
    let held = api.get("api").await.expect("get");
    assert!(
        part_way(&held),
        "the held rollout did not go on: {:#?}",
        held.status
    );
    let progressing = condition(&status(&held), "Progressing").clone();
    assert_eq!(progressing["reason"], "ReplicaSetUpdated");
    let release =
        json!({"metadata": {"annotations": {"actors.wasm-operator.dev/hold-rollout": null}}});
    api.patch("api", &PatchParams::default(), &Patch::Merge(release))
        .await
        .expect("the hold is removed");
    eventually(
        "the released rollout",
        || async { api.get("api").await.expect("get") },
        |d| rolled_out(d, 2),
    )
    .await;
}

#[tokio::test]
async fn a_scaled_deployment_reports_its_new_replicas_without_a_rollout() {
    let (_server, client) = start().await;
    let api: Api<Deployment> = Api::default_namespaced(client);
    create_deployment(&api, &deployment("api", 2, "keystone:1")).await;
    eventually(
        "the first rollout",
        || async { api.get("api").await.expect("get") },
        |d| rolled_out(d, 2),
    )
    .await;
    let scale = json!({"spec": {"replicas": 4}});
    api.patch("api", &PatchParams::default(), &Patch::Merge(scale))
        .await
        .expect("scaled");
    let scaled = eventually(
        "the scaled status",
        || async { api.get("api").await.expect("get") },
        |d| status(d)["observedGeneration"] == 2,
    )
    .await;
    assert!(
        rolled_out(&scaled, 4),
        "the first status of generation 2 already counts 4 ready replicas: {:#?}",
        scaled.status
    );
}
