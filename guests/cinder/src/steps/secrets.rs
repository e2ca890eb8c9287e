//! Secrets (facts §4): the credentials the Cinder needs before anything is built, through
//! the shared credential gate (facts §3.1).
//!
//! | Gate | Not ready → SecretsReady False |
//! |---|---|
//! | Secret `spec.database.secretRef.name` with `username` and `password` | `WaitingForDBCredentials` |
//! | Secret `spec.serviceUser.secretRef.name` with its key (`password` by default) | `WaitingForServiceUserCredentials` |
//!
//! A gate that holds requeues after 15 s; both passed → SecretsReady True
//! `SecretsAvailable`.
//!
//! DECISION: the secret-store gate of the full Cinder (facts §2.3's `SecretStoreNotReady`)
//! is not part of this minimal parent: it would need the cluster-scoped store kinds.

use wasm_operator_sdk::blocks::conditions::set_condition;
use wasm_operator_sdk::blocks::secrets::credentials::{CredentialGate, credential_gate};

use crate::conditions::SECRETS_READY;
use crate::error::Error;
use crate::pass::{Pass, SECRET_POLLING, StepResult};

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let namespace = pass.namespace().to_owned();
    let generation = pass.cinder.metadata.generation.unwrap_or_default();
    let spec = pass.cinder.spec.clone();
    let service_key = [spec.service_user.password_key()];
    let gates = [
        (
            CredentialGate {
                noun: "Database credentials",
                namespace: &namespace,
                name: &spec.database.secret_ref.name,
                expected_keys: &["username", "password"],
                waiting_message: "Waiting for ESO to sync database credentials from OpenBao",
            },
            "WaitingForDBCredentials",
        ),
        (
            CredentialGate {
                noun: "Service-user credentials",
                namespace: &namespace,
                name: &spec.service_user.secret_ref.name,
                expected_keys: &service_key,
                waiting_message: "Waiting for ESO to sync the Cinder service-user password from OpenBao",
            },
            "WaitingForServiceUserCredentials",
        ),
    ];
    for (gate, reason) in gates {
        let outcome = credential_gate(pass.cluster, &gate).map_err(|source| Error::Secrets {
            what: format!("checking Secret {namespace}/{}", gate.name),
            source,
        })?;
        if let Some(condition) = outcome.condition(SECRETS_READY, reason, generation) {
            let condition = condition.clone();
            set_condition(&mut pass.status_mut().conditions, &condition);
            return Ok(Some(SECRET_POLLING));
        }
    }
    pass.condition(SECRETS_READY, true, "SecretsAvailable", "");
    Ok(None)
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
