//! HorizontalPodAutoscalers: `currentReplicas` (the target Deployment's replicas) and
//! `desiredReplicas` (those clamped to `minReplicas`..=`maxReplicas`), with the
//! `AbleToScale` and `ScalingLimited` conditions. No metrics are read and the target is
//! not scaled.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::ResourceExt as _;
use kube::runtime::reflector::Store;
use serde_json::json;

use super::{CONTROLLER_MANAGER, WorkloadError, condition, conditions_of, holds, patch_status};

/// Writes `hpa`'s status from its target in `deployments` when it changed.
pub(crate) async fn step(
    client: &kube::Client,
    hpa: &HorizontalPodAutoscaler,
    deployments: &Store<Deployment>,
) -> Result<(), WorkloadError> {
    let Some(ns) = hpa.namespace() else {
        return Ok(());
    };
    let spec = &hpa.spec;
    let status = serde_json::to_value(&hpa.status).ok();
    let previous = conditions_of(status.as_ref());
    let target = &spec.scale_target_ref;
    let found = (target.kind == "Deployment")
        .then(|| {
            deployments.state().into_iter().find(|d| {
                d.namespace().as_deref() == Some(ns.as_str()) && d.name_any() == target.name
            })
        })
        .flatten();
    let want = match found {
        Some(d) => {
            let current = d
                .status
                .as_ref()
                .and_then(|s| s.replicas)
                .or(d.spec.replicas)
                .unwrap_or(1);
            let min = spec.min_replicas.unwrap_or(1);
            let max = spec.max_replicas.max(min);
            let desired = current.clamp(min, max);
            let (limited, reason, message) = if current < min {
                (
                    true,
                    "TooFewReplicas",
                    "the desired replica count is less than the minimum replica count",
                )
            } else if current > max {
                (
                    true,
                    "TooManyReplicas",
                    "the desired replica count is more than the maximum replica count",
                )
            } else {
                (
                    false,
                    "DesiredWithinRange",
                    "the desired count is within the acceptable range",
                )
            };
            json!({
                "currentReplicas": current,
                "desiredReplicas": desired,
                "conditions": [
                    condition(&previous, "AbleToScale", true, "SucceededGetScale", "the HPA controller was able to get the target's current scale", false),
                    condition(&previous, "ScalingLimited", limited, reason, message, false),
                ],
            })
        }
        None => json!({
            "currentReplicas": null,
            "desiredReplicas": 0,
            "conditions": [condition(&previous, "AbleToScale", false, "FailedGetScale",
                &format!("the HPA controller was unable to get the target's current scale: {} {:?} not found", target.kind.to_lowercase(), target.name), false)],
        }),
    };
    if holds(status.as_ref(), &want) {
        return Ok(());
    }
    patch_status::<HorizontalPodAutoscaler>(client, &ns, &hpa.name_any(), CONTROLLER_MANAGER, want)
        .await
}
