//! The cluster every scenario runs against: the embedded API server with the GitLabSecrets
//! CRD, and the GitLabSecrets the scenarios create (the chart's defaults, whole or cut down).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use futures::{StreamExt as _, TryStreamExt as _};
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use serde_json::{Value, json};
use tokio::time::Instant;
use wasm_operator_apiserver::{ApiServer, ServerConfig};

use wasm_operator::cli::demo::{CHART_DEFAULTS, GITLABSECRETS_CRD};
use wasm_operator::cluster::kube::KubeCluster;
use wasm_operator::informer::api_resource;
use wasm_operator_sdk::KindRef;

/// Which part of the chart's defaults a GitLabSecrets declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Everything the chart renders: 13 Secrets and the certificate set (three RSA-4096
    /// keys: the registry's x509 key, the CA's and the wildcard certificate's).
    Full,
    /// Without the RSA-4096 parts (the registry x509 Secret and the certificate set): 12
    /// Secrets, of which the rails secrets hold an RSA-2048 key and the SSH host keys an
    /// RSA-3072 one.
    NoRsa4096,
    /// Only the Secrets generated without a key pair (random, bytes, static): 10 Secrets,
    /// so a pass costs the same every time (no prime search).
    NoKeys,
}

impl Variant {
    /// How the report names it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Full => "chart defaults",
            Self::NoRsa4096 => "chart defaults without RSA-4096",
            Self::NoKeys => "chart defaults without key pairs",
        }
    }

    /// The GitLabSecrets `demo` in `namespace` with this part of the chart's defaults.
    pub fn object(self, namespace: &str) -> anyhow::Result<Value> {
        let mut object: Value =
            serde_yaml_ng::from_str(CHART_DEFAULTS).context("the embedded chart defaults")?;
        object["metadata"]["namespace"] = json!(namespace);
        if self == Self::Full {
            return Ok(object);
        }
        if let Some(spec) = object["spec"].as_object_mut() {
            spec.remove("certificates");
        }
        let keep = |secret: &Value| {
            let generators = secret["generators"].as_array().cloned().unwrap_or_default();
            generators.iter().all(|g| match (self, g["type"].as_str()) {
                (_, Some("random" | "bytes" | "static")) => true,
                (Self::NoRsa4096, Some("x509")) => g["bits"].as_u64().unwrap_or(2048) < 4096,
                (Self::NoRsa4096, Some(_)) => true,
                _ => false,
            })
        };
        if let Some(secrets) = object["spec"]["secrets"].as_array_mut() {
            secrets.retain(keep);
        }
        Ok(object)
    }

    /// How many Secrets it declares.
    pub fn secrets(self) -> anyhow::Result<usize> {
        let object = self.object("count")?;
        let declared = object["spec"]["secrets"].as_array().map_or(0, Vec::len);
        let certificates = object["spec"]["certificates"]
            .as_array()
            .map_or(0, Vec::len);
        Ok(declared + 3 * certificates)
    }
}

/// The primary kind of the shipped reconciler.
pub fn gitlabsecrets_kind() -> KindRef {
    use wasm_operator_sdk::Reconciler as _;
    gitlabsecrets::GitLabSecretsReconciler::describe().primary
}

/// The resource of the kinds the benchmarks create.
pub(crate) fn resource_of(object: &Value) -> anyhow::Result<ApiResource> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let (plural, namespaced) = match kind {
        "Namespace" => ("namespaces", false),
        "CustomResourceDefinition" => ("customresourcedefinitions", false),
        "ConfigMap" => ("configmaps", true),
        "GitLabSecrets" => ("gitlabsecrets", true),
        other => anyhow::bail!("the benchmarks do not create {other} objects"),
    };
    Ok(api_resource(&KindRef {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        plural: plural.to_owned(),
        namespaced,
    }))
}

/// Whether an object (a GitLabSecrets, a Keystone) reports Ready for its current generation.
pub fn is_ready(object: &Value) -> bool {
    let generation = object.pointer("/metadata/generation");
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c["type"] == "Ready"
                    && c["status"] == "True"
                    && c.get("observedGeneration") == generation
            })
        })
}

