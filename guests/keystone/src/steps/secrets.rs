//! Step 1 — Secrets (facts §2.3): the secret store and the credentials the Keystone needs
//! before anything is built.
//!
//! | Gate | Not ready → SecretsReady False |
//! |---|---|
//! | the store `spec.secretStoreRef` selects (ClusterSecretStore `openbao-cluster-store` by default) | `SecretStoreNotReady` |
//! | Secret `spec.database.secretRef.name` with `username` and `password` | `WaitingForDBCredentials` |
//! | Secret `spec.bootstrap.adminPasswordSecretRef.name` with `password` | `WaitingForAdminCredentials` |
//!
//! A gate that holds requeues after 15 s; all passed → SecretsReady True `SecretsAvailable`.

use wasm_operator_sdk::blocks::conditions::set_condition;
use wasm_operator_sdk::blocks::secrets::credentials::{CredentialGate, credential_gate};
use wasm_operator_sdk::blocks::secrets::gate_store_ready;

use crate::conditions::SECRETS_READY;
use crate::error::Error;
use crate::pass::{Pass, SECRET_POLLING, StepResult};

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let namespace = pass.namespace().to_owned();
    let generation = pass.keystone.metadata.generation.unwrap_or_default();
    let store = pass
        .keystone
        .spec
        .secret_store_ref
        .clone()
        .unwrap_or_default();
    let cluster = pass.cluster;
    let status = pass.status_mut();
    let ready = gate_store_ready(
        cluster,
        &store,
        &namespace,
        false,
        &mut status.conditions,
        generation,
        SECRETS_READY,
    )
    .map_err(|source| Error::Secrets {
        what: "checking the secret store".into(),
        source,
    })?;
    if !ready {
        return Ok(Some(SECRET_POLLING));
    }
    let spec = &pass.keystone.spec;
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
                noun: "Admin credentials",
                namespace: &namespace,
                name: &spec.bootstrap.admin_password_secret_ref.name,
                expected_keys: &["password"],
                waiting_message: "Waiting for ESO to sync admin credentials from OpenBao",
            },
            "WaitingForAdminCredentials",
        ),
    ];
    for (gate, reason) in gates {
        let outcome = credential_gate(cluster, &gate).map_err(|source| Error::Secrets {
            what: format!("checking Secret {namespace}/{}", gate.name),
            source,
        })?;
        if let Some(condition) = outcome.condition(SECRETS_READY, reason, generation) {
            let condition = condition.clone();
            let status = pass.keystone.status.get_or_insert_with(Default::default);
            set_condition(&mut status.conditions, &condition);
            return Ok(Some(SECRET_POLLING));
        }
    }
    pass.condition(SECRETS_READY, true, "SecretsAvailable", "");
    Ok(None)
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
