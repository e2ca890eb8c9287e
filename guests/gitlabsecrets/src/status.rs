//! Step `status`: status.secrets and the Ready condition.
//!
//! status.secrets holds name, ready and readyUnits for each Secret of spec.secrets, then for
//! the CA, TLS and chain Secrets of each certificate set. The Ready condition carries the
//! pass's metadata.generation:
//!
//! | Status | Reason            | When |
//! |--------|-------------------|------|
//! | True   | SecretsReady      | every Secret holds what it declares |
//! | False  | SecretsReported   | the planner reported a unit or a Secret; the message names each |
//! | False  | SecretsNotWritten | a Secret could not be read, planned or written; the message names it and the error, then the reports |
//!
//! Messages are cut to [`MAX_MESSAGE_BYTES`] on a character boundary. A status that would
//! not change is not written, once the cached GitLabSecrets is found current; a status
//! update that conflicts requeues.

use k8s_openapi::jiff::Timestamp;
use wasm_operator_sdk::ApiError;

use crate::error::{Error, Result};
use crate::freshness;
use crate::pass::{Pass, SecretResult};
use crate::reconcile::Flow;
use crate::types::{
    Condition, ConditionStatus, GitLabSecretsStatus, MAX_READY_UNITS, SecretStatus,
};

/// The condition type.
pub const READY: &str = "Ready";
/// The longest Ready message, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// The reason of the Ready condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    SecretsReady,
    SecretsReported,
    SecretsNotWritten,
}

impl Reason {
    /// The reason as the condition spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SecretsReady => "SecretsReady",
            Self::SecretsReported => "SecretsReported",
            Self::SecretsNotWritten => "SecretsNotWritten",
        }
    }
}

/// The reason and message for what a pass found.
pub fn ready_reason(results: &[SecretResult]) -> (Reason, String) {
    let failures: Vec<String> = results
        .iter()
        .filter_map(|r| r.failure.as_ref().map(Error::to_string))
        .collect();
    let reports: Vec<&str> = results
        .iter()
        .flat_map(|r| r.reports.iter().map(String::as_str))
        .collect();
    let (reason, lines): (Reason, Vec<&str>) = if !failures.is_empty() {
        let mut lines: Vec<&str> = failures.iter().map(String::as_str).collect();
        lines.extend(&reports);
        (Reason::SecretsNotWritten, lines)
    } else if !reports.is_empty() {
        (Reason::SecretsReported, reports)
    } else if results.iter().any(|r| !r.ready) {
        // The planner reports every Secret it leaves not ready; should one come without a
        // report, it is still named.
        let lines = results
            .iter()
            .filter(|r| !r.ready)
            .map(|r| format!("Secret {}: not ready", r.name))
            .collect::<Vec<_>>()
            .join("\n");
        return (Reason::SecretsReported, cap(&lines));
    } else {
        return (
            Reason::SecretsReady,
            format!("{} Secrets hold what they declare", results.len()),
        );
    };
    (reason, cap(&lines.join("\n")))
}

/// `message` cut to at most [`MAX_MESSAGE_BYTES`], on a character boundary.
pub fn cap(message: &str) -> String {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message.to_owned();
    }
    let mut end = MAX_MESSAGE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message[..end].to_owned()
}

/// The status a pass found.
pub fn status_of(pass: &Pass<'_>, now: Timestamp) -> GitLabSecretsStatus {
    let (reason, message) = ready_reason(&pass.results);
    let old = pass.primary.status.clone().unwrap_or_default();
    let status = if reason == Reason::SecretsReady {
        ConditionStatus::True
    } else {
        ConditionStatus::False
    };
    let previous = old.conditions.iter().find(|c| c.condition_type == READY);
    let last_transition_time = match previous {
        Some(c) if c.status == status => c.last_transition_time.clone(),
        _ => now.to_string(),
    };
    let ready = Condition {
        condition_type: READY.into(),
        status,
        observed_generation: pass.primary.metadata.generation,
        last_transition_time,
        reason: reason.as_str().into(),
        message,
    };
    let mut conditions: Vec<Condition> = old
        .conditions
        .into_iter()
        .filter(|c| c.condition_type != READY)
        .collect();
    conditions.push(ready);
    GitLabSecretsStatus {
        conditions,
        secrets: pass
            .results
            .iter()
            .map(|r| SecretStatus {
                name: r.name.clone(),
                ready: r.ready,
                ready_units: r
                    .ready_units
                    .iter()
                    .take(MAX_READY_UNITS)
                    .cloned()
                    .collect(),
            })
            .collect(),
    }
}

/// The wall clock, to the second (as metav1.Time is).
fn now() -> Timestamp {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    Timestamp::new(seconds, 0).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Runs the step.
pub fn run(pass: &mut Pass<'_>) -> Result<Flow> {
    let status = status_of(pass, now());
    if pass.primary.status.as_ref() == Some(&status) {
        return Ok(if freshness::primary_is_current(pass)? {
            Flow::Continue
        } else {
            Flow::Requeue
        });
    }
    let mut object = pass.primary.clone();
    object.status = Some(status);
    let mut body = serde_json::to_value(&object).map_err(|e| Error::DecodePrimary {
        object: pass.key(),
        message: e.to_string(),
    })?;
    if let serde_json::Value::Object(map) = &mut body {
        map.insert("apiVersion".into(), "apps.gitlab.com/v2alpha1".into());
        map.insert("kind".into(), "GitLabSecrets".into());
    }
    match pass.cluster.update_status(&body) {
        Ok(_) => Ok(Flow::Continue),
        Err(ApiError::Conflict(_)) => Ok(Flow::Requeue),
        Err(source) => Err(Error::UpdateStatus {
            object: pass.key(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_cut_at_4096_bytes_on_a_character_boundary() {
        let message = "é".repeat(3000); // 6000 bytes, 2 per character
        let capped = cap(&message);
        assert_eq!(capped.len(), 4096);
        let odd = format!("a{}", "é".repeat(3000));
        let capped = cap(&odd);
        assert_eq!(capped.len(), 4095);
        assert!(capped.is_char_boundary(capped.len()));
        assert_eq!(cap("short"), "short");
    }
}