/// The embedded API server with the GitLabSecrets CRD installed.
pub struct BenchCluster {
    pub server: ApiServer,
    pub client: kube::Client,
}

impl BenchCluster {
    /// Starts the server and installs the CRD.
    pub async fn start() -> anyhow::Result<Self> {
        let server = ApiServer::start(ServerConfig::default()).await?;
        let client = server.client()?;
        let cluster = Self { server, client };
        let crd: Value = serde_yaml_ng::from_str(GITLABSECRETS_CRD).context("the CRD")?;
        cluster.create(crd).await?;
        Ok(cluster)
    }

    /// A backend over the server (no rate limit, no metrics).
    pub fn backend(&self) -> Arc<KubeCluster> {
        Arc::new(KubeCluster::new(self.client.clone()))
    }

    /// Creates one object.
    pub async fn create(&self, object: Value) -> anyhow::Result<()> {
        let resource = resource_of(&object)?;
        wasm_operator::cli::demo::create(&self.client, object, &resource).await
    }

    /// Creates `objects`, 16 requests at a time.
    pub async fn create_all(&self, objects: Vec<Value>) -> anyhow::Result<()> {
        futures::stream::iter(objects.into_iter().map(|o| self.create(o)))
            .buffer_unordered(16)
            .try_collect::<()>()
            .await
    }

    /// Creates the namespaces `names`.
    pub async fn namespaces(&self, names: &[String]) -> anyhow::Result<()> {
        let objects = names
            .iter()
            .map(|n| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}))
            .collect();
        self.create_all(objects).await
    }

    /// Creates one GitLabSecrets of `variant` in each of `namespaces` (which must exist).
    pub async fn gitlabsecrets(
        &self,
        variant: Variant,
        namespaces: &[String],
    ) -> anyhow::Result<()> {
        let objects = namespaces
            .iter()
            .map(|ns| variant.object(ns))
            .collect::<anyhow::Result<Vec<_>>>()?;
        self.create_all(objects).await
    }

    /// Every GitLabSecrets, across namespaces.
    pub async fn list_gitlabsecrets(&self) -> anyhow::Result<Vec<Value>> {
        let api: Api<DynamicObject> =
            Api::all_with(self.client.clone(), &api_resource(&gitlabsecrets_kind()));
        let list = api
            .list(&ListParams::default())
            .await
            .context("listing GitLabSecrets")?;
        list.items
            .into_iter()
            .map(|o| serde_json::to_value(o).context("a GitLabSecrets"))
            .collect()
    }

    /// Waits until `expected` GitLabSecrets are Ready, polling every 100 ms; the time it
    /// took, measured from `since`.
    pub async fn wait_ready(
        &self,
        expected: usize,
        since: Instant,
        timeout: Duration,
    ) -> anyhow::Result<Duration> {
        loop {
            let objects = self.list_gitlabsecrets().await?;
            let ready = objects.iter().filter(|o| is_ready(o)).count();
            if ready >= expected {
                return Ok(since.elapsed());
            }
            if since.elapsed() > timeout {
                anyhow::bail!("{ready} of {expected} GitLabSecrets were Ready after {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// `count` namespace names starting with `prefix`.
pub fn namespace_names(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{prefix}-{i}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variants_cut_the_chart_defaults_down_to_what_they_name() {
        assert_eq!(Variant::Full.secrets().ok(), Some(16));
        assert_eq!(Variant::NoRsa4096.secrets().ok(), Some(12));
        assert_eq!(Variant::NoKeys.secrets().ok(), Some(10));
        let light = Variant::NoRsa4096.object("a").expect("an object");
        assert_eq!(light["metadata"]["namespace"], "a");
        assert!(light["spec"].get("certificates").is_none());
        let names: Vec<&str> = light["spec"]["secrets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["name"].as_str())
            .collect();
        assert!(!names.contains(&"demo-registry-secret"), "{names:?}");
        assert!(names.contains(&"demo-rails-secret"), "{names:?}");
        assert!(names.contains(&"demo-gitlab-shell-host-keys"), "{names:?}");
    }
}
