//! SecretStores (facts §3.6 "Parent step", the satellite handshake's steps 2–3): the
//! attached BarbicanSecretStores, gated on their CredentialsReady (never their Ready),
//! rendered into barbican.conf's store sections.
//!
//! | Case | SecretStoresReady | Projection |
//! |---|---|---|
//! | not exactly one credential-ready store marked isDefault | False `NoDefaultSecretStore` "No attached, credential-ready secret store is marked isDefault; exactly one is required" / "2 attached, credential-ready secret stores are marked isDefault (a, b); exactly one is required" | invalid |
//! | more than one credential-ready store of type OpenBao | False `MultipleOpenBaoStores` "2 attached, credential-ready stores are of type OpenBao; the [vault_plugin] section is process-global, so exactly one is supported" | invalid |
//! | the default's credentials Secret or a key missing, or CR/LF in a `[vault_plugin]` option | False `WaitingForSecretStores` "Skipping secret store d: <why>"; Warning `BarbicanSecretStoreSkipped` with the same text | invalid |
//! | rendered | True `AllStoresProjected` "All attached secret stores are projected"; status.projectedSecretStores and projectedSecretStoreHosts; Warning `SecretStoreDetached` for each store that left the recorded set | valid |
//!
//! An invalid projection keeps the running config (the Deployment step leaves the
//! Deployment as it is). The rendered sections: `[secretstore:<store>]`
//! `secret_store_plugin = vault_plugin` (+ `global_default = True` on the default) per
//! credential-ready store; `[secretstore]` `enable_multiple_secret_stores = true`,
//! `stores_lookup_suffix = a,b`; `[vault_plugin]` from the default: `vault_url`,
//! `use_ssl`, `approle_role_id`, `kv_mountpoint`, `ssl_ca_crt_file` (with a CA),
//! `namespace` (when set), then extraOptions that neither override an operator key nor
//! name a denied one. The secret ID is never rendered. The step never requeues and never
//! fails on a waiting state: the store watch wakes the Barbican.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use serde_json::Value;
use sha2::{Digest, Sha256};
use wasm_operator_sdk::blocks::config::ini::Sections;
use wasm_operator_sdk::blocks::satellite::{CollectParams, collect};
use wasm_operator_sdk::{ClusterExt, EventType, ListOptions};

use crate::conditions::SECRET_STORES_READY;
use crate::error::Error;
use crate::pass::{Pass, Projection, StepResult};
use crate::store::{DENIED_OPTIONS, OPENBAO, ROLE_ID_KEY, SECRET_ID_KEY, SecretStore, store_kind};

/// Where the pods find the OpenBao server's CA bundle.
pub(crate) const CA_FILE: &str = "/etc/barbican-secret-store-ca/ca.crt";

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let stores = list(pass)?;
    let gate = |s: &SecretStore| s.credentials_ready();
    let is_default = |s: &SecretStore| s.spec.is_default;
    let collection = collect(CollectParams {
        items: stores.iter().collect(),
        gate: Some(&gate),
        is_default: Some(&is_default),
    });
    let namespace = pass.namespace().to_owned();
    let hosts: Vec<String> = collection
        .gated
        .iter()
        .map(|s| s.server_url(&namespace))
        .filter(|h| !h.is_empty())
        .collect();
    if !collection.valid {
        let defaults: Vec<&str> = collection
            .default_candidates
            .iter()
            .map(|s| s.name())
            .collect();
        let message = no_default_message(&defaults);
        return waiting(pass, "NoDefaultSecretStore", &message);
    }
    let openbao = collection
        .gated
        .iter()
        .filter(|s| s.spec.type_ == OPENBAO)
        .count();
    if openbao > 1 {
        let message = format!(
            "{openbao} attached, credential-ready stores are of type {OPENBAO}; the \
             [vault_plugin] section is process-global, so exactly one is supported"
        );
        return waiting(pass, "MultipleOpenBaoStores", &message);
    }
    let Some(default) = collection.default_candidates.first().copied() else {
        return Ok(None);
    };
    let rendered = match vault_plugin(pass, default)? {
        Ok(rendered) => rendered,
        Err(why) => {
            let message = format!("Skipping secret store {}: {why}", default.name());
            pass.event(EventType::Warning, "BarbicanSecretStoreSkipped", &message);
            return waiting(pass, "WaitingForSecretStores", &message);
        }
    };
    let mut sections = Sections::new();
    let names: Vec<String> = collection
        .gated
        .iter()
        .map(|s| s.name().to_owned())
        .collect();
    for name in &names {
        let mut section =
            BTreeMap::from([("secret_store_plugin".to_owned(), "vault_plugin".to_owned())]);
        if name == default.name() {
            section.insert("global_default".into(), "True".into());
        }
        sections.insert(format!("secretstore:{name}"), section);
    }
    sections.insert(
        "secretstore".into(),
        BTreeMap::from([
            (
                "enable_multiple_secret_stores".to_owned(),
                "true".to_owned(),
            ),
            ("stores_lookup_suffix".to_owned(), names.join(",")),
        ]),
    );
    sections.insert("vault_plugin".into(), rendered.section);
    record(pass, &names, &hosts);
    pass.projection = Projection {
        valid: true,
        sections,
        credentials_secret: rendered.credentials_secret,
        secret_id_digest: rendered.secret_id_digest,
        ca_secret: rendered.ca_secret,
        hosts,
    };
    pass.condition(
        SECRET_STORES_READY,
        true,
        "AllStoresProjected",
        "All attached secret stores are projected",
    );
    Ok(None)
}

