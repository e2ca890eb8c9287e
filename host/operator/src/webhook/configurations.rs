//! The MutatingWebhookConfiguration and ValidatingWebhookConfiguration that send a plugin
//! directory's admitted writes to the host (`wasm-operator webhooks`), built from what each
//! plugin's `describe-admission` returned.
//!
//! One webhook per plugin, phase and failure policy: `default.{plugin}.wasm-operator.dev`
//! (mutating) and `validate.{plugin}.wasm-operator.dev` (validating); a kind admitted
//! under `Ignore` gets its own webhook, `default-ignore.…` / `validate-ignore.…`. Every
//! webhook: `sideEffects: None` (admission cannot write), `admissionReviewVersions: [v1]`,
//! `matchPolicy: Equivalent`, `timeoutSeconds` 10.

use serde_json::{Value, json};
use wasm_operator_types::Description;
use wasm_operator_types::admission::{FailurePolicy, Phase};
use wasm_operator_types::split_api_version;

/// The webhook timeout the configurations ask for, seconds.
pub const TIMEOUT_SECONDS: u32 = 10;

/// Where the API server reaches the host.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A Service in front of the host's `--webhook-addr` (port 443 unless given).
    Service {
        namespace: String,
        name: String,
        port: u16,
    },
    /// A base URL (`https://host:port`), for a host outside the cluster.
    Url(String),
}

impl Endpoint {
    fn client_config(&self, path: &str, ca_bundle: Option<&str>) -> Value {
        let mut config = match self {
            Endpoint::Service {
                namespace,
                name,
                port,
            } => {
                json!({"service": {"namespace": namespace, "name": name, "path": path, "port": port}})
            }
            Endpoint::Url(base) => json!({"url": format!("{}{path}", base.trim_end_matches('/'))}),
        };
        if let Some(ca) = ca_bundle {
            use base64::Engine as _;
            config["caBundle"] = json!(base64::engine::general_purpose::STANDARD.encode(ca));
        }
        config
    }
}

/// The two configurations, named `name`, for `plugins`; either is left out when no plugin
/// admits in its phase. `ca_bundle` is the PEM the API server verifies the host with.
pub fn configurations(
    plugins: &[&Description],
    endpoint: &Endpoint,
    ca_bundle: Option<&str>,
    name: &str,
) -> Vec<Value> {
    let mut out = Vec::new();
    for (phase, kind) in [
        (Phase::Default, "MutatingWebhookConfiguration"),
        (Phase::Validate, "ValidatingWebhookConfiguration"),
    ] {
        let webhooks: Vec<Value> = plugins
            .iter()
            .flat_map(|d| webhooks(d, phase, endpoint, ca_bundle))
            .collect();
        if !webhooks.is_empty() {
            out.push(json!({
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": kind,
                "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "wasm-operator"}},
                "webhooks": webhooks,
            }));
        }
    }
    out
}

fn webhooks(
    d: &Description,
    phase: Phase,
    endpoint: &Endpoint,
    ca_bundle: Option<&str>,
) -> Vec<Value> {
    let path = format!("/admission/{}/{}", d.name, phase.as_str());
    [FailurePolicy::Fail, FailurePolicy::Ignore]
        .into_iter()
        .filter_map(|policy| {
            let rules: Vec<Value> = d
                .admission
                .iter()
                .filter(|a| a.failure_policy == policy && !a.operations(phase).is_empty())
                .map(|a| {
                    let (group, version) = split_api_version(&a.kind.api_version);
                    let operations: Vec<&str> =
                        a.operations(phase).iter().map(|o| o.as_str()).collect();
                    json!({"apiGroups": [group], "apiVersions": [version],
                        "resources": [a.kind.plural], "operations": operations,
                        "scope": if a.kind.namespaced { "Namespaced" } else { "Cluster" }})
                })
                .collect();
            if rules.is_empty() {
                return None;
            }
            let prefix = match policy {
                FailurePolicy::Fail => phase.as_str().to_owned(),
                FailurePolicy::Ignore => format!("{}-ignore", phase.as_str()),
            };
            let mut webhook = json!({
                "name": format!("{prefix}.{}.wasm-operator.dev", d.name),
                "clientConfig": endpoint.client_config(&path, ca_bundle),
                "rules": rules,
                "failurePolicy": policy.as_str(),
                "matchPolicy": "Equivalent",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": TIMEOUT_SECONDS,
            });
            if phase == Phase::Default {
                webhook["reinvocationPolicy"] = json!("Never");
            }
            Some(webhook)
        })
        .collect()
}
