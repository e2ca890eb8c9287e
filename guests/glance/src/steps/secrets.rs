//! Secrets (facts §4): the database and service-user credentials gate of the SDK's
//! [`credentials`] block, on SecretsReady: a gate that holds sets its reason and requeues
//! after 15 s; both passed → SecretsReady True `SecretsAvailable`.
//!
//! DECISION: the secret-store gate of the full Glance (`SecretStoreNotReady`) is not part
//! of this minimal parent: it would need the cluster-scoped store kinds.

use wasm_operator_sdk::blocks::service::credentials;

use crate::conditions::SECRETS_READY;
use crate::pass::{Pass, SECRET_POLLING, StepResult};

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let holding = credentials::gate(&pass.service())?;
    if let Some(waiting) = holding {
        pass.waiting(SECRETS_READY, &waiting);
        return Ok(Some(SECRET_POLLING));
    }
    pass.condition(SECRETS_READY, true, "SecretsAvailable", "");
    Ok(None)
}
