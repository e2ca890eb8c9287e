//! The demo's Keystone: `openstack/keystone`, its database and admin credentials synced by
//! External Secrets from the cluster's secret backend, on the MariaDB `maria`; shown
//! condition by condition on its way to Ready, then the objects it made.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

use super::{create, resource, shape, yaml};

/// The Keystone CRD, as committed in `crds/`.
pub const KEYSTONE_CRD: &str =
    include_str!("../../../../../crds/keystone.openstack.c5c3.io_keystones.yaml");

/// The KeystoneIdentityBackend CRD, as committed in `crds/`.
pub const IDENTITY_BACKEND_CRD: &str =
    include_str!("../../../../../crds/keystone.openstack.c5c3.io_keystoneidentitybackends.yaml");

/// The CRDs of the other parents and satellites: their plugins serve in the demo, with no
/// object.
const SERVICE_CRDS: [&str; 7] = [
    include_str!("../../../../../crds/glance.openstack.c5c3.io_glances.yaml"),
    include_str!("../../../../../crds/glance.openstack.c5c3.io_glancebackends.yaml"),
    include_str!("../../../../../crds/barbican.openstack.c5c3.io_barbicans.yaml"),
    include_str!("../../../../../crds/barbican.openstack.c5c3.io_barbicansecretstores.yaml"),
    include_str!("../../../../../crds/cinder.openstack.c5c3.io_cinders.yaml"),
    include_str!("../../../../../crds/cinder.openstack.c5c3.io_cinderbackends.yaml"),
    include_str!("../../../../../crds/cinder.openstack.c5c3.io_cinderbackupbackends.yaml"),
];

/// The namespace and name of the demo's Keystone.
pub(crate) const NAMESPACE: &str = "openstack";
pub(crate) const NAME: &str = "keystone";

/// How long the demo waits for the Keystone to be Ready.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// The conditions in the order the pipeline sets them (facts §1.7, §2.2).
const PIPELINE: [&str; 15] = [
    "SecretsReady",
    "DatabaseTLSReady",
    "IdentityBackendsReady",
    "FernetKeysReady",
    "CredentialKeysReady",
    "NetworkPolicyReady",
    "DatabaseReady",
    "PolicyValidReady",
    "DeploymentReady",
    "HTTPRouteReady",
    "KeystoneAPIReady",
    "HPAReady",
    "BootstrapReady",
    "TrustFlushReady",
    "PasswordRotationReady",
];

/// The credentials in the secret backend: remote key → properties.
fn backend_entries() -> [(&'static str, &'static [(&'static str, &'static str)]); 2] {
    [
        (
            "openstack/keystone/db",
            &[("username", "keystone"), ("password", "demo-db-password")],
        ),
        (
            "bootstrap/openstack/keystone/admin",
            &[("password", "demo-admin-password")],
        ),
    ]
}

fn external_secret(name: &str, remote_key: &str, keys: &[&str]) -> Value {
    let data: Vec<Value> = keys
        .iter()
        .map(|k| json!({"secretKey": k, "remoteRef": {"key": remote_key, "property": k}}))
        .collect();
    json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"refreshInterval": "1h",
                 "secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao-cluster-store"},
                 "target": {"name": name}, "data": data}})
}

/// What the Keystone reads, in creation order: its namespace, the store, the MariaDB, and
/// the ExternalSecrets of its credentials.
fn prerequisites() -> Vec<(ApiResource, Value)> {
    vec![
        (
            resource("v1", "Namespace", "namespaces"),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
        ),
        (
            resource(
                "external-secrets.io/v1",
                "ClusterSecretStore",
                "clustersecretstores",
            ),
            json!({"apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
                "metadata": {"name": "openbao-cluster-store"},
                "spec": {"provider": {"vault": {"server": "http://openbao.openbao.svc:8200",
                                                "path": "kv"}}}}),
        ),
        (
            resource("k8s.mariadb.com/v1alpha1", "MariaDB", "mariadbs"),
            json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
                "metadata": {"name": "maria", "namespace": NAMESPACE}, "spec": {"replicas": 1}}),
        ),
        (
            resource(
                "external-secrets.io/v1",
                "ExternalSecret",
                "externalsecrets",
            ),
            external_secret(
                "keystone-db",
                "openstack/keystone/db",
                &["username", "password"],
            ),
        ),
        (
            resource(
                "external-secrets.io/v1",
                "ExternalSecret",
                "externalsecrets",
            ),
            external_secret(
                "keystone-admin",
                "bootstrap/openstack/keystone/admin",
                &["password"],
            ),
        ),
    ]
}

