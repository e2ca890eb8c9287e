//! HorizontalPodAutoscalers: current and desired replicas.

use super::*;

#[tokio::test]
async fn an_hpa_reports_its_targets_replicas_clamped_to_its_bounds() {
    let (_server, client) = start().await;
    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    create_deployment(&deployments, &deployment("api", 1, "keystone:1")).await;
    let hpas: Api<HorizontalPodAutoscaler> = Api::default_namespaced(client);
    let hpa = |name: &str, target: &str| -> HorizontalPodAutoscaler {
        serde_json::from_value(json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name}, "spec": {"minReplicas": 2, "maxReplicas": 5,
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target}}}))
        .expect("an HPA")
    };
    hpas.create(&PostParams::default(), &hpa("api", "api"))
        .await
        .expect("created");
    hpas.create(&PostParams::default(), &hpa("orphan", "missing"))
        .await
        .expect("created");
    let api = eventually(
        "the HPA status",
        || async { hpas.get("api").await.expect("get") },
        |h| {
            h.status
                .as_ref()
                .is_some_and(|s| s.current_replicas == Some(1))
        },
    )
    .await;
    let s = api.status.expect("a status");
    assert_eq!(s.desired_replicas, 2, "1 replica clamped to minReplicas 2");
    let limited = s
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "ScalingLimited")
        .expect("ScalingLimited");
    assert_eq!(
        (limited.status.as_str(), limited.reason.as_deref()),
        ("True", Some("TooFewReplicas"))
    );
    let orphan = eventually(
        "the orphan HPA status",
        || async { hpas.get("orphan").await.expect("get") },
        |h| h.status.is_some(),
    )
    .await;
    let able = orphan.status.and_then(|s| s.conditions).unwrap_or_default();
    let able = able
        .iter()
        .find(|c| c.type_ == "AbleToScale")
        .expect("AbleToScale");
    assert_eq!(
        (able.status.as_str(), able.reason.as_deref()),
        ("False", Some("FailedGetScale"))
    );
}
