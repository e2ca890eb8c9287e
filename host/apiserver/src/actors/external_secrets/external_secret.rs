//! ExternalSecrets: the target Secret from the backend (`data`, `dataFrom.extract`), by the
//! target's `creationPolicy` and `template`, and `Ready` with ESO's reasons.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use kube::Client;
use kube::api::{Patch, PatchParams};
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use super::stores::{self, Stores};
use super::{Backend, EXTERNAL_SECRET, MANAGER};
use crate::actors::Actor;
use crate::actors::kit::{self, Condition};

const REASON_SYNCED: &str = "SecretSynced";
const REASON_SYNCED_ERROR: &str = "SecretSyncedError";
const MESSAGE_SYNCED: &str = "secret synced";
const MESSAGE_GET_DATA: &str = "could not get secret data from provider";
const MESSAGE_UPDATE_SECRET: &str = "could not update Secret";
/// The label ESO puts on the Secrets it manages.
const MANAGED_LABEL: &str = "reconcile.external-secrets.io/managed";
/// The annotation holding the hash of the data ESO wrote.
const DATA_HASH_ANNOTATION: &str = "reconcile.external-secrets.io/data-hash";

/// Reconciles every ExternalSecret.
pub(crate) async fn reconcile_all(
    client: &Client,
    stores: &Stores,
    backend: &Backend,
) -> Result<(), kube::Error> {
    for es in EXTERNAL_SECRET.list(client).await? {
        if kit::is_deleting(&es) {
            continue;
        }
        let (namespace, name) = kit::namespace_name(&es);
        let namespace = namespace.unwrap_or_default();
        if let Err(error) = reconcile(client, stores, backend, &es, &namespace, &name).await {
            tracing::warn!(actor = %Actor::ExternalSecrets, %namespace, %name, %error, "reconciling the ExternalSecret failed");
        }
    }
    Ok(())
}

async fn reconcile(
    client: &Client,
    stores: &Stores,
    backend: &Backend,
    es: &Value,
    namespace: &str,
    name: &str,
) -> Result<(), kube::Error> {
    let spec = &es["spec"];
    let target_name = kit::str_at(spec, "/target/name").unwrap_or(name).to_owned();
    let secrets = kit::SECRET.api(client, Some(namespace));
    let target = secrets.get_opt(&target_name).await?;
    let synced_version = synced_resource_version(es);
    if !refresh_due(es, &synced_version, target.is_some()) {
        return Ok(());
    }
    let outcome = match kit::not_ready_toggle(es) {
        Some(message) => Err(message),
        None => {
            sync(
                client,
                stores,
                backend,
                es,
                namespace,
                name,
                &target_name,
                target.is_some(),
            )
            .await
        }
    };
    let mut status = Map::new();
    let condition = match outcome {
        Ok(()) => {
            status.insert("refreshTime".into(), json!(crate::objects::now()));
            status.insert("syncedResourceVersion".into(), json!(synced_version));
            status.insert("binding".into(), json!({"name": target_name}));
            Condition::new("Ready", true, REASON_SYNCED, MESSAGE_SYNCED)
        }
        Err(message) => Condition::new("Ready", false, REASON_SYNCED_ERROR, message),
    };
    status.insert(
        "conditions".into(),
        kit::conditions(es, &[condition], false),
    );
    kit::apply_status(client, &EXTERNAL_SECRET, es, MANAGER, Value::Object(status)).await?;
    Ok(())
}

/// ESO's `syncedResourceVersion`: the generation and a hash of labels and annotations.
fn synced_resource_version(es: &Value) -> String {
    let generation = es
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let meta = json!([
        es.pointer("/metadata/labels"),
        es.pointer("/metadata/annotations")
    ]);
    format!("{generation}-{}", &hash(meta.to_string().as_bytes())[..32])
}

