//! Step 11, HPA (facts §2.18): horizontal autoscaling of the API Deployment.
//!
//! | spec.autoscaling | HorizontalPodAutoscaler `{name}` | HPAReady |
//! |---|---|---|
//! | absent | deleted if the Keystone controls it | True `HPANotRequired` |
//! | set | applied | True `HPAReady` |
//!
//! The HPA (`autoscaling/v2`) scales the `apps/v1` Deployment `{name}` between
//! `minReplicas` (the Deployment's effective replica count when unset) and `maxReplicas`,
//! on average Resource Utilization of cpu, then memory, whichever targets are set. The
//! Deployment step leaves `replicas` unset while autoscaling is on, so the two never fight
//! over the count.
//!
//! Applying and deleting go through the SDK's `blocks::optional::ensure_or_delete`: an HPA
//! of the Keystone's name that someone else made is left alone.

use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricSpec,
    MetricTarget, ResourceMetricSource,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::blocks::optional::{WhenAbsent, ensure_or_delete};
use wasm_operator_sdk::blocks::types::AutoscalingSpec;

use crate::conditions::HPA_READY;
use crate::labels::common_labels;
use crate::pass::{Pass, StepResult};

fn utilization(resource: &str, percent: i32) -> MetricSpec {
    MetricSpec {
        type_: "Resource".into(),
        resource: Some(ResourceMetricSource {
            name: resource.into(),
            target: MetricTarget {
                type_: "Utilization".into(),
                average_utilization: Some(percent),
                ..Default::default()
            },
        }),
        ..Default::default()
    }
}

/// The HPA of a Keystone whose `spec.autoscaling` is `autoscaling`.
pub(crate) fn hpa(pass: &Pass<'_>, autoscaling: &AutoscalingSpec) -> HorizontalPodAutoscaler {
    let name = pass.name();
    let min_replicas = autoscaling
        .min_replicas
        .unwrap_or_else(|| pass.keystone.spec.deployment.effective_replicas());
    let metrics = [
        ("cpu", autoscaling.target_cpu_utilization),
        ("memory", autoscaling.target_memory_utilization),
    ]
    .into_iter()
    .filter_map(|(resource, target)| target.map(|percent| utilization(resource, percent)))
    .collect();
    HorizontalPodAutoscaler {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(common_labels(name)),
            ..Default::default()
        },
        spec: HorizontalPodAutoscalerSpec {
            scale_target_ref: CrossVersionObjectReference {
                api_version: Some("apps/v1".into()),
                kind: "Deployment".into(),
                name: name.to_owned(),
            },
            min_replicas: Some(min_replicas),
            max_replicas: autoscaling.max_replicas,
            metrics: Some(metrics),
            behavior: None,
        },
        status: None,
    }
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let name = pass.name().to_owned();
    let desired = pass
        .keystone
        .spec
        .autoscaling
        .as_ref()
        .map(|autoscaling| hpa(pass, autoscaling));
    ensure_or_delete(
        pass.cluster,
        &pass.owner,
        pass.namespace(),
        &name,
        desired.as_ref(),
        WhenAbsent::Delete,
    )?;
    if desired.is_some() {
        pass.condition(
            HPA_READY,
            true,
            "HPAReady",
            "HorizontalPodAutoscaler is configured",
        );
    } else {
        pass.condition(
            HPA_READY,
            true,
            "HPANotRequired",
            "Autoscaling is not configured",
        );
    }
    Ok(None)
}

#[cfg(test)]
#[path = "hpa_tests.rs"]
mod tests;