/// The demo's Keystone.
fn keystone() -> Value {
    json!({"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
    "metadata": {"name": NAME, "namespace": NAMESPACE},
    "spec": {
        "image": {"repository": "ghcr.io/c5c3/keystone", "tag": "2025.2"},
        "database": {"clusterRef": {"name": "maria"}, "database": "keystone",
                     "secretRef": {"name": "keystone-db"}},
        "cache": {"clusterRef": {"name": "memcached"},
                  "backend": "dogpile.cache.pymemcache"},
        "bootstrap": {"adminPasswordSecretRef": {"name": "keystone-admin"}},
        "trustFlush": {"schedule": "0 * * * *"},
    }})
}

fn keystones() -> ApiResource {
    resource(
        "keystone.openstack.c5c3.io/v1alpha1",
        "Keystone",
        "keystones",
    )
}

/// Installs the Keystone and KeystoneIdentityBackend CRDs and those of the other parents
/// and satellites (before the operator starts, so their plugins find their kinds).
pub(crate) async fn install_crds(client: &kube::Client) -> anyhow::Result<()> {
    let crd = resource(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    );
    for text in [KEYSTONE_CRD, IDENTITY_BACKEND_CRD]
        .into_iter()
        .chain(SERVICE_CRDS)
    {
        create(client, yaml(text)?, &crd).await?;
    }
    Ok(())
}

/// Seeds the backend, creates what the Keystone reads and the Keystone itself.
pub(crate) async fn apply(
    server: &wasm_operator_apiserver::ApiServer,
    client: &kube::Client,
) -> anyhow::Result<()> {
    for (key, properties) in backend_entries() {
        let entry = properties
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
            .collect();
        server
            .secret_backend_put(key, entry)
            .context("seeding the secret backend")?;
    }
    for (resource, object) in prerequisites() {
        create(client, object, &resource).await?;
    }
    create(client, keystone(), &keystones()).await?;
    println!(
        "  applied     Keystone {NAMESPACE}/{NAME}: database and admin credentials from the secret backend"
    );
    Ok(())
}

/// Conditions of `object` that are True for its current generation.
pub(crate) fn true_conditions(object: &Value) -> BTreeSet<String> {
    let generation = object.pointer("/metadata/generation").cloned();
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c["status"] == "True" && c.get("observedGeneration").cloned() == generation)
        .filter_map(|c| Some(format!("{}/{}", c["type"].as_str()?, c["reason"].as_str()?)))
        .collect()
}