fn hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether the ExternalSecret is to be synced now (ESO's `shouldRefresh` and
/// `isSecretValid`).
fn refresh_due(es: &Value, synced_version: &str, target_exists: bool) -> bool {
    if !target_exists || !kit::is_ready(es) {
        return true;
    }
    let changed = kit::str_at(es, "/status/syncedResourceVersion") != Some(synced_version);
    match kit::str_at(es, "/spec/refreshPolicy") {
        Some("CreatedOnce") => false,
        Some("OnChange") => changed,
        _ => {
            let interval = kit::str_at(es, "/spec/refreshInterval")
                .and_then(kit::go_duration)
                .unwrap_or(std::time::Duration::from_secs(3600));
            let last = kit::str_at(es, "/status/refreshTime")
                .and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok());
            let elapsed = last.is_none_or(|last| {
                let due = last
                    .as_millisecond()
                    .saturating_add(i64::try_from(interval.as_millis()).unwrap_or(i64::MAX));
                !interval.is_zero() && k8s_openapi::jiff::Timestamp::now().as_millisecond() >= due
            });
            changed || elapsed
        }
    }
}

/// Fetches the data and writes the target Secret; the error is the condition message.
#[allow(
    clippy::too_many_arguments,
    reason = "one ExternalSecret's resolved parts"
)]
async fn sync(
    client: &Client,
    stores: &Stores,
    backend: &Backend,
    es: &Value,
    namespace: &str,
    name: &str,
    target_name: &str,
    target_exists: bool,
) -> Result<(), String> {
    let spec = &es["spec"];
    let (kind, store) = stores::reference(&spec["secretStoreRef"]);
    stores.check(kind, store, namespace)?;
    let data = fetch(spec, backend).map_err(|detail| {
        tracing::info!(actor = %Actor::ExternalSecrets, %namespace, %name, %detail, "the backend has no such data");
        MESSAGE_GET_DATA.to_owned()
    })?;
    let policy = kit::str_at(spec, "/target/creationPolicy").unwrap_or("Owner");
    if policy == "None" {
        return Ok(());
    }
    if policy == "Merge" && !target_exists {
        return Err(format!(
            "{MESSAGE_UPDATE_SECRET}: secrets {target_name:?} not found (creationPolicy Merge does not create it)"
        ));
    }
    let template = &spec["target"]["template"];
    let data = render(template, data)?;
    let encoded: Map<String, Value> = data
        .iter()
        .map(|(k, v)| (k.clone(), json!(STANDARD.encode(v))))
        .collect();
    let mut metadata = json!({"name": target_name, "namespace": namespace});
    if policy != "Merge" {
        let mut labels = template
            .pointer("/metadata/labels")
            .cloned()
            .unwrap_or(json!({}));
        labels[MANAGED_LABEL] = json!("true");
        let mut annotations = template
            .pointer("/metadata/annotations")
            .cloned()
            .unwrap_or(json!({}));
        annotations[DATA_HASH_ANNOTATION] =
            json!(&hash(Value::Object(encoded.clone()).to_string().as_bytes())[..32]);
        metadata["labels"] = labels;
        metadata["annotations"] = annotations;
    }
    if policy == "Owner" {
        metadata["ownerReferences"] = json!([{
            "apiVersion": EXTERNAL_SECRET.api_version(),
            "kind": EXTERNAL_SECRET.kind,
            "name": name,
            "uid": kit::str_at(es, "/metadata/uid").unwrap_or_default(),
            "controller": true,
            "blockOwnerDeletion": true,
        }]);
    }
    let mut body =
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": metadata, "data": encoded});
    if policy != "Merge" {
        body["type"] = json!(
            template
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("Opaque")
        );
    }
    let manager = format!("externalsecrets.external-secrets.io/{name}");
    kit::SECRET
        .api(client, Some(namespace))
        .patch(
            target_name,
            &PatchParams::apply(&manager).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(|e| format!("{MESSAGE_UPDATE_SECRET}: {e}"))?;
    Ok(())
}

/// The secret data `spec.data` and `spec.dataFrom` name, from the backend; the error
/// names the missing remote key or property (not a value).
fn fetch(spec: &Value, backend: &Backend) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut out = BTreeMap::new();
    for from in spec["dataFrom"].as_array().into_iter().flatten() {
        let Some(key) = kit::str_at(from, "/extract/key") else {
            return Err("only dataFrom.extract is served".into());
        };
        let entry = backend
            .get(key)
            .ok_or_else(|| format!("remote key {key:?} does not exist"))?;
        out.extend(entry);
    }
    for item in spec["data"].as_array().into_iter().flatten() {
        let secret_key = kit::str_at(item, "/secretKey").unwrap_or_default();
        let key = kit::str_at(item, "/remoteRef/key").unwrap_or_default();
        let entry = backend
            .get(key)
            .ok_or_else(|| format!("remote key {key:?} does not exist"))?;
        let value = match kit::str_at(item, "/remoteRef/property") {
            Some(property) => entry
                .get(property)
                .cloned()
                .ok_or_else(|| format!("remote key {key:?} has no property {property:?}"))?,
            None => whole_entry(&entry),
        };
        out.insert(secret_key.to_owned(), value);
    }
    Ok(out)
}

