//! Credential gates (facts §2.3 item 2): whether the Secret a step needs holds its
//! credentials, and if not, what the step's condition says while it waits.
//!
//! A Secret that exists with every expected key passes the gate. Otherwise the
//! ExternalSecret of the same name tells why it does not yet: not found ("<Noun>
//! ExternalSecret <ns>/<name> not found yet"), synced by ESO although the Secret lacks a
//! key ("<Noun> Secret exists but is missing expected keys"), or not synced yet (the
//! step's waiting text). [`credential_gate`] reads the cluster; [`waiting_outcome`] is the
//! decision for a Secret that is not ready, tested without one.

use super::Error;
use super::external::{ExternalSecretState, wait_for_external_secret};
use super::secret::is_secret_ready;
use crate::blocks::conditions::{FALSE, NewCondition};
use crate::cluster::Cluster;

/// One credential gate: the Secret, the keys it must hold, and the words of its
/// condition.
#[derive(Debug, Clone, Copy)]
pub struct CredentialGate<'a> {
    /// What the Secret holds, capitalised: `Database credentials`, `Admin credentials`.
    pub noun: &'a str,
    pub namespace: &'a str,
    /// The Secret's name, which is also its ExternalSecret's.
    pub name: &'a str,
    /// The data keys the Secret must hold (none: existence only).
    pub expected_keys: &'a [&'a str],
    /// The message while ESO has not synced the ExternalSecret, e.g. `Waiting for ESO to
    /// sync database credentials from OpenBao`.
    pub waiting_message: &'a str,
}

/// Why a gate holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// Neither the Secret with its keys nor its ExternalSecret exists.
    ExternalSecretNotFound,
    /// ESO reports the ExternalSecret synced, yet the Secret lacks an expected key.
    MissingExpectedKeys,
    /// The ExternalSecret exists and ESO has not synced it.
    NotSynced,
    /// The Secret carries every key, and a check of a value refused it
    /// ([`cephx_key_gate`](super::cephx::cephx_key_gate)).
    Refused,
}

/// What a credential gate found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateOutcome {
    /// The Secret exists with every expected key.
    Pass,
    /// The gate holds; `message` is the text of the step's False condition.
    Wait { why: Waiting, message: String },
}

impl GateOutcome {
    /// Whether the gate passed.
    pub fn passed(&self) -> bool {
        matches!(self, Self::Pass)
    }

    /// The False condition of `condition_type` under `reason` a step sets while the gate
    /// holds (e.g. `SecretsReady`, `WaitingForDBCredentials`); `None` when it passed.
    pub fn condition<'s>(
        &'s self,
        condition_type: &'s str,
        reason: &'s str,
        observed_generation: i64,
    ) -> Option<NewCondition<'s>> {
        match self {
            Self::Pass => None,
            Self::Wait { message, .. } => Some(NewCondition {
                type_: condition_type,
                status: FALSE,
                reason,
                message,
                observed_generation,
            }),
        }
    }
}

/// The outcome of `gate` for a Secret that is missing or lacks a key, given where its
/// ExternalSecret stands.
pub fn waiting_outcome(gate: &CredentialGate<'_>, external: ExternalSecretState) -> GateOutcome {
    let (why, message) = match external {
        ExternalSecretState::NotFound => (
            Waiting::ExternalSecretNotFound,
            format!(
                "{} ExternalSecret {}/{} not found yet",
                gate.noun, gate.namespace, gate.name
            ),
        ),
        ExternalSecretState::Ready => (
            Waiting::MissingExpectedKeys,
            format!("{} Secret exists but is missing expected keys", gate.noun),
        ),
        ExternalSecretState::NotSynced => (Waiting::NotSynced, gate.waiting_message.to_owned()),
    };
    GateOutcome::Wait { why, message }
}

/// Runs `gate`: [`GateOutcome::Pass`] when the Secret exists with every expected key;
/// otherwise reads its ExternalSecret and says why the gate holds. A failed read (other
/// than NotFound) is an error naming the object.
pub fn credential_gate<C: Cluster + ?Sized>(
    cluster: &C,
    gate: &CredentialGate<'_>,
) -> Result<GateOutcome, Error> {
    if is_secret_ready(cluster, gate.namespace, gate.name, gate.expected_keys)? {
        return Ok(GateOutcome::Pass);
    }
    let external = wait_for_external_secret(cluster, gate.namespace, gate.name)?;
    Ok(waiting_outcome(gate, external))
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
