//! PushSecrets: a Secret's data into the backend, the finalizer of `deletionPolicy: Delete`,
//! and the clean-up on deletion.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use kube::Client;
use kube::api::{Patch, PatchParams};
use serde_json::{Map, Value, json};

use super::stores::{self, Stores};
use super::{Backend, MANAGER, PUSH_SECRET};
use crate::actors::Actor;
use crate::actors::kit::{self, Condition};

/// The finalizer ESO puts on a PushSecret whose pushed secrets are deleted with it.
pub(crate) const FINALIZER: &str = "pushsecret.externalsecrets.io/finalizer";
const REASON_SYNCED: &str = "Synced";
const REASON_ERRORED: &str = "Errored";
const MESSAGE_SYNCED: &str = "PushSecret synced successfully";

/// One push: a remote key, and the property within it (none: the whole Secret).
struct Push {
    remote_key: String,
    property: Option<String>,
    secret_key: Option<String>,
}

impl Push {
    /// The key ESO's `status.syncedPushSecrets` records a push under.
    fn status_key(&self) -> String {
        match &self.property {
            Some(p) => format!("{}/{p}", self.remote_key),
            None => self.remote_key.clone(),
        }
    }

    /// The push as `status.syncedPushSecrets` records it (unset fields left out).
    fn status_entry(&self) -> Value {
        let mut remote_ref = json!({"remoteKey": self.remote_key});
        if let Some(property) = &self.property {
            remote_ref["property"] = json!(property);
        }
        let mut matched = json!({"remoteRef": remote_ref});
        if let Some(secret_key) = &self.secret_key {
            matched["secretKey"] = json!(secret_key);
        }
        json!({"match": matched})
    }
}

/// Reconciles every PushSecret.
pub(crate) async fn reconcile_all(
    client: &Client,
    stores: &Stores,
    backend: &Backend,
) -> Result<(), kube::Error> {
    for ps in PUSH_SECRET.list(client).await? {
        let (namespace, name) = kit::namespace_name(&ps);
        let namespace = namespace.unwrap_or_default();
        if let Err(error) = reconcile(client, stores, backend, &ps, &namespace, &name).await {
            tracing::warn!(actor = %Actor::ExternalSecrets, %namespace, %name, %error, "reconciling the PushSecret failed");
        }
    }
    Ok(())
}

async fn reconcile(
    client: &Client,
    stores: &Stores,
    backend: &Backend,
    ps: &Value,
    namespace: &str,
    name: &str,
) -> Result<(), kube::Error> {
    let delete_policy = kit::str_at(ps, "/spec/deletionPolicy") == Some("Delete");
    let finalizers: Vec<String> = ps
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let has_finalizer = finalizers.iter().any(|f| f == FINALIZER);
    if kit::is_deleting(ps) {
        if has_finalizer {
            if delete_policy {
                delete_pushed(backend, ps);
            }
            set_finalizer(client, ps, namespace, name, &finalizers, false).await?;
        }
        return Ok(());
    }
    if delete_policy != has_finalizer {
        set_finalizer(client, ps, namespace, name, &finalizers, delete_policy).await?;
    }
    let pushes = pushes(ps);
    let outcome = match kit::not_ready_toggle(ps) {
        Some(message) => Err(message),
        None => push(client, stores, backend, ps, namespace, &pushes).await,
    };
    let mut status = Map::new();
    let condition = match outcome {
        Ok(()) => {
            let mut synced = Map::new();
            for store in ps["spec"]["secretStoreRefs"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let (kind, store_name) = stores::reference(store);
                let entries: Map<String, Value> = pushes
                    .iter()
                    .map(|p| (p.status_key(), p.status_entry()))
                    .collect();
                synced.insert(
                    format!("{}/{store_name}", kind.unwrap_or("SecretStore")),
                    Value::Object(entries),
                );
            }
            status.insert("syncedPushSecrets".into(), Value::Object(synced));
            let generation = ps
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            status.insert(
                "syncedResourceVersion".into(),
                json!(format!("{generation}")),
            );
            Condition::new("Ready", true, REASON_SYNCED, MESSAGE_SYNCED)
        }
        Err(message) => Condition::new("Ready", false, REASON_ERRORED, message),
    };
    status.insert(
        "conditions".into(),
        kit::conditions(ps, &[condition], false),
    );
    kit::apply_status(client, &PUSH_SECRET, ps, MANAGER, Value::Object(status)).await?;
    Ok(())
}

