//! Step 2 — the credential gate (facts §3.5, as §3.4 "Conditions"; the satellite table's "What the
//! gate needs"), on the cluster the Cinder's children live on. NFS needs nothing; RBD
//! needs the Secret `{ns}/{spec.rbd.keySecretRef.name}` carrying a cephx key under
//! [`RBD_KEY_DATA_KEY`], through the SDK's [`cephx_key_gate`].
//!
//! | Case | CredentialsReady | Pass |
//! |---|---|---|
//! | type NFS | True `CredentialsNotRequired` "the NFS export is mounted with the pod's own identity, so no credentials are required" | goes on |
//! | type RBD, no `spec.rbd` (admission bypassed) | False `WaitingForCredentials` "spec.rbd is not set; no RBD key to resolve" | ends, 15 s |
//! | the Secret with a cephx `userKey` | True `CredentialsAvailable` "RBD key Secret \"s\" carries the userKey data key" | goes on |
//! | no such Secret, no ExternalSecret `s` | False `WaitingForCredentials` "RBD key ExternalSecret ns/s not found yet" | ends, 15 s |
//! | ExternalSecret synced, yet no `userKey` | False `WaitingForCredentials` "RBD key Secret exists but is missing expected keys" | ends, 15 s |
//! | ExternalSecret not synced yet | False `WaitingForCredentials` "waiting for the RBD key Secret to carry the userKey data key" | ends, 15 s |
//! | `userKey` empty once trimmed | False `WaitingForCredentials` "Secret \"s\" carries an empty userKey" | ends, 15 s |
//! | `userKey` not base64 | False `WaitingForCredentials` "Secret \"s\" carries a userKey that is not a cephx key (base64 expected)" | ends, 15 s |
//! | a read fails (other than NotFound) | unchanged (a True one stays) | error naming the target |
//!
//! While the gate holds, the projection is not observed: the Cinder never projects a
//! target that is not credential-ready. A Secret that never appears emits no event, so
//! the pass polls (RequeueSecretPolling). DECISION: the gate follows `type`, so an NFS
//! target is ready once its Cinder resolves even if written past admission without its
//! block (the Cinder skips it, and ConfigProjected stays False).

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::secrets::{CredentialGate, GateOutcome, cephx_key_gate};

use crate::conditions::{
    self, CREDENTIALS_AVAILABLE, CREDENTIALS_NOT_REQUIRED, CREDENTIALS_READY,
    WAITING_FOR_CREDENTIALS,
};
use crate::error::Error;
use crate::types::{BackupType, CinderBackupBackend, RBD_KEY_DATA_KEY};

/// CredentialsReady's message on an NFS target.
const NOT_REQUIRED: &str =
    "the NFS export is mounted with the pod's own identity, so no credentials are required";
/// What the gate's conditions call the Secret.
const NOUN: &str = "RBD key";
/// CredentialsReady's message while ESO has not synced the ExternalSecret.
const WAITING_MESSAGE: &str = "waiting for the RBD key Secret to carry the userKey data key";
/// CredentialsReady's message on an RBD target without an rbd block.
const NO_RBD_MESSAGE: &str = "spec.rbd is not set; no RBD key to resolve";

/// Runs step 2: whether the gate passed, with CredentialsReady set either way.
pub(crate) fn run(children: &dyn Cluster, target: &mut CinderBackupBackend) -> Result<bool, Error> {
    if target.spec.type_ == BackupType::Nfs {
        conditions::set(
            target,
            CREDENTIALS_READY,
            true,
            CREDENTIALS_NOT_REQUIRED,
            NOT_REQUIRED,
        );
        return Ok(true);
    }
    let Some(rbd) = &target.spec.rbd else {
        conditions::set(
            target,
            CREDENTIALS_READY,
            false,
            WAITING_FOR_CREDENTIALS,
            NO_RBD_MESSAGE,
        );
        return Ok(false);
    };
    let secret = rbd.key_secret_ref.name.clone();
    let namespace = target.namespace().to_owned();
    let gate = CredentialGate {
        noun: NOUN,
        namespace: &namespace,
        name: &secret,
        expected_keys: &[RBD_KEY_DATA_KEY],
        waiting_message: WAITING_MESSAGE,
    };
    let outcome = cephx_key_gate(children, &gate).map_err(|source| Error::Credentials {
        target: format!("{namespace}/{}", target.name()),
        source,
    })?;
    match outcome {
        GateOutcome::Pass => {
            let message = format!("RBD key Secret {secret:?} carries the userKey data key");
            conditions::set(
                target,
                CREDENTIALS_READY,
                true,
                CREDENTIALS_AVAILABLE,
                &message,
            );
            Ok(true)
        }
        GateOutcome::Wait { message, .. } => {
            conditions::set(
                target,
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
