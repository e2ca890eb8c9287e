//! Admission webhooks: the server calls the webhooks its MutatingWebhookConfigurations and
//! ValidatingWebhookConfigurations register, in kube-apiserver's order and with its
//! answers.
//!
//! A write runs [`mutate`] on the object it is about to store (configurations in name
//! order, webhooks in their order, each JSONPatch applied in turn; a `reinvocationPolicy:
//! IfNeeded` webhook is called once more when a later webhook changed the object), then the
//! server's own defaulting and validation, then [`validate`] (every matching validating
//! webhook, concurrently). Neither runs under the state lock: each takes a snapshot of the
//! configurations, the namespace's labels and the resolved endpoints, then calls without
//! it; the write path re-checks the stored object before it commits.
//!
//! A denial is kube-apiserver's Status (`<resource> "<name>" is forbidden: admission
//! webhook "<webhook>" denied the request: <message>`, the response's code, 403 when it
//! names none); a failed call (connection, TLS, timeout, a non-2xx answer, an invalid
//! AdmissionReview) is `500 Internal error occurred: failed calling webhook ...` under
//! `failurePolicy: Fail` and is skipped under `Ignore`. Each call is counted as
//! `webhook:called` and `webhook:<result>` on the webhook's name (see `Counts::webhook`).
//! Writes of the configurations themselves are not sent to webhooks.
//!
//! - `config`: defaults and validation of the configurations on write.
//! - `matching`: rules, selectors, matchPolicy.
//! - `resolve`: clientConfig URL or Service (through EndpointSlices).
//! - `call`: the HTTPS exchange; `review`: the AdmissionReview request and its check.
//! - `errors`: the Status of a denial or a failed call.
//! - `user`: the request's userInfo.

mod call;
pub(crate) mod config;
mod errors;
mod matching;
mod resolve;
mod review;

use std::time::Duration;

use serde_json::{Value, json};

use crate::authn::User;
use crate::objects::{meta_str, new_uid};
use crate::registry::{Registry, ResourceType};
use crate::route::Target;
use crate::server::Shared;
use crate::status::warning_header as warning;
use crate::status::{ApiError, Result};
use crate::store::StoreKey;
use errors::{denied, internal};
use matching::Subject;
use resolve::Endpoint;

/// The operation of a write, as rules and AdmissionReviews name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    Create,
    Update,
    Delete,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
        }
    }
}

/// What a write is, as its webhooks see it.
pub(crate) struct Attributes<'a> {
    pub target: &'a Target,
    /// The object's name (empty for a create by generateName before the name is made).
    pub name: String,
    pub operation: Operation,
    /// The stored object an update or delete replaces.
    pub old: Option<Value>,
    pub dry_run: bool,
    /// CreateOptions, UpdateOptions or DeleteOptions (meta.k8s.io/v1).
    pub options: Value,
    /// The request's userInfo.
    pub user: &'a User,
}

/// The `meta.k8s.io/v1` options object of `kind` with the request's dryRun and
/// fieldManager.
pub(crate) fn options(kind: &str, dry_run: bool, field_manager: Option<&str>) -> Value {
    let mut options = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
    if dry_run {
        options["dryRun"] = json!(["All"]);
    }
    if let Some(m) = field_manager {
        options["fieldManager"] = json!(m);
    }
    options
}

/// One registered webhook, as snapshotted for a request.
struct Hook {
    name: String,
    spec: Value,
    endpoint: std::result::Result<Endpoint, String>,
}

/// What the calls of one request need from the state, taken under the lock once.
struct Snapshot {
    hooks: Vec<Hook>,
    /// The labels namespaceSelector is tested on; `None` for cluster-scoped kinds other
    /// than Namespace (the selector does not apply).
    namespace_labels: Option<Value>,
    /// The served kinds (matchPolicy Equivalent); empty when no webhook is registered.
    registry: Registry,
}

