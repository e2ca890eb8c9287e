//! Ceph keys held in Secrets (facts §3.4, §3.5: the RBD key gate both Cinder satellites
//! and the Cinder's render share): the credential gate, then the key's shape, since a
//! present but empty or malformed key would be copied into a keyring and fail every
//! connection the driver opens.
//!
//! | The Secret's key (trimmed) | [`cephx_key_fault`] | message |
//! |---|---|---|
//! | empty, or whitespace only | [`CephxFault::Empty`] | `Secret "<name>" carries an empty <key>` |
//! | not standard padded base64 (a space, a newline, `key = …`, not UTF-8) | [`CephxFault::NotBase64`] | `Secret "<name>" carries a <key> that is not a cephx key (base64 expected)` |
//! | base64, as `ceph auth get-key` prints it | `None` | — |
//!
//! The messages never repeat the value.

use super::Error;
use super::credentials::{CredentialGate, GateOutcome, Waiting, credential_gate};
use super::secret::get_secret_value;
use crate::cluster::Cluster;

/// Why a value is not a usable cephx key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CephxFault {
    /// Nothing left once trimmed.
    Empty,
    /// Not the standard, padded base64 a cephx key is printed as.
    NotBase64,
}

impl CephxFault {
    /// The text of a gate condition naming the Secret `secret` and its data key
    /// `data_key`.
    pub fn message(self, secret: &str, data_key: &str) -> String {
        match self {
            Self::Empty => format!("Secret {secret:?} carries an empty {data_key}"),
            Self::NotBase64 => format!(
                "Secret {secret:?} carries a {data_key} that is not a cephx key (base64 expected)"
            ),
        }
    }
}

/// Whether `value`, trimmed of surrounding whitespace, is a cephx key; the fault if not.
pub fn cephx_key_fault(value: &str) -> Option<CephxFault> {
    let key = value.trim();
    if key.is_empty() {
        return Some(CephxFault::Empty);
    }
    (!is_padded_base64(key)).then_some(CephxFault::NotBase64)
}

/// Standard alphabet, a multiple of four characters, `=` only as the last one or two.
fn is_padded_base64(text: &str) -> bool {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let body = text.trim_end_matches('=');
    let padding = bytes.len() - body.len();
    padding <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// Runs `gate` — whose first expected key holds the cephx key — then checks the key's
/// shape: [`GateOutcome::Pass`] only for a Secret with every key and a usable cephx key;
/// a refused key is [`Waiting::Refused`] with the [`CephxFault`] message. A key that is
/// not UTF-8 is not base64. A failed read (other than NotFound before the gate passed) is
/// an error naming the object.
pub fn cephx_key_gate<C: Cluster + ?Sized>(
    cluster: &C,
    gate: &CredentialGate<'_>,
) -> Result<GateOutcome, Error> {
    let outcome = credential_gate(cluster, gate)?;
    let Some(data_key) = gate.expected_keys.first().filter(|_| outcome.passed()) else {
        return Ok(outcome);
    };
    let fault = match get_secret_value(cluster, gate.namespace, gate.name, data_key) {
        Ok(value) => cephx_key_fault(&value),
        Err(Error::NotText { .. }) => Some(CephxFault::NotBase64),
        Err(error) => return Err(error),
    };
    Ok(match fault {
        None => GateOutcome::Pass,
        Some(fault) => GateOutcome::Wait {
            why: Waiting::Refused,
            message: fault.message(gate.name, data_key),
        },
    })
}

#[cfg(test)]
#[path = "cephx_tests.rs"]
mod tests;