/// SecretStoresReady False with `reason`; the projection invalid; the pass goes on.
fn waiting(pass: &mut Pass<'_>, reason: &str, message: &str) -> StepResult {
    pass.condition(SECRET_STORES_READY, false, reason, message);
    pass.projection = Projection::default();
    Ok(None)
}

/// The message of `NoDefaultSecretStore` for the credential-ready `defaults`.
pub(crate) fn no_default_message(defaults: &[&str]) -> String {
    if defaults.is_empty() {
        return "No attached, credential-ready secret store is marked isDefault; exactly one \
                is required"
            .to_owned();
    }
    format!(
        "{} attached, credential-ready secret stores are marked isDefault ({}); exactly one is \
         required",
        defaults.len(),
        defaults.join(", ")
    )
}

/// Stamps the projected stores and their hosts on the status, warning about each store
/// that left the recorded set (the secrets barbican wrote through it stop resolving).
fn record(pass: &mut Pass<'_>, names: &[String], hosts: &[String]) {
    let before = pass
        .barbican
        .status
        .as_ref()
        .map(|s| s.projected_secret_stores.clone())
        .unwrap_or_default();
    for gone in before.iter().filter(|n| !names.contains(n)) {
        pass.event(
            EventType::Warning,
            "SecretStoreDetached",
            &format!(
                "Secret store {gone:?} is no longer projected: its [secretstore:{gone}] section \
                 is dropped from barbican.conf, so every secret barbican wrote through that \
                 store stops resolving"
            ),
        );
    }
    let status = pass.status_mut();
    status.projected_secret_stores = names.to_vec();
    status.projected_secret_store_hosts = hosts.to_vec();
}

/// The BarbicanSecretStores naming this Barbican (none when the kind is not served;
/// undecodable ones left out); they live next to the Barbican, never on its target cluster.
fn list(pass: &Pass<'_>) -> Result<Vec<SecretStore>, Error> {
    let kind = store_kind();
    let served = pass
        .primary_cluster
        .served(&kind)
        .map_err(|source| Error::Probe {
            kind: "BarbicanSecretStore",
            source,
        })?;
    if !served {
        return Ok(Vec::new());
    }
    let what = format!("listing BarbicanSecretStores in {}", pass.namespace());
    let listed = pass
        .primary_cluster
        .list(&kind, Some(pass.namespace()), &ListOptions::default())
        .map_err(|e| Error::cluster(what)(e.into()))?;
    Ok(listed
        .into_iter()
        .filter(|s| {
            s.pointer("/spec/barbicanRef/name").and_then(Value::as_str) == Some(pass.name())
        })
        .filter_map(|s| serde_json::from_value(s).ok())
        .collect())
}

/// What rendering the default store gives the config and the Deployment.
struct VaultPlugin {
    section: BTreeMap<String, String>,
    credentials_secret: String,
    secret_id_digest: String,
    ca_secret: Option<String>,
}

/// `[vault_plugin]` from the default store; `Ok(Err(why))` for a fault of that store (a
/// missing Secret or key, a CR/LF in an option), an error for a failed read.
fn vault_plugin(
    pass: &Pass<'_>,
    store: &SecretStore,
) -> Result<Result<VaultPlugin, String>, Error> {
    let Some(open_bao) = &store.spec.open_bao else {
        return Ok(Err(format!(
            "store {} has type {} but no openBao block",
            store.name(),
            store.spec.type_
        )));
    };
    let (credentials_secret, ca_secret) = store.secrets();
    let what = format!("reading Secret {}", pass.key(&credentials_secret));
    let secret = pass
        .cluster
        .get_typed::<Secret>(Some(pass.namespace()), &credentials_secret)
        .map_err(Error::cluster(what))?;
    let Some(secret) = secret else {
        return Ok(Err(format!(
            "Secret {} not found",
            pass.key(&credentials_secret)
        )));
    };
    let value = |key: &str| -> Result<String, String> {
        secret
            .data
            .as_ref()
            .and_then(|d| d.get(key))
            .map(|v| String::from_utf8_lossy(&v.0).into_owned())
            .ok_or_else(|| {
                format!(
                    "Secret {} has no key {key:?}",
                    pass.key(&credentials_secret)
                )
            })
    };
    let (role_id, secret_id) = match (value(ROLE_ID_KEY), value(SECRET_ID_KEY)) {
        (Ok(r), Ok(s)) => (r, s),
        (Err(why), _) | (_, Err(why)) => return Ok(Err(why)),
    };
    let url = store.server_url(pass.namespace());
    let mut section = BTreeMap::from([
        ("vault_url".to_owned(), url.clone()),
        (
            "use_ssl".to_owned(),
            url.starts_with("https://").to_string(),
        ),
        ("approle_role_id".to_owned(), role_id),
        ("kv_mountpoint".to_owned(), open_bao.kv_mountpoint.clone()),
    ]);
    if ca_secret.is_some() {
        section.insert("ssl_ca_crt_file".into(), CA_FILE.into());
    }
    if !open_bao.namespace.is_empty() {
        section.insert("namespace".into(), open_bao.namespace.clone());
    }
    for (key, value) in &store.spec.extra_options {
        if !DENIED_OPTIONS.contains(&key.as_str()) {
            section.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    if section
        .iter()
        .any(|(k, v)| k.contains(['\n', '\r']) || v.contains(['\n', '\r']))
    {
        return Ok(Err(
            "[vault_plugin] option name or value contains a newline or \
                       carriage-return character"
                .to_owned(),
        ));
    }
    Ok(Ok(VaultPlugin {
        section,
        credentials_secret,
        secret_id_digest: hex::encode(Sha256::digest(secret_id.as_bytes())),
        ca_secret,
    }))
}

#[cfg(test)]
#[path = "secret_stores_tests.rs"]
mod tests;
