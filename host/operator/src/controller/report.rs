//! How a pass the guest could not finish is reported on its primary object.
//!
//! A deadline, a memory cap, fuel, a panic or any other trap fails that pass only; the host
//! records a `PassFailed` Warning event on the primary and sets the condition
//! `Reconciled=False` on its status, with a reason naming the cause and a message naming the
//! plugin, the limit and its value. The next successful pass sets `Reconciled=True` — only
//! when the condition is there, so a healthy object costs no extra write.
//!
//! The status is written read-modify-write with the resourceVersion read, so no other field
//! or condition is lost; a conflict or a kind without a status subresource skips the
//! condition (the event still tells). A built-in kind that has none (a ConfigMap) is not
//! even asked: the RBAC the host generates grants no `<plural>/status` for it.
//!
//! A pass the reconciler itself ends with an error (a call the cluster refused, a step that
//! failed; not a conflict, which is retried at once) gets the `PassFailed` Warning event
//! ([`reconcile_error`]): the reconciler owns its conditions, and the event names the
//! cause where `kubectl describe` shows it. The recorder aggregates repeats into a series.
//! Only when the primary still carries this host's `Reconciled=False` is that condition
//! rewritten to `ReconcileFailed`, so it never names an earlier cause (a deadline) that no
//! longer holds.

use serde_json::{Value, json};
use wasm_operator_types::{ApiError, Event, EventType, KindRef, ReadFrom, Request};

use wasm_operator_runtime::PassError;

use crate::operator::status_subresource::may_have_status;
use wasm_operator_runtime::backend::{Caller, ClusterBackend};

/// The condition type the host sets.
pub(crate) const CONDITION: &str = "Reconciled";

fn host() -> Caller {
    Caller::host()
}

/// Records the `PassFailed` event of a pass `plugin` ended with `error` on the primary, and
/// the condition too when the primary carries this host's `Reconciled=False` (`carried`,
/// see [`carries_failure`]).
pub(crate) async fn reconcile_error(
    server: &dyn ClusterBackend,
    plugin: &Caller,
    kind: &KindRef,
    request: &Request,
    error: &PassError,
    carried: bool,
) {
    record_pass_failed(server, plugin, kind, request, error).await;
    if carried {
        set_condition(
            server,
            kind,
            request,
            "False",
            error.reason(),
            &error.to_string(),
        )
        .await;
    }
}

async fn record_pass_failed(
    server: &dyn ClusterBackend,
    plugin: &Caller,
    kind: &KindRef,
    request: &Request,
    error: &PassError,
) {
    let event = Event {
        event_type: EventType::Warning,
        reason: "PassFailed".into(),
        action: "Reconcile".into(),
        note: error.to_string(),
    };
    if let Err(e) = server
        .record_event(plugin, &request.object(kind), &event)
        .await
    {
        tracing::warn!(plugin = plugin.plugin, error = %e, "cannot record the PassFailed event");
    }
}

/// Records the event and the condition of a failed pass of `plugin` on the primary.
pub(crate) async fn failure(
    server: &dyn ClusterBackend,
    plugin: &Caller,
    kind: &KindRef,
    request: &Request,
    error: &PassError,
) {
    reconcile_error(server, plugin, kind, request, error, true).await;
}

/// Whether the primary carries this host's `Reconciled=False`: this host reported the
/// previous pass as failed (`reported`), or the primary as cached in `cached` carries it (a
/// failure reported before a restart).
pub(crate) fn carries_failure(reported: bool, cached: Option<&Value>) -> bool {
    reported
        || cached
            .and_then(|o| o.pointer("/status/conditions"))
            .and_then(Value::as_array)
            .is_some_and(|conditions| {
                conditions
                    .iter()
                    .any(|c| c["type"] == CONDITION && c["status"] == "False")
            })
}

/// Sets `Reconciled=True` after a successful pass when the primary carries this host's
/// `Reconciled=False` (`carried`, see [`carries_failure`]).
pub(crate) async fn success(
    server: &dyn ClusterBackend,
    carried: bool,
    kind: &KindRef,
    request: &Request,
) {
    if carried {
        set_condition(
            server,
            kind,
            request,
            "True",
            "PassSucceeded",
            "the last pass succeeded",
        )
        .await;
    }
}

async fn set_condition(
    server: &dyn ClusterBackend,
    kind: &KindRef,
    request: &Request,
    status: &str,
    reason: &str,
    message: &str,
) {
    if !may_have_status(kind) {
        return;
    }
    let regarding = &request.object(kind);
    let result = async {
        let Some(mut object) = server.get(regarding, ReadFrom::Server).await? else {
            return Ok(());
        };
        let condition = json!({
            "type": CONDITION,
            "status": status,
            "reason": reason,
            "message": wasm_operator_runtime::text::escape(message, 32 * 1024),
            "observedGeneration": object.pointer("/metadata/generation").cloned().unwrap_or(json!(0)),
            "lastTransitionTime": now(),
        });
        let Some(map) = object.as_object_mut() else {
            return Ok(());
        };
        let status_field = map.entry("status").or_insert_with(|| json!({}));
        if !status_field.is_object() {
            *status_field = json!({});
        }
        let conditions = status_field
            .as_object_mut()
            .map(|s| s.entry("conditions").or_insert_with(|| json!([])));
        if let Some(Value::Array(list)) = conditions {
            match list.iter_mut().find(|c| c["type"] == CONDITION) {
                Some(existing) if existing["status"] == status && existing["reason"] == reason => {
                    existing["message"] = condition["message"].clone();
                    existing["observedGeneration"] = condition["observedGeneration"].clone();
                }
                Some(existing) => *existing = condition,
                None => list.push(condition),
            }
        }
        server.update_status(&host(), object).await.map(|_| ())
    }
    .await;
    match result {
        Ok(()) => {}
        Err(ApiError::NotFound(_)) => {
            tracing::debug!(object = %regarding.key(), "no status subresource: condition skipped")
        }
        Err(error) => {
            tracing::warn!(object = %regarding.key(), %error, "cannot set the Reconciled condition")
        }
    }
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
