//! Steps 6a and 6b and the rotation CronJob's script, reachable from the crate's tests
//! against the real Keystone (`tests/real_keystone.rs`). Not an interface: the host runs the
//! steps only as part of a pass.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use wasm_operator_sdk::{Cluster, Owner};

use crate::error::Error;
use crate::pass::Pass;
use crate::steps::keys::{self, CREDENTIAL, FERNET, KeyKind};
use crate::types::Keystone;

/// Which key repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// The fernet token keys (step 6a).
    Fernet,
    /// The credential encryption keys (step 6b).
    Credential,
}

impl Keys {
    fn kind(self) -> &'static KeyKind {
        match self {
            Keys::Fernet => &FERNET,
            Keys::Credential => &CREDENTIAL,
        }
    }
}

/// What one run of a key step left.
#[derive(Debug, Clone)]
pub struct KeyStep {
    /// `Some` when the step ended the pass and asks to run again after that long.
    pub requeue: Option<Duration>,
    /// The step's condition (`FernetKeysReady` / `CredentialKeysReady`).
    pub condition: Condition,
}

/// Runs the key step of `keys` once over `keystone` on `cluster`, as a pass does after the
/// Config step rendered the ConfigMap `config_map`.
///
/// # Errors
///
/// The step's error; [`Error::Spec`] when `keystone` has no name or uid to own children by.
pub fn run_key_step(
    cluster: &dyn Cluster,
    keystone: &Keystone,
    config_map: &str,
    keys: Keys,
) -> Result<KeyStep, Error> {
    let owner = Owner::of(keystone)
        .map_err(|e| Error::Spec(format!("the Keystone cannot own its key Secrets: {e}")))?;
    let mut pass = Pass::new(cluster, keystone.clone(), owner);
    pass.config_map_name = Some(config_map.to_owned());
    let kind = keys.kind();
    let requeue = keys::run(&mut pass, kind)?;
    let condition = pass
        .conditions_of(kind.condition)
        .cloned()
        .ok_or_else(|| Error::Spec(format!("the {} keys step set no condition", kind.name)))?;
    Ok(KeyStep { requeue, condition })
}

/// The rotation CronJob's script for `keys`, as its ConfigMap holds it.
pub fn rotate_script(keys: Keys) -> String {
    keys::script::rotate_script(keys.kind().name)
}
