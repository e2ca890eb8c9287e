//! Step 2 — the S3 credentials gate (facts §3.3 "Gate"), through the SDK's shared
//! [`credential_gate`], on the cluster the Glance's children live on: the Secret
//! `{ns}/{spec.s3.credentialsSecretRef.name}` with both data keys
//! [`S3_ACCESS_KEY_ID_KEY`] and [`S3_SECRET_ACCESS_KEY_KEY`].
//!
//! | Case | CredentialsReady | Pass |
//! |---|---|---|
//! | no `spec.s3` (admission bypassed) | False `WaitingForCredentials` "spec.s3 is not set; no S3 credentials to resolve" | ends, 15 s |
//! | the Secret with both keys | True `CredentialsAvailable` "S3 credentials Secret \"s\" carries the required keys" | goes on |
//! | no such Secret, no ExternalSecret `s` | False `WaitingForCredentials` "S3 credentials ExternalSecret ns/s not found yet" | ends, 15 s |
//! | ExternalSecret synced, yet the Secret lacks a key | False `WaitingForCredentials` "S3 credentials Secret exists but is missing expected keys" | ends, 15 s |
//! | ExternalSecret not synced yet | False `WaitingForCredentials` "waiting for the S3 credentials Secret to carry the required keys" | ends, 15 s |
//! | a read fails (other than NotFound) | unchanged (a True one stays) | error naming the backend |
//!
//! While the gate holds, the projection is not observed: the Glance never projects a
//! backend that is not credential-ready. A Secret that never appears emits no event, so
//! the pass polls (RequeueSecretPolling).

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::secrets::{CredentialGate, GateOutcome, credential_gate};

use crate::conditions::{self, CREDENTIALS_AVAILABLE, CREDENTIALS_READY, WAITING_FOR_CREDENTIALS};
use crate::error::Error;
use crate::types::{GlanceBackend, S3_ACCESS_KEY_ID_KEY, S3_SECRET_ACCESS_KEY_KEY};

/// What the gate's conditions call the Secret.
const NOUN: &str = "S3 credentials";
/// CredentialsReady's message while ESO has not synced the ExternalSecret.
const WAITING_MESSAGE: &str = "waiting for the S3 credentials Secret to carry the required keys";
/// CredentialsReady's message without an s3 block.
const NO_S3_MESSAGE: &str = "spec.s3 is not set; no S3 credentials to resolve";
/// The data keys the Secret must hold.
const EXPECTED_KEYS: [&str; 2] = [S3_ACCESS_KEY_ID_KEY, S3_SECRET_ACCESS_KEY_KEY];

/// Runs step 2: whether the gate passed, with CredentialsReady set either way.
pub(crate) fn run(children: &dyn Cluster, backend: &mut GlanceBackend) -> Result<bool, Error> {
    let Some(s3) = &backend.spec.s3 else {
        conditions::set(
            backend,
            CREDENTIALS_READY,
            false,
            WAITING_FOR_CREDENTIALS,
            NO_S3_MESSAGE,
        );
        return Ok(false);
    };
    let secret = s3.credentials_secret_ref.name.clone();
    let namespace = backend.namespace().to_owned();
    let gate = CredentialGate {
        noun: NOUN,
        namespace: &namespace,
        name: &secret,
        expected_keys: &EXPECTED_KEYS,
        waiting_message: WAITING_MESSAGE,
    };
    let outcome = credential_gate(children, &gate).map_err(|source| Error::Credentials {
        backend: format!("{namespace}/{}", backend.name()),
        source,
    })?;
    match outcome {
        GateOutcome::Pass => {
            let message = format!("S3 credentials Secret {secret:?} carries the required keys");
            conditions::set(
                backend,
                CREDENTIALS_READY,
                true,
                CREDENTIALS_AVAILABLE,
                &message,
            );
            Ok(true)
        }
        GateOutcome::Wait { message, .. } => {
            conditions::set(
                backend,
                CREDENTIALS_READY,
                false,
                WAITING_FOR_CREDENTIALS,
                &message,
            );
            Ok(false)
        }
    }
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