/// A remote secret without a property: its properties as a JSON object (Vault's answer).
fn whole_entry(entry: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    let object: Map<String, Value> = entry
        .iter()
        .map(|(k, v)| (k.clone(), json!(String::from_utf8_lossy(v))))
        .collect();
    Value::Object(object).to_string().into_bytes()
}

/// Applies `target.template.data` (`{{ .key }}` substitutions) by its `mergePolicy`
/// (`Replace`: only the template's keys; `Merge`: the fetched keys and the template's).
fn render(
    template: &Value,
    data: BTreeMap<String, Vec<u8>>,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let Some(templates) = template.get("data").and_then(Value::as_object) else {
        return Ok(data);
    };
    let mut out = if template.get("mergePolicy").and_then(Value::as_str) == Some("Merge") {
        data.clone()
    } else {
        BTreeMap::new()
    };
    for (key, text) in templates {
        let text = text.as_str().unwrap_or_default();
        out.insert(
            key.clone(),
            substitute(text, &data)
                .map_err(|e| format!("could not render template data {key:?}: {e}"))?,
        );
    }
    Ok(out)
}

/// Replaces each `{{ .name }}` (optionally `| toString`) with the data value `name`.
fn substitute(text: &str, data: &BTreeMap<String, Vec<u8>>) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.extend_from_slice(&rest.as_bytes()[..start]);
        let end = rest[start..].find("}}").ok_or("unclosed {{")? + start;
        let inner = rest[start + 2..end]
            .trim()
            .trim_start_matches('-')
            .trim_end_matches('-')
            .trim();
        let inner = inner.strip_suffix("| toString").unwrap_or(inner).trim();
        let name = inner
            .strip_prefix('.')
            .ok_or_else(|| format!("unsupported template action {inner:?}"))?;
        let value = data
            .get(name)
            .ok_or_else(|| format!("no data key {name:?}"))?;
        out.extend_from_slice(value);
        rest = &rest[end + 2..];
    }
    out.extend_from_slice(rest.as_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_substitute_data_keys() {
        let data = BTreeMap::from([("password".to_owned(), b"s3cret".to_vec())]);
        assert_eq!(
            substitute("p={{ .password }};", &data).as_deref(),
            Ok(&b"p=s3cret;"[..])
        );
        assert_eq!(
            substitute("{{ .password | toString }}", &data).as_deref(),
            Ok(&b"s3cret"[..])
        );
        let missing = substitute("{{ .user }}", &data).expect_err("no such key");
        assert!(missing.contains("no data key \"user\""), "{missing}");
        let action = substitute("{{ upper .password }}", &data).expect_err("unsupported");
        assert!(action.contains("unsupported template action"), "{action}");
    }
}
