//! Validation of the Keystone's shared blocks (facts §1.6): replicas, images, key counts,
//! cache, database and its TLS, store and cluster references, plugins, policy overrides
//! and logging. The schema carries most of these too; admission repeats them for objects
//! that bypass it (the embedded API server evaluates no CEL).

use std::collections::BTreeSet;

use serde_json::{Value, json};
use wasm_operator_sdk::admission::FieldErrors;
use wasm_operator_sdk::blocks::types::{
    CREDENTIALS_MODE_DYNAMIC, ImageSpec, LOG_LEVELS, TLS_MODES,
};

use crate::types::{KeystoneSpec, MIN_ACTIVE_KEYS};

/// The store kinds of `secretStoreRef.kind` (empty is the default, ClusterSecretStore).
const STORE_KINDS: &[&str] = &["ClusterSecretStore", "SecretStore"];
/// The values of `logging.format`.
const LOG_FORMATS: &[&str] = &["text", "json"];

/// `value` as the error quotes it.
fn shown(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Whether `text` holds a character that would start a new line of a rendered file.
fn has_line_break(text: &str) -> bool {
    text.contains(['\n', '\r'])
}

/// Checks the blocks of `spec`, in the order the facts list them.
pub(super) fn check(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    if spec.deployment.replicas < 1 {
        errors.invalid(
            "spec.deployment.replicas",
            &json!(spec.deployment.replicas),
            "must be at least 1",
        );
    }
    if !exactly_one_of_tag_or_digest(&spec.image) {
        errors.invalid(
            "spec.image",
            &shown(&spec.image),
            "exactly one of image.tag or image.digest must be set",
        );
    }
    if let Some(proxy) = spec
        .federation
        .as_ref()
        .and_then(|f| f.proxy_image.as_ref())
    {
        if proxy.repository.is_empty() {
            errors.required("spec.federation.proxyImage.repository", "");
        }
        if !exactly_one_of_tag_or_digest(proxy) {
            errors.invalid(
                "spec.federation.proxyImage",
                &shown(proxy),
                "exactly one of proxyImage.tag or proxyImage.digest must be set",
            );
        }
    }
    for (field, keys) in [
        ("spec.fernet.maxActiveKeys", &spec.fernet),
        ("spec.credentialKeys.maxActiveKeys", &spec.credential_keys),
    ] {
        if keys.max_active_keys != 0 && keys.max_active_keys < MIN_ACTIVE_KEYS {
            errors.invalid(
                field,
                &json!(keys.max_active_keys),
                &format!("must be at least {MIN_ACTIVE_KEYS}"),
            );
        }
    }
    check_cache(spec, errors);
    check_database(spec, errors);
    check_references(spec, errors);
    check_plugins_and_policy(spec, errors);
    check_logging(spec, errors);
}

fn exactly_one_of_tag_or_digest(image: &ImageSpec) -> bool {
    image.tag.is_empty() != image.digest.is_empty()
}

const LINE_BREAK: &str = "must not contain a newline or carriage return: it is rendered \
    verbatim into keystone.conf, where a line break starts a new option";

fn check_cache(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    let cache = &spec.cache;
    if cache.cluster_ref.is_some() != cache.servers.is_empty() {
        errors.invalid(
            "spec.cache",
            &shown(cache),
            "exactly one of clusterRef or servers must be set",
        );
    }
    if let Some(cluster) = &cache.cluster_ref
        && has_line_break(&cluster.name)
    {
        errors.invalid(
            "spec.cache.clusterRef.name",
            &json!(cluster.name),
            LINE_BREAK,
        );
    }
    for (i, server) in cache.servers.iter().enumerate() {
        if has_line_break(server) {
            errors.invalid(
                &format!("spec.cache.servers[{i}]"),
                &json!(server),
                LINE_BREAK,
            );
        }
    }
}

fn check_database(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    let database = &spec.database;
    if database.cluster_ref.is_some() != database.host.is_empty() {
        errors.invalid(
            "spec.database",
            &shown(database),
            "exactly one of clusterRef or host must be set",
        );
    }
    if database.credentials_mode == CREDENTIALS_MODE_DYNAMIC && database.cluster_ref.is_none() {
        errors.invalid(
            "spec.database.credentialsMode",
            &json!(database.credentials_mode),
            "credentialsMode Dynamic requires clusterRef (managed mode)",
        );
    }
    let Some(tls) = &database.tls else {
        return;
    };
    if !tls.mode.is_empty() && !TLS_MODES.contains(&tls.mode.as_str()) {
        errors.not_supported("spec.database.tls.mode", &json!(tls.mode), TLS_MODES);
    }
    if tls.is_enabled() {
        for (field, reference) in [
            (
                "spec.database.tls.caBundleSecretRef.name",
                &tls.ca_bundle_secret_ref,
            ),
            (
                "spec.database.tls.clientCertSecretRef.name",
                &tls.client_cert_secret_ref,
            ),
        ] {
            if reference.name.is_empty() {
                errors.required(field, "must be set when database.tls is enabled");
            }
        }
    }
}

fn check_references(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    if let Some(store) = &spec.secret_store_ref {
        if store.name.is_empty() {
            errors.required("spec.secretStoreRef.name", "");
        }
        if !store.kind.is_empty() && !STORE_KINDS.contains(&store.kind.as_str()) {
            errors.not_supported("spec.secretStoreRef.kind", &json!(store.kind), STORE_KINDS);
        }
    }
    if spec
        .target_cluster_ref
        .as_ref()
        .is_some_and(|t| t.name.is_empty())
    {
        errors.required("spec.targetClusterRef.name", "");
    }
}

fn check_plugins_and_policy(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    let mut sections = BTreeSet::new();
    for (i, plugin) in spec.plugins.iter().enumerate() {
        if !sections.insert(plugin.config_section.as_str()) {
            errors.duplicate(
                &format!("spec.plugins[{i}].configSection"),
                &json!(plugin.config_section),
            );
        }
    }
    let Some(policy) = &spec.policy_overrides else {
        return;
    };
    if policy.rules.is_empty() && policy.config_map_ref.is_none() {
        errors.required(
            "spec.policyOverrides",
            "at least one of rules or configMapRef must be set",
        );
    }
    for (name, rule) in &policy.rules {
        if name.is_empty() {
            errors.required(
                "spec.policyOverrides.rules",
                "policy rule name must not be empty",
            );
        }
        if rule.is_empty() {
            errors.invalid(
                &format!("spec.policyOverrides.rules[{name}]"),
                &json!(rule),
                "policy rule value must not be empty",
            );
        }
    }
}

fn check_logging(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    let Some(logging) = &spec.logging else {
        return;
    };
    if !logging.format.is_empty() && !LOG_FORMATS.contains(&logging.format.as_str()) {
        errors.not_supported("spec.logging.format", &json!(logging.format), LOG_FORMATS);
    }
    if !logging.level.is_empty() && !LOG_LEVELS.contains(&logging.level.as_str()) {
        errors.not_supported("spec.logging.level", &json!(logging.level), LOG_LEVELS);
    }
    for (logger, level) in &logging.per_logger_levels {
        if logger.is_empty() {
            errors.invalid(
                "spec.logging.perLoggerLevels",
                &json!(logger),
                "logger name must not be empty",
            );
        } else if !LOG_LEVELS.contains(&level.as_str()) {
            errors.not_supported(
                &format!("spec.logging.perLoggerLevels[{logger}]"),
                &json!(level),
                LOG_LEVELS,
            );
        }
    }
}

#[cfg(test)]
#[path = "blocks_tests.rs"]
mod tests;
