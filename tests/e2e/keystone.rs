//! The Keystone reconciler end to end (issue 19): the shipped keystone.wasm, run by the
//! operator against the embedded API server with the workload, mariadb-operator and
//! External Secrets actors, and its admission called by that server for kubectl.

use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator::operator::{OperatorConfig, RunningOperator};
use wasm_operator_apiserver::Actor;
use wasm_operator_e2e::webhooks::{kubectl, register_webhooks, webhook_config};
use wasm_operator_e2e::{Cluster, cluster_with_actors, counter_rises, eventually, passes, setup};
use wasm_operator_runtime::backend::ClusterBackend as _;
use wasm_operator_sdk::{ObjectRef, Patch};

/// Long enough for a cold start of the plugin and every step's actor on a busy machine.
const WAIT: Duration = Duration::from_secs(90);
const GROUP_VERSION: &str = "keystone.openstack.c5c3.io/v1alpha1";

fn keystone_crd() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crds/keystone.openstack.c5c3.io_keystones.yaml"
    ))
    .expect("the Keystone CRD");
    wasm_operator_e2e::yaml_objects(&text).remove(0)
}

fn secret(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "ns"},
        "type": "Opaque", "stringData": data})
}

/// A Keystone `ks` on the managed MariaDB `maria`, its credentials in `ks-db`/`ks-admin`.
fn keystone(extra: Value) -> Value {
    let mut spec = json!({
        "image": {"repository": "ghcr.io/c5c3/keystone", "tag": "2025.2"},
        "database": {"clusterRef": {"name": "maria"}, "database": "keystone",
                     "secretRef": {"name": "ks-db"}},
        "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.pymemcache"},
        "bootstrap": {"adminPasswordSecretRef": {"name": "ks-admin"}},
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    json!({"apiVersion": GROUP_VERSION, "kind": "Keystone",
        "metadata": {"name": "ks", "namespace": "ns"}, "spec": spec})
}

struct Harness {
    cluster: Cluster,
    operator: RunningOperator,
    plugins: tempfile::TempDir,
}

impl Harness {
    /// The API server with the actors, the CRD, a ready store, the MariaDB and the
    /// credentials; the operator running keystone.wasm with its webhooks.
    async fn start() -> Self {
        wasm_operator_e2e::init_logs();
        let actors = [Actor::Workloads, Actor::MariaDb, Actor::ExternalSecrets];
        let cluster = cluster_with_actors(&actors, &[keystone_crd()]).await;
        for object in [
            json!({"apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
                "metadata": {"name": "openbao-cluster-store"},
                "spec": {"provider": {"vault": {"server": "http://openbao:8200", "path": "kv"}}}}),
            json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
                "metadata": {"name": "maria", "namespace": "ns"}, "spec": {"replicas": 1}}),
            secret(
                "ks-db",
                json!({"username": "keystone", "password": "db-pw"}),
            ),
            secret("ks-admin", json!({"password": "admin-pw"})),
        ] {
            cluster.create(object).await;
        }
        let plugins = tempfile::tempdir().expect("plugins");
        std::fs::copy(
            wasm_operator::cli::shipped_plugin_dir().join("keystone.wasm"),
            plugins.path().join("keystone.wasm"),
        )
        .expect("keystone.wasm is copied");
        // The store gate reads the ClusterSecretStore; admission reads PriorityClasses.
        std::fs::write(
            plugins.path().join("plugins.toml"),
            "[plugins.keystone]\ncluster_scoped = true\n",
        )
        .expect("plugins.toml");
        let mut config = OperatorConfig::new(plugins.path());
        config.watch_interval = Some(Duration::from_millis(100));
        config.controller.backoff.base = Duration::from_millis(50);
        config.controller.backoff.max = Duration::from_secs(2);
        config.webhook = Some(webhook_config());
        let operator = cluster
            .start_operator(wasm_operator_e2e::shared_cache(), config)
            .await;
        assert!(operator.controller("keystone").is_some(), "keystone serves");
        Self {
            cluster,
            operator,
            plugins,
        }
    }

    async fn keystone(&self) -> Option<Value> {
        self.cluster
            .get(GROUP_VERSION, "Keystone", "ns", "ks")
            .await
    }

    /// Waits until condition `type_` of the current generation has `reason`.
    async fn condition(&self, type_: &str, reason: &str) -> Value {
        eventually(&format!("{type_} {reason}"), WAIT, || async {
            let object = self.keystone().await?;
            let generation = object.pointer("/metadata/generation").cloned();
            let condition = object
                .pointer("/status/conditions")?
                .as_array()?
                .iter()
                .find(|c| c["type"] == type_)?
                .clone();
            (condition["reason"] == reason
                && condition.get("observedGeneration").cloned() == generation)
                .then_some(object)
        })
        .await
    }

    /// API requests the operator made for its plugin that write, by `verb kind code`.
    fn plugin_writes(&self) -> std::collections::BTreeMap<String, u64> {
        let rendered = self.operator.metrics().render();
        rendered
            .lines()
            .filter_map(|line| line.strip_prefix("wasm_operator_api_requests_total{"))
            .filter(|rest| !rest.starts_with("verb=\"get\"") && !rest.starts_with("verb=\"list\""))
            .filter_map(|rest| {
                let (labels, count) = rest.rsplit_once(' ')?;
                Some((labels.to_owned(), count.parse().ok()?))
            })
            .collect()
    }

    async fn config_volume(&self) -> Option<String> {
        let deployment = self
            .cluster
            .get("apps/v1", "Deployment", "ns", "ks")
            .await?;
        deployment
            .pointer("/spec/template/spec/volumes")?
            .as_array()?
            .iter()
            .find(|v| v["name"] == "config")?
            .pointer("/configMap/name")?
            .as_str()
            .map(str::to_owned)
    }
}

