//! A test-only reconciler: each pass makes the HTTP request its primary ConfigMap names,
//! through `wasm_operator_sdk::http`, and records the outcome.
//!
//! It declares egress to `*.svc.cluster.local:5000` (HTTP) and `*.svc.cluster.local:5443`
//! (HTTPS) only. The primary's data: `url` (required; a primary without one, or an owned
//! ConfigMap, is left alone), `method` (`GET` or `POST`, default `GET`), `body` (sent as
//! JSON text with `POST`), `timeout_ms`, and `ca_secret` + `ca_key` (a Secret in the
//! primary's namespace whose key holds the CA to trust). The pass writes ConfigMap
//! `<name>-result` (owned by the primary) with `outcome`: `status <code>: <body>` or the
//! error's text — which is what the tests read.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use serde_json::json;
use wasm_operator_sdk::http::{self, Request};
use wasm_operator_sdk::{
    Cluster, ClusterExt, Description, KindRef, ObjectRef, Outcome, Owner, Permission,
    ReconcileError, Reconciler, Request as PassRequest, Verb,
};

/// The egress test reconciler.
pub struct Egress;

impl Reconciler for Egress {
    fn describe() -> Description {
        let config_map = KindRef::of::<ConfigMap>();
        Description {
            name: "egress".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            field_manager: "egress".into(),
            primary: config_map.clone(),
            primary_predicates: vec![],
            watches: vec![],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![],
            egress: vec![
                "*.svc.cluster.local:5000".into(),
                "*.svc.cluster.local:5443".into(),
            ],
            indexes: vec![],
            permissions: vec![
                Permission {
                    kind: config_map,
                    verbs: vec![
                        Verb::Get,
                        Verb::List,
                        Verb::Watch,
                        Verb::Create,
                        Verb::Patch,
                    ],
                },
                Permission {
                    kind: KindRef::of::<Secret>(),
                    verbs: vec![Verb::Get, Verb::List, Verb::Watch],
                },
            ],
            targets: Default::default(),
            primary_selector: None,
        }
    }

    fn reconcile(cluster: &dyn Cluster, request: &PassRequest) -> Result<Outcome, ReconcileError> {
        let namespace = request.namespace.as_deref().unwrap_or_default();
        let Some(primary) = cluster.get_typed::<ConfigMap>(Some(namespace), &request.name)? else {
            return Ok(Outcome::done());
        };
        let data = primary.data.clone().unwrap_or_default();
        let owned = primary.metadata.owner_references.is_some();
        let Some(url) = data.get("url").filter(|_| !owned) else {
            return Ok(Outcome::done());
        };
        let outcome = exchange(namespace, url, &data);
        let owner = Owner::of(&primary)?;
        cluster.apply_typed::<ConfigMap>(
            Some(namespace),
            &format!("{}-result", request.name),
            json!({"data": {"outcome": outcome}}),
            Some(&owner),
        )?;
        Ok(Outcome::done())
    }
}

/// Makes the request `data` describes; the outcome as text.
fn exchange(
    namespace: &str,
    url: &str,
    data: &std::collections::BTreeMap<String, String>,
) -> String {
    if let (Some(secret), Some(key)) = (data.get("ca_secret"), data.get("ca_key")) {
        let secret = ObjectRef::of::<Secret>(Some(namespace), secret);
        if let Err(e) = http::trust_ca(&secret, key) {
            return format!("trust-ca: {e}");
        }
    }
    let mut request = match data.get("method").map(String::as_str) {
        Some("POST") => Request::post(url)
            .header("content-type", "application/json")
            .body(data.get("body").cloned().unwrap_or_default()),
        _ => Request::get(url),
    };
    if let Some(ms) = data.get("timeout_ms").and_then(|ms| ms.parse().ok()) {
        request = request.timeout(Duration::from_millis(ms));
    }
    match request.send() {
        Ok(response) => format!("status {}: {}", response.status, response.text()),
        Err(e) => e.to_string(),
    }
}

wasm_operator_sdk::export_reconciler!(Egress);