/// The pushes `spec.data` names.
fn pushes(ps: &Value) -> Vec<Push> {
    ps["spec"]["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| Push {
            remote_key: kit::str_at(d, "/match/remoteRef/remoteKey")
                .unwrap_or_default()
                .to_owned(),
            property: kit::str_at(d, "/match/remoteRef/property")
                .filter(|p| !p.is_empty())
                .map(str::to_owned),
            secret_key: kit::str_at(d, "/match/secretKey").map(str::to_owned),
        })
        .collect()
}

/// Writes the source Secret's data into the backend; the error is the condition message.
async fn push(
    client: &Client,
    stores: &Stores,
    backend: &Backend,
    ps: &Value,
    namespace: &str,
    pushes: &[Push],
) -> Result<(), String> {
    for store in ps["spec"]["secretStoreRefs"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let (kind, name) = stores::reference(store);
        stores.check(kind, name, namespace)?;
    }
    let source = kit::str_at(ps, "/spec/selector/secret/name")
        .ok_or("spec.selector.secret.name is not set (generators are not served)")?;
    let secret = kit::SECRET
        .api(client, Some(namespace))
        .get_opt(source)
        .await
        .map_err(|e| format!("could not get source secret: {e}"))?
        .ok_or_else(|| format!("could not get source secret: secrets {source:?} not found"))?;
    let secret = serde_json::to_value(secret).unwrap_or_default();
    let mut data = std::collections::BTreeMap::new();
    for (key, value) in secret["data"].as_object().into_iter().flatten() {
        let bytes = STANDARD
            .decode(value.as_str().unwrap_or_default())
            .map_err(|_| format!("secret {source:?} key {key:?} is not base64"))?;
        data.insert(key.clone(), bytes);
    }
    let if_not_exists = kit::str_at(ps, "/spec/updatePolicy") == Some("IfNotExists");
    let mut entries = backend.lock();
    let mut changed = false;
    for p in pushes {
        if if_not_exists && entries.contains_key(&p.remote_key) {
            continue;
        }
        match &p.secret_key {
            None => {
                changed |= entries.get(&p.remote_key) != Some(&data);
                entries.insert(p.remote_key.clone(), data.clone());
            }
            Some(secret_key) => {
                let value = data.get(secret_key).ok_or_else(|| {
                    format!("secret key {secret_key:?} does not exist in secret {source:?}")
                })?;
                let property = p.property.clone().unwrap_or_else(|| secret_key.clone());
                let entry = entries.entry(p.remote_key.clone()).or_default();
                changed |= entry.get(&property) != Some(value);
                entry.insert(property, value.clone());
            }
        }
    }
    drop(entries);
    if changed {
        backend.wake.notify_one();
    }
    Ok(())
}

/// Removes what the PushSecret pushed (its `status.syncedPushSecrets`): a property push
/// removes the property (and the entry once empty), a whole-Secret push the entry.
fn delete_pushed(backend: &Backend, ps: &Value) {
    let mut entries = backend.lock();
    for store in ps
        .pointer("/status/syncedPushSecrets")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|m| m.values())
    {
        for pushed in store.as_object().into_iter().flat_map(|m| m.values()) {
            let Some(key) = kit::str_at(pushed, "/match/remoteRef/remoteKey") else {
                continue;
            };
            match kit::str_at(pushed, "/match/remoteRef/property") {
                Some(property) => {
                    if let Some(entry) = entries.get_mut(key) {
                        entry.remove(property);
                        if entry.is_empty() {
                            entries.remove(key);
                        }
                    }
                }
                None => {
                    entries.remove(key);
                }
            }
        }
    }
    drop(entries);
    backend.wake.notify_one();
}

/// Adds or removes the finalizer (a merge patch guarded by the resourceVersion).
async fn set_finalizer(
    client: &Client,
    ps: &Value,
    namespace: &str,
    name: &str,
    finalizers: &[String],
    present: bool,
) -> Result<(), kube::Error> {
    let mut list: Vec<String> = finalizers
        .iter()
        .filter(|f| *f != FINALIZER)
        .cloned()
        .collect();
    if present {
        list.push(FINALIZER.to_owned());
    }
    let patch = json!({"metadata": {
        "finalizers": list,
        "resourceVersion": kit::str_at(ps, "/metadata/resourceVersion"),
    }});
    PUSH_SECRET
        .api(client, Some(namespace))
        .patch(
            name,
            &PatchParams {
                field_manager: Some(MANAGER.into()),
                ..Default::default()
            },
            &Patch::Merge(&patch),
        )
        .await?;
    Ok(())
}