fn keystone_ref() -> ObjectRef {
    ObjectRef {
        api_version: GROUP_VERSION.into(),
        kind: "Keystone".into(),
        namespace: Some("ns".into()),
        name: "ks".into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keystone_converges_through_its_deployment_and_a_converged_pass_writes_nothing() {
    let h = Harness::start().await;
    h.cluster.create(keystone(json!({}))).await;
    h.condition("DeploymentReady", "DeploymentReady").await;
    // The projection check of step 4 sees the rollout done on the pass after.
    let converged = match tokio::time::timeout(
        WAIT,
        h.condition("IdentityBackendsReady", "IdentityBackendsNotRequired"),
    )
    .await
    {
        Ok(object) => object,
        Err(_) => panic!("{:#}", h.keystone().await.expect("ks")["status"]),
    };
    let reasons: std::collections::BTreeMap<String, String> = converged["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["type"].as_str().unwrap_or_default().to_owned(),
                c["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for (condition, reason) in [
        ("SecretsReady", "SecretsAvailable"),
        ("DatabaseTLSReady", "NotRequired"),
        ("IdentityBackendsReady", "IdentityBackendsNotRequired"),
        ("FernetKeysReady", "FernetKeysAvailable"),
        ("CredentialKeysReady", "CredentialKeysAvailable"),
        ("NetworkPolicyReady", "NetworkPolicyNotRequired"),
        ("DatabaseReady", "DatabaseSynced"),
        ("PolicyValidReady", "PolicyValidationNotRequired"),
        ("DeploymentReady", "DeploymentReady"),
    ] {
        assert_eq!(
            reasons.get(condition).map(String::as_str),
            Some(reason),
            "{condition}"
        );
    }
    assert_eq!(
        converged["status"]["endpoint"],
        "http://ks.ns.svc.cluster.local:5000/v3"
    );
    assert_eq!(converged["status"]["installedRelease"], "2025.2");
    // The jobs ran, the children exist.
    for (api_version, kind, name) in [
        ("batch/v1", "Job", "ks-db-sync"),
        ("batch/v1", "Job", "ks-schema-check"),
        ("batch/v1", "CronJob", "ks-fernet-rotate"),
        ("batch/v1", "CronJob", "ks-credential-rotate"),
        ("v1", "Service", "ks"),
        ("policy/v1", "PodDisruptionBudget", "ks"),
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
            &keystone_ref(),
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
