//! Backends (facts §3.3 "Parent step", the satellite handshake's steps 2–3): the attached
//! GlanceBackends, gated on their CredentialsReady (never their Ready), rendered into the
//! immutable Secret `{name}-backends-{hash}` the Deployment mounts.
//!
//! | Case | BackendsReady | Projection |
//! |---|---|---|
//! | not exactly one credential-ready backend marked isDefault | False `NoDefaultBackend` "No attached, credential-ready backend is marked isDefault; exactly one is required" / "More than one attached, credential-ready backend is marked isDefault (a, b); exactly one is required" | invalid: the last good one stays (Config, Deployment) |
//! | a backend not credential-ready | False `WaitingForBackends` "Waiting for backends: b (credentials not ready)" | the others rendered |
//! | a backend whose Secret or key is missing, or whose values carry CR/LF | False `WaitingForBackends` "Waiting for backends: b (<why>)"; Warning `GlanceBackendSkipped` "Skipping backend b: <why>" | the others rendered |
//! | all attached rendered | True `AllBackendsProjected` "All attached backends are projected" | valid |
//!
//! A deleting backend drops out at once (de-projected without waiting for it to go). The
//! backends are sorted by name, so the Secret's content — and its name — are the same on
//! every pass; three superseded Secrets are kept. The step never requeues and never fails
//! on a waiting state: the GlanceBackend watch wakes the Glance when a backend changes.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use serde_json::Value;
use wasm_operator_sdk::blocks::config::ini::{Sections, render_ini};
use wasm_operator_sdk::blocks::config::{create_immutable_secret, prune_immutable_secrets};
use wasm_operator_sdk::blocks::satellite::{CollectParams, collect};
use wasm_operator_sdk::{ClusterExt, EventType, ListOptions};

use crate::backend::{
    ACCESS_KEY_ID, DEFAULT_BUCKET_URL_FORMAT, GlanceBackend, SECRET_ACCESS_KEY, backend_kind,
};
use crate::conditions::BACKENDS_READY;
use crate::error::Error;
use crate::pass::{Pass, Projection, StepResult};

/// The data key of the backends Secret.
pub(crate) const BACKENDS_CONF: &str = "backends.conf";
/// How many superseded backends Secrets are kept.
pub(crate) const RETAIN: usize = 3;

/// The backends Secret's base name.
pub(crate) fn base_name(glance: &str) -> String {
    format!("{glance}-backends")
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let listed = list(pass)?;
    let backends: Vec<GlanceBackend> = listed.iter().filter_map(|(_, b)| b.clone()).collect();
    let gate = |b: &GlanceBackend| b.credentials_ready();
    let is_default = |b: &GlanceBackend| b.spec.is_default;
    let collection = collect(CollectParams {
        items: backends.iter().collect(),
        gate: Some(&gate),
        is_default: Some(&is_default),
    });
    let hosts: Vec<String> = collection
        .attached
        .iter()
        .filter_map(|b| b.spec.s3.as_ref().map(|s3| s3.host.clone()))
        .filter(|h| !h.is_empty())
        .collect();
    if !collection.valid {
        let defaults: Vec<&str> = collection
            .default_candidates
            .iter()
            .map(|b| b.name())
            .collect();
        let message = no_default_message(&defaults);
        pass.condition(BACKENDS_READY, false, "NoDefaultBackend", &message);
        pass.projection = Projection {
            hosts,
            ..Projection::default()
        };
        return Ok(None);
    }
    let default_backend = collection
        .default_candidates
        .first()
        .map(|b| b.name().to_owned())
        .unwrap_or_default();
    let mut pending: Vec<String> = listed
        .iter()
        .filter(|(_, b)| b.is_none())
        .map(|(name, _)| format!("{name} (spec cannot be read)"))
        .collect();
    let mut sections = Sections::new();
    for backend in &collection.attached {
        if !backend.credentials_ready() {
            pending.push(format!("{} (credentials not ready)", backend.name()));
            continue;
        }
        match render_section(pass, backend)? {
            Ok(section) => {
                sections.insert(backend.name().to_owned(), section);
            }
            Err(why) => {
                pass.event(
                    EventType::Warning,
                    "GlanceBackendSkipped",
                    &format!("Skipping backend {}: {why}", backend.name()),
                );
                pending.push(format!("{} ({why})", backend.name()));
            }
        }
    }
    let enabled: Vec<String> = sections.keys().map(|n| format!("{n}:s3")).collect();
    let data = BTreeMap::from([(
        BACKENDS_CONF.to_owned(),
        ByteString(render_ini(&sections).into_bytes()),
    )]);
    let base = base_name(pass.name());
    let namespace = pass.namespace().to_owned();
    let secret_name = create_immutable_secret(pass.cluster, &pass.owner, &base, &namespace, &data)
        .map_err(|source| Error::ImmutableSecret {
            what: "backends",
            source,
        })?;
    prune_immutable_secrets(
        pass.cluster,
        &pass.owner,
        &base,
        &namespace,
        &secret_name,
        RETAIN,
    )
    .map_err(|source| Error::Prune {
        what: "backends",
        source: Box::new(source),
    })?;
    pass.projection = Projection {
        valid: true,
        enabled_backends: enabled.join(","),
        default_backend,
        secret_name,
        hosts,
    };
    if pending.is_empty() {
        pass.condition(
            BACKENDS_READY,
            true,
            "AllBackendsProjected",
            "All attached backends are projected",
        );
    } else {
        let message = format!("Waiting for backends: {}", pending.join("; "));
        pass.condition(BACKENDS_READY, false, "WaitingForBackends", &message);
    }
    Ok(None)
}