/// Polls the Keystone until Ready, printing each condition as it turns True.
pub(crate) async fn wait_ready(client: &kube::Client, started: Instant) -> anyhow::Result<Value> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), NAMESPACE, &keystones());
    let mut shown: BTreeSet<String> = BTreeSet::new();
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let object = serde_json::to_value(
            api.get(NAME)
                .await
                .with_context(|| format!("reading Keystone {NAMESPACE}/{NAME}"))?,
        )?;
        let now_true = true_conditions(&object);
        let mut fresh: Vec<&String> = now_true.difference(&shown).collect();
        fresh.sort_by_key(|c| {
            let type_ = c.split('/').next().unwrap_or_default();
            PIPELINE
                .iter()
                .position(|p| *p == type_)
                .unwrap_or(PIPELINE.len())
        });
        for condition in fresh {
            let (type_, reason) = condition.split_once('/').unwrap_or((condition, ""));
            println!(
                "  [{:>5.1} s]  {type_:<22} {reason}",
                started.elapsed().as_secs_f64()
            );
        }
        shown = now_true;
        if shown.iter().any(|c| c.starts_with("Ready/")) {
            return Ok(object);
        }
        if Instant::now() > deadline {
            let waiting: Vec<&str> = PIPELINE
                .iter()
                .copied()
                .filter(|p| !shown.iter().any(|c| c.starts_with(&format!("{p}/"))))
                .collect();
            anyhow::bail!(
                "Keystone {NAMESPACE}/{NAME} was not Ready after {READY_TIMEOUT:?}; waiting on {}",
                waiting.join(", ")
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The kinds the Keystone makes, as the summary lists them.
fn child_kinds() -> Vec<ApiResource> {
    vec![
        resource("apps/v1", "Deployment", "deployments"),
        resource("v1", "Service", "services"),
        resource("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets"),
        resource("v1", "ConfigMap", "configmaps"),
        resource("v1", "Secret", "secrets"),
        resource("batch/v1", "Job", "jobs"),
        resource("batch/v1", "CronJob", "cronjobs"),
        resource("v1", "ServiceAccount", "serviceaccounts"),
        resource("external-secrets.io/v1alpha1", "PushSecret", "pushsecrets"),
        resource("k8s.mariadb.com/v1alpha1", "Database", "databases"),
        resource("k8s.mariadb.com/v1alpha1", "User", "users"),
        resource("k8s.mariadb.com/v1alpha1", "Grant", "grants"),
    ]
}

/// One line about a child: what a user would look at first.
fn describe(kind: &str, object: &Value) -> String {
    match kind {
        "Deployment" => format!(
            "{}/{} replicas ready",
            object["status"]["readyReplicas"].as_i64().unwrap_or(0),
            object["spec"]["replicas"].as_i64().unwrap_or(0)
        ),
        "Job" => {
            let ended = |type_: &str| {
                object["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == type_ && c["status"] == "True")
            };
            let state = ["Complete", "Failed"].into_iter().find(|t| ended(t));
            state.unwrap_or("running").to_owned()
        }
        "CronJob" => format!(
            "schedule {}",
            object["spec"]["schedule"].as_str().unwrap_or("?")
        ),
        "ConfigMap" => object["data"]
            .as_object()
            .map(|d| d.keys().map(String::as_str).collect::<Vec<_>>().join(", "))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// Prints each child the Keystone controls, Secrets with their keys' shapes (never the
/// values), then its Ready condition and endpoint.
pub(crate) async fn print(client: &kube::Client, object: &Value) -> anyhow::Result<()> {
    let uid = object["metadata"]["uid"].as_str().unwrap_or_default();
    println!("\nObjects of Keystone {NAMESPACE}/{NAME} (shapes only, never values)");
    for kind in child_kinds() {
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), NAMESPACE, &kind);
        let list = api
            .list(&ListParams::default())
            .await
            .with_context(|| format!("listing {}s", kind.kind))?;
        for child in list.items {
            let owned = child
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.uid == uid && o.controller == Some(true));
            if !owned {
                continue;
            }
            let name = child.metadata.name.clone().unwrap_or_default();
            let value = serde_json::to_value(&child)?;
            println!(
                "  {:<20} {name:<44} {}",
                kind.kind,
                describe(&kind.kind, &value)
            );
            if kind.kind == "Secret" {
                for (key, data) in value["data"].as_object().into_iter().flatten() {
                    let bytes = data
                        .as_str()
                        .and_then(|b| {
                            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b)
                                .ok()
                        })
                        .unwrap_or_default();
                    println!("      {key:<32} {}", shape::describe(&bytes));
                }
            }
        }
    }
    let ready = super::summary::ready_condition(object);
    if let Some(ready) = ready {
        println!(
            "\nReady: {} ({}): {}",
            ready["status"].as_str().unwrap_or_default(),
            ready["reason"].as_str().unwrap_or_default(),
            ready["message"].as_str().unwrap_or_default()
        );
    }
    println!(
        "Endpoint: {}   Release: {}",
        object["status"]["endpoint"].as_str().unwrap_or_default(),
        object["status"]["installedRelease"]
            .as_str()
            .unwrap_or_default()
    );
    Ok(())
}