fn snapshot(
    shared: &Shared,
    attrs: &Attributes,
    object: Option<&Value>,
    mutating: bool,
) -> Snapshot {
    let state = shared.lock();
    let plural = if mutating {
        "mutatingwebhookconfigurations"
    } else {
        "validatingwebhookconfigurations"
    };
    let mut hooks = Vec::new();
    // As in kube-apiserver, writes of the configurations themselves are not admitted by
    // webhooks: a webhook cannot lock out its own removal.
    let configurations = if config::configuration_kind(&attrs.target.rt).is_some() {
        None
    } else {
        Some(state.store.list(config::GROUP, plural, None))
    };
    // The store lists in key order: configurations sorted by name.
    for (_, configuration) in configurations.into_iter().flatten() {
        for spec in configuration["webhooks"].as_array().into_iter().flatten() {
            hooks.push(Hook {
                name: spec["name"].as_str().unwrap_or_default().to_owned(),
                spec: spec.clone(),
                endpoint: resolve::resolve(&state, &spec["clientConfig"]),
            });
        }
    }
    if hooks.is_empty() {
        return Snapshot {
            hooks,
            namespace_labels: None,
            registry: Registry::default(),
        };
    }
    let rt = &attrs.target.rt;
    let labels_of = |o: Option<&Value>| {
        o.and_then(|o| o.pointer("/metadata/labels").cloned())
            .unwrap_or_else(|| json!({}))
    };
    let namespace_labels = if rt.group.is_empty() && rt.plural == "namespaces" {
        Some(labels_of(object.or(attrs.old.as_ref())))
    } else if rt.namespaced {
        let key = StoreKey {
            group: String::new(),
            plural: "namespaces".into(),
            namespace: String::new(),
            name: attrs.target.namespace.clone().unwrap_or_default(),
        };
        Some(labels_of(state.store.get(&key)))
    } else {
        None
    };
    Snapshot {
        hooks,
        namespace_labels,
        registry: state.registry.clone(),
    }
}

/// Runs the mutating webhooks on `object` (`None` for a delete); answers the object as
/// they left it and their warnings (Warning header values).
pub(crate) async fn mutate(
    shared: &Shared,
    attrs: &Attributes<'_>,
    object: Option<Value>,
) -> Result<(Option<Value>, Vec<String>)> {
    let snap = snapshot(shared, attrs, object.as_ref(), true);
    let mut object = object;
    let mut warnings = Vec::new();
    // How many changes the object had when each webhook was last called.
    let mut seen: Vec<Option<u32>> = vec![None; snap.hooks.len()];
    let mut changes = 0u32;
    for round in 0..2 {
        for (i, hook) in snap.hooks.iter().enumerate() {
            if round == 1 {
                let reinvoke = hook.spec["reinvocationPolicy"].as_str() == Some("IfNeeded")
                    && seen[i].is_some_and(|at| at < changes);
                if !reinvoke {
                    continue;
                }
            }
            let Some(answer) = call(shared, &snap, hook, attrs, object.as_ref(), true).await?
            else {
                continue;
            };
            seen[i] = Some(changes);
            warnings.extend(answer.warnings.iter().map(|w| warning(w)));
            let (Some(patch), Some(current)) = (answer.patch, object.as_ref()) else {
                continue;
            };
            let patched = apply_patch(current, &patch, &answer.matched, &attrs.target.rt)?;
            if &patched != current {
                object = Some(patched);
                changes += 1;
                seen[i] = Some(changes);
            }
        }
        if changes == 0 {
            break;
        }
    }
    Ok((object, warnings))
}

