//! Convergence: to Ready with every member of the pipeline, then a pass with nothing to
//! write, and the optional route and autoscaler gone with their spec blocks; a changed
//! config rolled; kubectl refused or defaulted by the plugin's admission.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use wasm_operator_e2e::webhooks::{kubectl, register_webhooks};
use wasm_operator_e2e::{counter_rises, eventually, passes, setup};
use wasm_operator_runtime::backend::ClusterBackend as _;
use wasm_operator_sdk::{ObjectRef, Patch};

use crate::harness::{Harness, READY_ACTORS, WAIT, keystone, keystone_ref};

/// Everything a Keystone can ask for: a route through the Gateway `public`, autoscaling,
/// the trust flush and the admin password rotation.
fn exposed_keystone() -> Value {
    keystone(json!({
        "gateway": {"parentRef": {"name": "public", "sectionName": "https"},
                    "hostname": "identity.example.com"},
        "autoscaling": {"maxReplicas": 5, "targetCPUUtilization": 80},
        "trustFlush": {"schedule": "0 * * * *"},
        "passwordRotation": {"enabled": true, "schedule": "0 0 1 * *", "passwordLength": 32},
    }))
}

fn reasons_of(object: &Value) -> BTreeMap<String, String> {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["type"].as_str().unwrap_or_default().to_owned(),
                c["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keystone_becomes_ready_with_all_fifteen_conditions_and_a_converged_pass_writes_nothing()
{
    let h = Harness::start_with(&READY_ACTORS).await;
    h.seed("ns", &[]).await;
    h.cluster
        .create(json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "public", "namespace": "ns"},
            "spec": {"gatewayClassName": "shared", "listeners": [
                {"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "*.example.com"}]}}))
        .await;
    h.cluster.create(exposed_keystone()).await;
    let converged = match tokio::time::timeout(WAIT, h.condition("Ready", "AllReady")).await {
        Ok(object) => object,
        Err(_) => panic!("{:#}", h.keystone().await.expect("ks")["status"]),
    };
    let reasons = reasons_of(&converged);
    let expected = [
        ("SecretsReady", "SecretsAvailable"),
        ("DatabaseTLSReady", "NotRequired"),
        ("IdentityBackendsReady", "IdentityBackendsNotRequired"),
        ("FernetKeysReady", "FernetKeysAvailable"),
        ("CredentialKeysReady", "CredentialKeysAvailable"),
        ("NetworkPolicyReady", "NetworkPolicyNotRequired"),
        ("DatabaseReady", "DatabaseSynced"),
        ("PolicyValidReady", "PolicyValidationNotRequired"),
        ("DeploymentReady", "DeploymentReady"),
        ("HTTPRouteReady", "HTTPRouteAccepted"),
        ("KeystoneAPIReady", "APIHealthy"),
        ("HPAReady", "HPAReady"),
        ("BootstrapReady", "BootstrapComplete"),
        ("TrustFlushReady", "TrustFlushReady"),
        ("PasswordRotationReady", "PasswordRotationConfigured"),
    ];
    for (condition, reason) in expected {
        assert_eq!(
            reasons.get(condition).map(String::as_str),
            Some(reason),
            "{condition}"
        );
    }
    assert_eq!(
        converged["status"]["endpoint"], "https://identity.example.com/v3",
        "the gateway's host is the endpoint"
    );
    assert_eq!(converged["status"]["installedRelease"], "2025.2");
    // On the way there it passed through each step's waiting reason.
    for (condition, reason) in [
        ("FernetKeysReady", "GeneratingKeys"),
        ("CredentialKeysReady", "GeneratingKeys"),
        ("DatabaseReady", "WaitingForDatabase"),
        ("DatabaseReady", "DBSyncInProgress"),
        ("DatabaseReady", "SchemaCheckInProgress"),
        ("DeploymentReady", "WaitingForDeployment"),
        ("BootstrapReady", "BootstrapInProgress"),
    ] {
        assert!(
            h.reasons.saw("ns", condition, reason),
            "{condition} {reason}"
        );
    }
    // The jobs ran, the children exist.
    for (api_version, kind, name) in [
        ("batch/v1", "Job", "ks-db-sync"),
        ("batch/v1", "Job", "ks-schema-check"),
        ("batch/v1", "Job", "ks-bootstrap"),
        ("batch/v1", "CronJob", "ks-fernet-rotate"),
        ("batch/v1", "CronJob", "ks-credential-rotate"),
        ("batch/v1", "CronJob", "ks-trust-flush"),
        ("batch/v1", "CronJob", "ks-admin-password-rotate"),
        ("v1", "Service", "ks"),
        ("policy/v1", "PodDisruptionBudget", "ks"),
        ("autoscaling/v2", "HorizontalPodAutoscaler", "ks"),
        ("gateway.networking.k8s.io/v1", "HTTPRoute", "ks"),
        ("k8s.mariadb.com/v1alpha1", "Grant", "ks"),
        (
            "external-secrets.io/v1alpha1",
            "PushSecret",
            "ks-fernet-keys-backup",
        ),
    ] {
        assert!(
            h.cluster.get(api_version, kind, "ns", name).await.is_some(),
            "{kind} {name}"
        );
    }

    // Another pass, started by a change of an owned object, finds nothing to do.
    let writes = h.plugin_writes();
    let before = passes(&h.operator, "keystone");
    h.cluster
        .backend
        .patch(
            &setup(),
            &ObjectRef {
                api_version: "v1".into(),
                kind: "Secret".into(),
                namespace: Some("ns".into()),
                name: "ks-db-connection".into(),
            },
            &Patch::Merge(json!({"metadata": {"annotations": {"touched": "yes"}}})),
            None,
        )
        .await
        .expect("annotated");
    counter_rises("the pass the annotation started", WAIT, before, || {
        passes(&h.operator, "keystone")
    })
    .await;
    assert_eq!(h.plugin_writes(), writes, "the converged pass wrote");
    let after = h.keystone().await.expect("the Keystone");
    assert_eq!(
        after["metadata"]["resourceVersion"], converged["metadata"]["resourceVersion"],
        "its status was rewritten"
    );

    // Without a gateway and autoscaling the route and the autoscaler go.
    h.cluster
        .merge_patch(
            &keystone_ref("ns"),
            json!({"spec": {"gateway": null, "autoscaling": null}}),
        )
        .await;
    h.condition("HTTPRouteReady", "HTTPRouteNotRequired").await;
    let object = h.condition("HPAReady", "HPANotRequired").await;
    assert_eq!(
        object["status"]["endpoint"],
        "http://ks.ns.svc.cluster.local:5000/v3"
    );
    for (api_version, kind) in [
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ("gateway.networking.k8s.io/v1", "HTTPRoute"),
    ] {
        assert!(
            h.cluster.get(api_version, kind, "ns", "ks").await.is_none(),
            "{kind} deleted"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_config_rolls_a_new_hashed_config_map() {
    let h = Harness::start().await;
    h.cluster.create(keystone(json!({}))).await;
    h.condition("DeploymentReady", "DeploymentReady").await;
    let first = h.config_volume().await.expect("a config volume");
    assert!(first.starts_with("ks-config-"), "{first}");
    h.cluster
        .backend
        .patch(
            &setup(),
            &keystone_ref("ns"),
            &Patch::Merge(json!({"spec": {"extraConfig": {"token": {"expiration": "7200"}}}})),
            None,
        )
        .await
        .expect("patched");
    let second = eventually("the Deployment mounts a new ConfigMap", WAIT, || async {
        h.config_volume().await.filter(|name| *name != first)
    })
    .await;
    assert!(second.starts_with("ks-config-"), "{second}");
    let config = h
        .cluster
        .get("v1", "ConfigMap", "ns", &second)
        .await
        .expect("the new ConfigMap");
    assert_eq!(config["immutable"], true);
    assert!(
        config["data"]["keystone.conf"]
            .as_str()
            .unwrap_or_default()
            .contains("expiration = 7200")
    );
    assert!(
        h.cluster
            .get("v1", "ConfigMap", "ns", &first)
            .await
            .is_some(),
        "the old one stays for a rollback until prune"
    );
    h.condition("DeploymentReady", "DeploymentReady").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_of_an_invalid_keystone_is_refused_with_the_field_named_and_a_valid_one_is_defaulted()
 {
    let h = Harness::start().await;
    let plugin = h.plugins.path().join("keystone.wasm");
    register_webhooks(
        &h.cluster,
        &h.operator,
        &[plugin.as_path()],
        h.operator.webhook_ca(),
    )
    .await;
    let as_yaml = |object: Value| serde_yaml_ng::to_string(&object).expect("YAML");
    // The schema lets any string through; the plugin's validation checks the cron grammar.
    let invalid = keystone(json!({"trustFlush": {"schedule": "0 * * *"}}));
    let (ok, _, stderr) = kubectl(&h.cluster, &["apply", "-f", "-"], &as_yaml(invalid)).await;
    assert!(!ok, "refused");
    assert!(
        stderr.contains(
            "The Keystone \"ks\" is invalid: spec.trustFlush.schedule: Invalid value: \"0 * * *\": invalid cron expression"
        ),
        "{stderr}"
    );
    assert!(h.keystone().await.is_none());
    let (ok, _, stderr) = kubectl(
        &h.cluster,
        &["apply", "-f", "-"],
        &as_yaml(keystone(json!({}))),
    )
    .await;
    assert!(ok, "{stderr}");
    let stored = h.keystone().await.expect("stored");
    assert_eq!(stored["spec"]["bootstrap"]["adminUser"], "admin");
    assert_eq!(stored["spec"]["bootstrap"]["region"], "RegionOne");
    assert_eq!(
        stored["spec"]["trustFlush"],
        json!({"schedule": "0 * * * *", "suspend": false})
    );
    assert_eq!(stored["spec"]["database"]["credentialsMode"], "Static");
}
