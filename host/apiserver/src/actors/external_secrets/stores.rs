//! SecretStores and ClusterSecretStores: `Ready` unless the not-ready toggle is set.

use std::collections::BTreeMap;

use kube::Client;
use serde_json::{Value, json};

use super::{CLUSTER_SECRET_STORE, MANAGER, SECRET_STORE};
use crate::actors::Actor;
use crate::actors::kit::{self, Condition};

/// ESO's store condition reasons and message.
const REASON_VALID: &str = "Valid";
const REASON_VALIDATION_FAILED: &str = "ValidationFailed";
const MESSAGE_VALIDATED: &str = "store validated";

/// Every store of the cluster and whether it is ready (this pass's verdict).
#[derive(Default)]
pub(crate) struct Stores {
    /// (kind, namespace or "" for a ClusterSecretStore, name) → ready.
    ready: BTreeMap<(String, String, String), bool>,
}

impl Stores {
    /// Resolves a store reference of an object in `namespace` (`kind` defaults to
    /// SecretStore); the error is the message ESO sets on the referring object.
    pub(crate) fn check(
        &self,
        kind: Option<&str>,
        name: &str,
        namespace: &str,
    ) -> Result<(), String> {
        let kind = kind.unwrap_or("SecretStore");
        let scope = if kind == "ClusterSecretStore" {
            ""
        } else {
            namespace
        };
        match self
            .ready
            .get(&(kind.to_owned(), scope.to_owned(), name.to_owned()))
        {
            None => {
                let plural = if kind == "ClusterSecretStore" {
                    "clustersecretstores"
                } else {
                    "secretstores"
                };
                Err(format!(
                    "could not get {kind} {name:?}, {plural}.external-secrets.io {name:?} not found"
                ))
            }
            Some(false) => Err(format!("the desired {kind} {name} is not ready")),
            Some(true) => Ok(()),
        }
    }
}

/// Sets every store's status and returns their readiness.
pub(crate) async fn reconcile(client: &Client) -> Result<Stores, kube::Error> {
    let mut stores = Stores::default();
    for kind in [SECRET_STORE, CLUSTER_SECRET_STORE] {
        for store in kind.list(client).await? {
            let (namespace, name) = kit::namespace_name(&store);
            let condition = match kit::not_ready_toggle(&store) {
                Some(message) => Condition::new("Ready", false, REASON_VALIDATION_FAILED, message),
                None => Condition::new("Ready", true, REASON_VALID, MESSAGE_VALIDATED),
            };
            let ready = condition.status;
            let status = json!({
                "conditions": kit::conditions(&store, &[condition], false),
                "capabilities": "ReadWrite",
            });
            if let Err(error) = kit::apply_status(client, &kind, &store, MANAGER, status).await {
                tracing::warn!(actor = %Actor::ExternalSecrets, kind = kind.kind, %name, %error, "writing the store status failed");
            }
            let scope = namespace.unwrap_or_default();
            stores.ready.insert(
                (kind.kind.to_owned(), scope, name),
                ready && !kit::is_deleting(&store),
            );
        }
    }
    Ok(stores)
}

/// A store reference's kind and name, from `{kind, name}`.
pub(crate) fn reference(value: &Value) -> (Option<&str>, &str) {
    (
        value.get("kind").and_then(Value::as_str),
        value
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    )
}
