//! The GitLabSecrets reconciler end to end: the shipped gitlabsecrets.wasm, linked to the
//! shipped secretgen.wasm, run by the operator against the embedded API server, which
//! refuses any update, delete or server-side apply of a Secret.

mod definition;
mod passes;
mod safety;

use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator::operator::{OperatorConfig, RunningOperator};
use wasm_operator_apiserver::Fault;
use wasm_operator_e2e::{Cluster, cluster_with, gitlabsecrets_crd, setup, shipped_plugin_dir};
use wasm_operator_runtime::backend::ClusterBackend;
use wasm_operator_sdk::{ObjectRef, Patch, ReadFrom};

/// Long enough for RSA-4096 keys in a debug test binary on a busy machine.
pub const WAIT: Duration = Duration::from_secs(60);

/// A GitLabSecrets of namespace `ns` declaring `secrets`.
pub fn gitlabsecrets(name: &str, secrets: Value) -> Value {
    json!({"apiVersion": "apps.gitlab.com/v2alpha1", "kind": "GitLabSecrets",
        "metadata": {"name": name, "namespace": "ns", "labels": {"app": "gitlab", "operator.gitlab.com/release-name": "x"}},
        "spec": {"secrets": secrets}})
}

/// A declared Opaque Secret with one random alphanumeric key of `length`.
pub fn random(secret: &str, key: &str, length: u32) -> Value {
    json!({"name": secret, "type": "Opaque",
        "generators": [{"type": "random", "key": key, "charset": "alphanumeric", "length": length}]})
}

/// A GitLabSecrets of namespace `ns` declaring one ECDSA certificate set and no Secret.
pub fn certificate_set(name: &str) -> Value {
    let mut object = gitlabsecrets(name, json!([]));
    object["spec"]["certificates"] = json!([{
        "authority": {"commonName": "Test CA", "organization": "ns", "organizationalUnit": "app",
            "algorithm": "ecdsa", "keySize": 256},
        "domain": "example.com",
        "tlsSecret": "wildcard", "caSecret": "wildcard-ca", "caKey": "cfssl_ca",
        "chainSecret": "wildcard-chain", "chainKey": "chain.crt"}]);
    object
}

pub fn gitlabsecrets_ref(namespace: &str, name: &str) -> ObjectRef {
    ObjectRef {
        api_version: "apps.gitlab.com/v2alpha1".into(),
        kind: "GitLabSecrets".into(),
        namespace: Some(namespace.into()),
        name: name.into(),
    }
}

pub fn secret_ref(namespace: &str, name: &str) -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        namespace: Some(namespace.into()),
        name: name.into(),
    }
}

/// The embedded API server with the CRD installed and Secret rewrites refused, and the
/// operator running the shipped plugins.
pub struct Harness {
    pub cluster: Cluster,
    pub operator: Option<RunningOperator>,
    _plugins: tempfile::TempDir,
}

impl Harness {
    pub async fn start() -> Self {
        wasm_operator_e2e::init_logs();
        let cluster = cluster_with(&[]).await;
        let backend = &cluster.backend;
        backend
            .create(&setup(), gitlabsecrets_crd())
            .await
            .expect("the CRD is installed");
        backend
            .create(
                &setup(),
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gitlab"}}),
            )
            .await
            .expect("namespace gitlab");
        for verb in ["update", "delete", "apply", "deletecollection"] {
            cluster.server.inject(Fault::fail(
                verb,
                "secrets",
                405,
                "this test server refuses any update, delete or apply of a Secret",
            ));
        }
        let cache = wasm_operator_e2e::shared_cache();
        let plugins = shipped_plugin_dir();
        let mut config = OperatorConfig::new(plugins.path());
        config.controller.backoff.base = Duration::from_millis(50);
        config.controller.backoff.max = Duration::from_secs(2);
        let operator = cluster.start_operator(cache, config).await;
        assert!(
            operator.controller("gitlabsecrets").is_some(),
            "gitlabsecrets serves, linked to secretgen"
        );
        Self {
            cluster,
            operator: Some(operator),
            _plugins: plugins,
        }
    }

    pub async fn create(&self, object: Value) -> Value {
        self.cluster.create(object).await
    }

    pub async fn secret(&self, namespace: &str, name: &str) -> Option<Value> {
        self.cluster.get("v1", "Secret", namespace, name).await
    }

    pub async fn patch_secret(&self, name: &str, patch: Value) -> Value {
        self.cluster
            .backend
            .patch(
                &setup(),
                &secret_ref("ns", name),
                &Patch::Merge(patch),
                None,
            )
            .await
            .expect("patched")
    }

    pub async fn gitlabsecrets(&self, namespace: &str, name: &str) -> Option<Value> {
        self.cluster
            .backend
            .get(&gitlabsecrets_ref(namespace, name), ReadFrom::Server)
            .await
            .expect("get")
    }

    /// Waits until the Ready condition of the current generation has `reason`.
    pub async fn ready_with(&self, namespace: &str, name: &str, reason: &str) -> Value {
        let api_version = "apps.gitlab.com/v2alpha1";
        self.cluster
            .condition_reached(
                api_version,
                "GitLabSecrets",
                namespace,
                name,
                "Ready",
                reason,
                WAIT,
            )
            .await
    }

    /// The events of namespace `ns` with `reason`.
    pub async fn events(&self, reason: &str) -> Vec<Value> {
        self.cluster.events_with_reason("ns", reason).await
    }

    /// Asserts the server never saw an update, delete or apply of a Secret.
    pub fn assert_no_secret_rewrites(&self) {
        let counts = self.cluster.counts();
        for verb in ["update", "delete", "apply", "deletecollection"] {
            assert_eq!(counts.get(verb, "secrets"), 0, "a Secret was sent a {verb}");
        }
    }
}

/// The decoded value of `key` of a Secret.
pub fn secret_value(secret: &Value, key: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let encoded = secret
        .pointer(&format!("/data/{}", key.replace('/', "~1")))?
        .as_str()?;
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
}
