//! The soak's Keystone lives: a Keystone (with its MariaDB and credentials, served by the
//! cluster actors) per life, the operator killed 1–5 s into it, and the Jobs it runs held to
//! one run each: a Job name seen with a second uid is a Job created again.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;
use tokio::time::Instant;
use wasm_operator::cluster::kube::KubeCluster;

use crate::cluster::is_ready;
use crate::keystone::{keystone_objects, keystone_resource};
use crate::keystone_scale::create;

/// The Keystones' namespaces start with this.
pub(super) const NAMESPACE_PREFIX: &str = "keystone-";

/// The Keystone CRD and the ClusterSecretStore the Keystones' backups use.
pub(super) async fn install(client: &kube::Client) -> anyhow::Result<()> {
    crate::keystone_scale::install(&KubeCluster::new(client.clone())).await
}

/// Creates Keystone `i` and what it needs.
pub(super) async fn begin(client: &kube::Client, i: usize) -> anyhow::Result<()> {
    let backend = KubeCluster::new(client.clone());
    for object in keystone_objects(&format!("{NAMESPACE_PREFIX}{i}")) {
        create(&backend, object).await?;
    }
    Ok(())
}

/// Every Job of the Keystones' namespaces: `namespace/name` → uid.
pub(super) async fn jobs(client: &kube::Client) -> anyhow::Result<BTreeMap<String, String>> {
    let api: Api<Job> = Api::all(client.clone());
    Ok(api
        .list(&ListParams::default())
        .await
        .context("listing Jobs")?
        .items
        .into_iter()
        .filter_map(|job| {
            let namespace = job.metadata.namespace?;
            namespace.starts_with(NAMESPACE_PREFIX).then(|| {
                (
                    format!("{namespace}/{}", job.metadata.name.unwrap_or_default()),
                    job.metadata.uid.unwrap_or_default(),
                )
            })
        })
        .collect())
}

/// Checks that no Job of `now` was seen before with another uid; adds the new ones.
pub(super) fn check_jobs(
    seen: &mut BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
    when: &str,
    violations: &mut Vec<String>,
) {
    for (job, uid) in now {
        match seen.get(job) {
            Some(first) if first != uid => violations.push(format!(
                "{when}: Job {job} was created again (a second run)"
            )),
            Some(_) => {}
            None => {
                seen.insert(job.clone(), uid.clone());
            }
        }
    }
}

/// Waits until `expected` Keystones are Ready; an error names how many were.
pub(super) async fn wait_ready(
    client: &kube::Client,
    expected: usize,
    timeout: Duration,
) -> anyhow::Result<()> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &keystone_resource());
    let started = Instant::now();
    loop {
        let keystones: Vec<Value> = api
            .list(&ListParams::default())
            .await
            .context("listing Keystones")?
            .items
            .iter()
            .filter_map(|k| serde_json::to_value(k).ok())
            .collect();
        let waiting: Vec<String> = keystones
            .iter()
            .filter(|k| !is_ready(k))
            .map(not_ready)
            .collect();
        let ready = keystones.len() - waiting.len();
        if ready >= expected {
            return Ok(());
        }
        anyhow::ensure!(
            started.elapsed() < timeout,
            "{ready} of {expected} Keystones were Ready after {timeout:?}; not Ready: {}",
            waiting.join("; ")
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A Keystone that is not Ready, named with the type and reason of each condition that is
/// not True (no messages: the report holds no object content).
fn not_ready(keystone: &Value) -> String {
    let namespace = keystone
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let conditions: Vec<String> = keystone
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c["status"] != "True")
        .map(|c| {
            format!(
                "{}={}",
                c["type"].as_str().unwrap_or("?"),
                c["reason"].as_str().unwrap_or("?")
            )
        })
        .collect();
    format!("{namespace}/ks ({})", conditions.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_seen_again_with_another_uid_is_a_second_run() {
        let mut seen = BTreeMap::from([("keystone-0/ks-db-sync".to_owned(), "u1".to_owned())]);
        let now = BTreeMap::from([
            ("keystone-0/ks-db-sync".to_owned(), "u2".to_owned()),
            ("keystone-0/ks-bootstrap".to_owned(), "u3".to_owned()),
        ]);
        let mut violations = Vec::new();
        check_jobs(&mut seen, &now, "t", &mut violations);
        assert_eq!(
            violations,
            ["t: Job keystone-0/ks-db-sync was created again (a second run)"]
        );
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn a_keystone_not_ready_is_named_with_its_conditions_that_are_not_true() {
        let keystone = serde_json::json!({"metadata": {"namespace": "keystone-0"},
            "status": {"conditions": [
                {"type": "Ready", "status": "False", "reason": "DatabaseNotReady", "message": "m"},
                {"type": "SecretsReady", "status": "True", "reason": "SecretsReady"}]}});
        assert_eq!(
            not_ready(&keystone),
            "keystone-0/ks (Ready=DatabaseNotReady)"
        );
    }
}
