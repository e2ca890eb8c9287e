//! DBConnectionSecret (facts §4): the SDK's [`connection`] block — the Secret
//! `{name}-db-connection` the pods and the db-sync Job read `OS_DATABASE__CONNECTION`
//! from. Waiting for the credentials sets SecretsReady False `WaitingForDBCredentials` and
//! requeues after 15 s; the connection's SHA-256 goes to [`Pass::db_connection_hash`].

use wasm_operator_sdk::blocks::service::connection;

use crate::conditions::SECRETS_READY;
use crate::pass::{Pass, SECRET_POLLING, StepResult};

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    match connection::ensure(&pass.service())? {
        Ok(hash) => {
            pass.db_connection_hash = hash;
            Ok(None)
        }
        Err(waiting) => {
            pass.waiting(SECRETS_READY, &waiting);
            Ok(Some(SECRET_POLLING))
        }
    }
}