/// The GlanceBackends naming this Glance, by name, each decoded or not (none when the
/// kind is not served); they live next to the Glance, never on its target cluster.
fn list(pass: &Pass<'_>) -> Result<Vec<(String, Option<GlanceBackend>)>, Error> {
    let kind = backend_kind();
    let served = pass
        .primary_cluster
        .served(&kind)
        .map_err(|source| Error::Probe {
            kind: "GlanceBackend",
            source,
        })?;
    if !served {
        return Ok(Vec::new());
    }
    let what = format!("listing GlanceBackends in {}", pass.namespace());
    let listed = pass
        .primary_cluster
        .list(&kind, Some(pass.namespace()), &ListOptions::default())
        .map_err(|e| Error::cluster(what)(e.into()))?;
    let mut backends: Vec<(String, Option<GlanceBackend>)> = listed
        .into_iter()
        .filter(|b| b.pointer("/spec/glanceRef/name").and_then(Value::as_str) == Some(pass.name()))
        .map(|b| {
            let name = b
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            (name, serde_json::from_value(b).ok())
        })
        .collect();
    backends.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(backends)
}

/// The message of `NoDefaultBackend` for the credential-ready `defaults`.
pub(crate) fn no_default_message(defaults: &[&str]) -> String {
    if defaults.is_empty() {
        return "No attached, credential-ready backend is marked isDefault; exactly one is required"
            .to_owned();
    }
    format!(
        "More than one attached, credential-ready backend is marked isDefault ({}); exactly one is required",
        defaults.join(", ")
    )
}

/// The `[<name>]` store section of a credential-ready backend; `Ok(Err(why))` for a fault
/// of this backend alone (a missing Secret or key, a CR/LF in an option), an error for a
/// failed read.
fn render_section(
    pass: &Pass<'_>,
    backend: &GlanceBackend,
) -> Result<Result<BTreeMap<String, String>, String>, Error> {
    let Some(s3) = &backend.spec.s3 else {
        return Ok(Err(format!(
            "backend {} has type {} but no s3 block",
            backend.name(),
            backend.spec.type_
        )));
    };
    let secret_name = &s3.credentials_secret_ref.name;
    let what = format!("reading Secret {}", pass.key(secret_name));
    let secret = pass
        .cluster
        .get_typed::<Secret>(Some(pass.namespace()), secret_name)
        .map_err(Error::cluster(what))?;
    let Some(secret) = secret else {
        return Ok(Err(format!("Secret {} not found", pass.key(secret_name))));
    };
    let value = |key: &str| -> Result<String, String> {
        secret
            .data
            .as_ref()
            .and_then(|d| d.get(key))
            .map(|v| String::from_utf8_lossy(&v.0).into_owned())
            .ok_or_else(|| format!("Secret {} has no key {key:?}", pass.key(secret_name)))
    };
    let (access, secret_key) = match (value(ACCESS_KEY_ID), value(SECRET_ACCESS_KEY)) {
        (Ok(a), Ok(s)) => (a, s),
        (Err(why), _) | (_, Err(why)) => return Ok(Err(why)),
    };
    let format = if s3.bucket_url_format.is_empty() {
        DEFAULT_BUCKET_URL_FORMAT
    } else {
        &s3.bucket_url_format
    };
    let mut section = BTreeMap::from([
        ("s3_store_host".to_owned(), s3.host.clone()),
        ("s3_store_bucket".to_owned(), s3.bucket.clone()),
        ("s3_store_access_key".to_owned(), access),
        ("s3_store_secret_key".to_owned(), secret_key),
        ("s3_store_bucket_url_format".to_owned(), format.to_owned()),
    ]);
    if !s3.region.is_empty() {
        section.insert("s3_store_region_name".into(), s3.region.clone());
    }
    if s3.create_bucket_on_put {
        section.insert("s3_store_create_bucket_on_put".into(), "true".into());
    }
    if let Some(size) = s3.large_object_size {
        section.insert("s3_store_large_object_size".into(), size.to_string());
    }
    if let Some(size) = s3.large_object_chunk_size {
        section.insert("s3_store_large_object_chunk_size".into(), size.to_string());
    }
    for (key, value) in &backend.spec.extra_options {
        section.entry(key.clone()).or_insert_with(|| value.clone());
    }
    if section
        .iter()
        .any(|(k, v)| k.contains(['\n', '\r']) || v.contains(['\n', '\r']))
    {
        return Ok(Err(
            "[glance_store] option name or value contains a newline or \
                       carriage-return character"
                .to_owned(),
        ));
    }
    Ok(Ok(section))
}

#[cfg(test)]
#[path = "backends_tests.rs"]
mod tests;