/// Runs the validating webhooks on `object` (`None` for a delete), concurrently; the first
/// refusal in webhook order wins. Answers their warnings.
pub(crate) async fn validate(
    shared: &Shared,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<Vec<String>> {
    let snap = snapshot(shared, attrs, object, false);
    let calls = snap
        .hooks
        .iter()
        .map(|hook| call(shared, &snap, hook, attrs, object, false));
    let mut warnings = Vec::new();
    for answer in futures::future::join_all(calls).await {
        if let Some(answer) = answer? {
            warnings.extend(answer.warnings.iter().map(|w| warning(w)));
        }
    }
    Ok(warnings)
}

/// An allowed answer.
struct Allowed {
    warnings: Vec<String>,
    patch: Option<Vec<u8>>,
    matched: ResourceType,
}

/// Calls `hook` if it matches the request: `Ok(None)` when it does not (or failed under
/// `failurePolicy: Ignore`), the denial or the failure as the request's error.
async fn call(
    shared: &Shared,
    snap: &Snapshot,
    hook: &Hook,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
    mutating: bool,
) -> Result<Option<Allowed>> {
    let rt = &attrs.target.rt;
    let subject = Subject {
        operation: attrs.operation.as_str(),
        rt,
        subresource: attrs.target.subresource.as_deref(),
    };
    let Some(matched) = matching::matched_type(&hook.spec, &subject, &snap.registry) else {
        return Ok(None);
    };
    if let Some(labels) = &snap.namespace_labels
        && !matching::selects(&hook.spec["namespaceSelector"], labels)
    {
        return Ok(None);
    }
    if !matching::object_selected(&hook.spec, object, attrs.old.as_ref()) {
        return Ok(None);
    }
    let side_effect_free = matches!(
        hook.spec["sideEffects"].as_str(),
        Some("None" | "NoneOnDryRun")
    );
    if attrs.dry_run && !side_effect_free {
        return Err(ApiError::bad_request(format!(
            "admission webhook \"{}\" does not support dry run",
            hook.name
        )));
    }
    count(shared, &hook.name, "called");
    let version = hook.spec["admissionReviewVersions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|v| config::REVIEW_VERSIONS.contains(v))
        .unwrap_or("v1")
        .to_owned();
    let uid = new_uid();
    let request = review::ReviewRequest {
        uid: &uid,
        matched: &matched,
        requested: rt,
        subresource: attrs.target.subresource.as_deref(),
        name: &attrs.name,
        namespace: attrs.target.namespace.as_deref().filter(|_| rt.namespaced),
        operation: attrs.operation.as_str(),
        user: attrs.user,
        object,
        old: attrs.old.as_ref(),
        dry_run: attrs.dry_run,
        options: &attrs.options,
    };
    let body = request.body(&version).to_string();
    let seconds = hook.spec["timeoutSeconds"]
        .as_u64()
        .unwrap_or(10)
        .clamp(1, 30);
    let outcome = match &hook.endpoint {
        Err(why) => Err(format!("failed to call webhook: {why}")),
        Ok(endpoint) => call::post(
            endpoint,
            hook.spec
                .pointer("/clientConfig/caBundle")
                .and_then(Value::as_str),
            body.as_bytes(),
            Duration::from_secs(seconds),
        )
        .await
        .map_err(|e| format!("failed to call webhook: {e}"))
        .and_then(|answer| {
            review::verify(&answer, &uid, &version, mutating)
                .map_err(|e| format!("received invalid webhook response: {e}"))
        }),
    };
    let answer = match outcome {
        Ok(answer) => answer,
        Err(reason) => {
            let error = format!("failed calling webhook \"{}\": {reason}", hook.name);
            if hook.spec["failurePolicy"].as_str() == Some("Ignore") {
                tracing::warn!(webhook = %hook.name, error = %error, "failed calling webhook, failing open");
                count(shared, &hook.name, "ignored");
                return Ok(None);
            }
            tracing::warn!(webhook = %hook.name, error = %error, "failed calling webhook, failing closed");
            count(shared, &hook.name, "failed");
            return Err(internal(error));
        }
    };
    if !answer.allowed {
        count(shared, &hook.name, "denied");
        return Err(denied(&hook.name, attrs, answer.status));
    }
    count(shared, &hook.name, "allowed");
    Ok(Some(Allowed {
        warnings: answer.warnings,
        patch: answer.patch,
        matched,
    }))
}

fn count(shared: &Shared, webhook: &str, result: &str) {
    shared
        .lock()
        .hooks
        .count(&format!("webhook:{result}"), webhook);
}

/// Applies a webhook's JSONPatch to `object` (as the matched version sees it) and names
/// the result in the request's version again; a patch that does not apply is a 500.
fn apply_patch(
    object: &Value,
    patch: &[u8],
    matched: &ResourceType,
    requested: &ResourceType,
) -> Result<Value> {
    let operations: json_patch::Patch = serde_json::from_slice(patch)
        .map_err(|e| internal(format!("cannot decode the webhook's JSONPatch: {e}")))?;
    let mut versioned = review::as_version(object, matched);
    json_patch::patch(&mut versioned, &operations)
        .map_err(|e| internal(format!("JSONPatch error: {e}")))?;
    Ok(review::as_version(&versioned, requested))
}

/// The object's resourceVersion, to see whether it changed while webhooks ran.
pub(crate) fn resource_version(object: &Value) -> Option<String> {
    meta_str(object, "resourceVersion").map(str::to_owned)
}
