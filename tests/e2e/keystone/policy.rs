//! Step 8 end to end: the policy-validation Job's failure stops the pass with its
//! message, and a changed policy runs the validator again.

use serde_json::json;

use crate::harness::{Harness, keystone, keystone_ref};

const JOB: &str = "ks-policy-validation";

async fn job_uid(h: &Harness) -> Option<String> {
    let job = h.cluster.get("batch/v1", "Job", "ns", JOB).await?;
    job["metadata"]["uid"].as_str().map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_policy_validation_stops_the_pass_with_the_jobs_message_and_reruns_when_the_policy_changes()
 {
    let h = Harness::start().await;
    let complaint = "identity:get_user: Unknown rule \"admin_requried\"";
    h.job_outcomes("ns", &[(JOB, "Fail", complaint)]).await;
    let rules = json!({"identity:get_user": "rule:admin_requried"});
    h.cluster
        .create(keystone(json!({"policyOverrides": {"rules": rules}})))
        .await;

    let failed = h
        .condition("PolicyValidReady", "PolicyValidationFailed")
        .await;
    let message = wasm_operator_e2e::current_condition(&failed, "PolicyValidReady")
        .expect("the condition")["message"]
        .clone();
    assert_eq!(
        message,
        json!(format!("Policy validation failed: {complaint}"))
    );
    assert!(
        h.reasons
            .saw("ns", "PolicyValidReady", "PolicyValidationInProgress"),
        "the Job ran before it failed"
    );
    assert!(
        h.cluster
            .get("apps/v1", "Deployment", "ns", "ks")
            .await
            .is_none(),
        "the pass stopped before the Deployment"
    );
    let first = job_uid(&h).await.expect("the validator Job");

    // The user fixes the rule; the validator passes this time.
    h.job_outcomes("ns", &[(JOB, "Succeed", "")]).await;
    h.cluster
        .merge_patch(
            &keystone_ref("ns"),
            json!({"spec": {"policyOverrides": {"rules": {"identity:get_user": "rule:admin_required"}}}}),
        )
        .await;
    h.condition("PolicyValidReady", "PolicyValidationPassed")
        .await;
    let second = job_uid(&h).await.expect("the validator Job");
    assert_ne!(first, second, "the Job ran again for the changed policy");
    h.condition("DeploymentReady", "DeploymentReady").await;
    let config = h.config_volume().await.expect("the config volume");
    let config_map = h
        .cluster
        .get("v1", "ConfigMap", "ns", &config)
        .await
        .expect("the mounted ConfigMap");
    assert!(
        config_map["data"]["policy.yaml"]
            .as_str()
            .unwrap_or_default()
            .contains("rule:admin_required"),
        "the Deployment mounts the validated policy"
    );
}
