//! One review answered by a plugin: which call it needs, the call, and the answer.

use std::time::Duration;

use serde_json::Value;
use wasm_operator_runtime::PassError;
use wasm_operator_types::admission::{FailurePolicy, Phase};

use super::review::{Answer, Review};
use crate::controller::Controller;

/// The JSON pointers a plugin's defaulting may not change: the object's identity, what the
/// API server owns, and status (written through its own subresource).
const FIXED: &[&str] = &[
    "/apiVersion",
    "/kind",
    "/metadata/name",
    "/metadata/generateName",
    "/metadata/namespace",
    "/metadata/uid",
    "/metadata/resourceVersion",
    "/metadata/generation",
    "/metadata/creationTimestamp",
    "/metadata/deletionTimestamp",
    "/metadata/deletionGracePeriodSeconds",
    "/metadata/managedFields",
    "/metadata/ownerReferences",
    "/status",
];

/// What happened, for the metrics: `allowed`, `defaulted`, `denied`, `skipped` (not a
/// write the plugin admits), `failed` or `ignored` (failed under `Ignore`).
pub(crate) type Outcome = &'static str;

/// Answers `review` with `controller`'s current plugin for `phase`, the plugin given at
/// most `budget` for its call.
pub(crate) async fn answer(
    controller: &Controller,
    phase: Phase,
    review: &Review,
    budget: Duration,
) -> (Answer, Outcome) {
    let allowed = || Answer::Allowed {
        patch: None,
        warnings: Vec::new(),
    };
    let plugin = controller.plugin();
    let Some(admitted) = plugin.admitted().iter().find(|a| review.is_of(&a.kind)) else {
        return (
            Answer::Failed {
                message: format!(
                    "plugin {} does not admit {} {}",
                    plugin.name(),
                    review.api_version(),
                    review.kind
                ),
            },
            "failed",
        );
    };
    let Some(operation) = review.operation else {
        return (allowed(), "skipped");
    };
    if !review.sub_resource.is_empty() || !admitted.operations(phase).contains(&operation) {
        return (allowed(), "skipped");
    }
    let request = review.request(&admitted.kind, operation);
    let runtime = controller.runtime();
    let failed = |error: String| match admitted.failure_policy {
        FailurePolicy::Fail => (
            Answer::Failed {
                message: format!("plugin {} failed in admission: {error}", plugin.name()),
            },
            "failed",
        ),
        FailurePolicy::Ignore => (allowed(), "ignored"),
    };
    let log_failure = |error: &PassError| {
        tracing::warn!(plugin = plugin.name(), phase = phase.as_str(), %error, "admission failed");
    };
    match phase {
        Phase::Default => {
            match plugin
                .default_write(runtime, controller.cluster(), &request, budget)
                .await
            {
                Err(error) => {
                    log_failure(&error);
                    failed(error.to_string())
                }
                Ok(Err(denial)) => (
                    Answer::Denied {
                        denial,
                        warnings: Vec::new(),
                    },
                    "denied",
                ),
                Ok(Ok(defaulted)) => {
                    let original = request.object.clone().unwrap_or(Value::Null);
                    let patch = json_patch::diff(&original, &defaulted.object);
                    if let Some(path) = fixed_path(&patch) {
                        tracing::warn!(
                            plugin = plugin.name(),
                            path,
                            "defaulting changed a fixed field"
                        );
                        return failed(format!(
                            "its defaulting changed {path}, which admission may not change"
                        ));
                    }
                    let changed = !patch.0.is_empty();
                    (
                        Answer::Allowed {
                            patch: changed.then_some(patch),
                            warnings: defaulted.warnings,
                        },
                        if changed { "defaulted" } else { "allowed" },
                    )
                }
            }
        }
        Phase::Validate => {
            match plugin
                .validate_write(runtime, controller.cluster(), &request, budget)
                .await
            {
                Err(error) => {
                    log_failure(&error);
                    failed(error.to_string())
                }
                Ok(validated) => match validated.denial {
                    Some(denial) => (
                        Answer::Denied {
                            denial,
                            warnings: validated.warnings,
                        },
                        "denied",
                    ),
                    None => (
                        Answer::Allowed {
                            patch: None,
                            warnings: validated.warnings,
                        },
                        "allowed",
                    ),
                },
            }
        }
    }
}

/// The first path of `patch` at or under a [`FIXED`] pointer.
fn fixed_path(patch: &json_patch::Patch) -> Option<String> {
    patch.0.iter().find_map(|op| {
        let path = match op {
            json_patch::PatchOperation::Add(o) => o.path.to_string(),
            json_patch::PatchOperation::Remove(o) => o.path.to_string(),
            json_patch::PatchOperation::Replace(o) => o.path.to_string(),
            json_patch::PatchOperation::Move(o) => o.path.to_string(),
            json_patch::PatchOperation::Copy(o) => o.path.to_string(),
            json_patch::PatchOperation::Test(o) => o.path.to_string(),
        };
        let fixed = FIXED.iter().any(|f| {
            path == *f
                || path.starts_with(&format!("{f}/"))
                || f.starts_with(&format!("{path}/"))
                || path.is_empty()
        });
        fixed.then_some(path)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::fixed_path;

    #[test]
    fn defaulting_may_change_spec_and_labels_but_not_identity_owners_or_status() {
        let base = json!({"apiVersion": "v1", "kind": "X",
            "metadata": {"name": "a", "labels": {"l": "1"}}, "spec": {}, "status": {}});
        let cases = [
            (json!({"spec": {"size": 3}}), None),
            (json!({"metadata": {"labels": {"l": "2"}}}), None),
            (json!({"metadata": {"name": "b"}}), Some("/metadata/name")),
            (
                json!({"metadata": {"ownerReferences": [{"uid": "x"}]}}),
                Some("/metadata/ownerReferences"),
            ),
            (json!({"status": {"ready": true}}), Some("/status/ready")),
            (json!({"kind": "Y"}), Some("/kind")),
        ];
        for (change, expected) in cases {
            let mut changed = base.clone();
            json_patch::merge(&mut changed, &change);
            let patch = json_patch::diff(&base, &changed);
            assert_eq!(fixed_path(&patch).as_deref(), expected, "{change}");
        }
    }
}
