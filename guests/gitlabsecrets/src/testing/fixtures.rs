//! The tests' cluster and object builders.

use std::cell::Cell;

use serde_json::{Value, json};
use wasm_operator_sdk::planner::{
    CertificatesPlan, CertificatesRequest, PlanError, Planner, SecretPlan, SecretRequest,
};
use wasm_operator_sdk::testing::{FakeCluster, Op, Refusal};
use wasm_operator_sdk::{Outcome, ReconcileError, Request};

use crate::SecretgenPlanner;
use crate::types::{GitLabSecretsStatus, KIND};

/// The namespace of every test object.
pub const NS: &str = "gitlab";

/// An empty in-memory API server as a pass sees it: GitLabSecrets carry a generation, the
/// field index is [`describe::index`](crate::describe::index), and it panics, failing the
/// test, at what the reconciler must never do: any server-side apply or delete, a status
/// update of a Secret, an owner reference on anything it writes, or a patch other than a
/// JSON merge patch.
pub fn fake_cluster() -> FakeCluster {
    FakeCluster::new()
        .tracking_generation(KIND)
        .with_indexer(crate::describe::index)
        .refusing(Refusal::op(Op::Apply))
        .refusing(Refusal::op(Op::Delete))
        .refusing(Refusal::op_on(Op::UpdateStatus, "Secret"))
        .refusing(Refusal::owner_reference())
        .refusing(Refusal::json_patch())
}

/// A GitLabSecrets named `name` with the chart's labels and no Secrets yet.
pub fn gls(name: &str) -> Value {
    json!({
        "apiVersion": "apps.gitlab.com/v2alpha1",
        "kind": "GitLabSecrets",
        "metadata": {"name": name, "namespace": NS, "labels": {
            "app": "gitlab", "release": name,
            "operator.gitlab.com/release-name": name}},
        "spec": {"secrets": [], "certificates": []},
    })
}

/// Adds a spec.secrets entry to a GitLabSecrets.
pub fn with_secret(mut gls: Value, name: &str, generators: Value) -> Value {
    gls["spec"]["secrets"]
        .as_array_mut()
        .expect("secrets")
        .push(json!({"name": name, "type": "Opaque", "generators": generators}));
    gls
}

/// A random alphanumeric value of 16 under `key`.
pub fn random(key: &str) -> Value {
    json!({"type": "random", "key": key, "charset": "alphanumeric", "length": 16})
}

/// A static value under `key`.
pub fn static_value(key: &str, value: &str) -> Value {
    json!({"type": "static", "key": key, "value": value})
}

/// Adds an ECDSA P-256 certificate set `<prefix>-ca`, `<prefix>-tls`, `<prefix>-chain`.
pub fn with_certificate(mut gls: Value, prefix: &str) -> Value {
    gls["spec"]["certificates"]
        .as_array_mut()
        .expect("certificates")
        .push(json!({
            "authority": {"commonName": "GitLab Helm Chart", "organization": NS,
                "organizationalUnit": "demo", "algorithm": "ecdsa", "keySize": 256},
            "domain": "example.com",
            "caSecret": format!("{prefix}-ca"), "caKey": "cfssl_ca",
            "tlsSecret": format!("{prefix}-tls"),
            "chainSecret": format!("{prefix}-chain"), "chainKey": "chain.crt",
        }));
    gls
}

/// A Secret named `name` holding `data` (plain values).
pub fn secret(name: &str, secret_type: &str, data: &[(&str, &str)]) -> Value {
    let data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(k, v)| {
            let bytes = k8s_openapi::ByteString(v.as_bytes().to_vec());
            (
                (*k).to_owned(),
                serde_json::to_value(bytes).expect("encodes"),
            )
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Secret", "type": secret_type,
        "metadata": {"name": name, "namespace": NS}, "data": data})
}

/// Runs one pass for the GitLabSecrets named `name` with the secretgen planner.
pub fn pass(cluster: &FakeCluster, name: &str) -> Result<Outcome, ReconcileError> {
    pass_with(cluster, &SecretgenPlanner, name)
}

/// One pass over the GitLabSecrets named `name`, planned by `planner`.
pub fn pass_with(
    cluster: &FakeCluster,
    planner: &impl Planner,
    name: &str,
) -> Result<Outcome, ReconcileError> {
    let request = Request {
        namespace: Some(NS.into()),
        name: name.into(),
    };
    crate::reconcile(cluster, planner, &request)
}

/// Plans with secretgen and counts the private keys it generates.
#[derive(Debug, Default)]
pub struct KeyCountingPlanner {
    generated: Cell<usize>,
}

impl KeyCountingPlanner {
    /// Private keys generated so far.
    pub fn keys_generated(&self) -> usize {
        self.generated.get()
    }
}

impl secretgen::KeySource for KeyCountingPlanner {
    fn generate_key(
        &self,
        algorithm: secretgen::KeyAlgorithm,
    ) -> Result<Vec<u8>, secretgen::SourceError> {
        self.generated.set(self.generated.get() + 1);
        secretgen::NativeKeys.generate_key(algorithm)
    }
}

impl Planner for KeyCountingPlanner {
    fn plan(&self, request: &SecretRequest) -> Result<SecretPlan, PlanError> {
        secretgen::plan(request, self).map_err(crate::native_planner::plan_error)
    }

    fn plan_certificates(
        &self,
        request: &CertificatesRequest,
    ) -> Result<CertificatesPlan, PlanError> {
        secretgen::plan_certificates(request, self).map_err(crate::native_planner::plan_error)
    }
}

/// The status the server holds for the GitLabSecrets named `name`.
pub fn status(cluster: &FakeCluster, name: &str) -> GitLabSecretsStatus {
    let object = cluster
        .server("GitLabSecrets", name)
        .expect("the GitLabSecrets");
    serde_json::from_value(object.get("status").cloned().unwrap_or(json!({})))
        .expect("the status decodes")
}

/// The Ready condition's (status, reason, message).
pub fn ready(cluster: &FakeCluster, name: &str) -> (String, String, String) {
    let status = status(cluster, name);
    let c = status
        .conditions
        .iter()
        .find(|c| c.condition_type == "Ready")
        .expect("a Ready condition");
    (
        format!("{:?}", c.status),
        c.reason.clone(),
        c.message.clone(),
    )
}
