//! Steps 6a and 6b — FernetKeys and CredentialKeys (facts §2.8–2.12): the two key
//! repositories, their staged rotation and backup. The kinds differ only in names.
//!
//! | # | What | On the way |
//! |---|---|---|
//! | 1 | keys Secret `{name}-{kind}-keys`, created once with N keys (N = max(maxActiveKeys, 3)) | created → False `GeneratingKeys`, event `…KeysGenerated`, 15 s |
//! | 2 | staging Secret `{name}-{kind}-keys-rotation` (labels; the CronJob owns its data) | |
//! | 3 | commit of a staged rotation (SDK `commit_staged_rotation`) | applied → True `…KeysRotated`, 15 s |
//! | 4 | ServiceAccount, Role, RoleBinding `{name}-{kind}-rotate` | |
//! | 5 | immutable script ConfigMap `{name}-{kind}-rotate-script-{hash}` | |
//! | 6 | CronJob `{name}-{kind}-rotate` | |
//! | 7 | PushSecret `{name}-{kind}-keys-backup` | |
//! | 8 | | True `…KeysAvailable` |

mod objects;
pub(crate) mod script;

use std::collections::BTreeMap;

use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::blocks::apply::{controller_reference, ensure_object};
use wasm_operator_sdk::blocks::config::create_immutable_config_map;
use wasm_operator_sdk::blocks::job::ensure_cron_job;
use wasm_operator_sdk::blocks::secrets::ensure_push_secret;
use wasm_operator_sdk::blocks::secrets::rotation::{
    Rotation, StagedRotation, commit_staged_rotation,
};
use wasm_operator_sdk::{ClusterExt, EventType, ObjectRef};

use crate::conditions::{CREDENTIAL_KEYS_READY, FERNET_KEYS_READY};
use crate::error::Error;
use crate::labels::common_labels;
use crate::pass::{Pass, SECRET_POLLING, StepResult};
use crate::types::{KeyRotationSpec, Keystone};

/// What tells the two key kinds apart.
pub(crate) struct KeyKind {
    /// `fernet` or `credential`.
    pub(crate) name: &'static str,
    /// The step's name in the pipeline: `fernet-keys` or `credential-keys`.
    pub(crate) step: &'static str,
    /// The other kind (its Secret is mounted into the CronJob read-only).
    pub(crate) other: &'static str,
    /// The condition type.
    pub(crate) condition: &'static str,
    /// `Fernet` or `Credential`, for reasons and messages.
    pub(crate) title: &'static str,
    /// The env var of the active key count.
    pub(crate) max_active_keys_env: &'static str,
}

/// The fernet token keys.
pub(crate) const FERNET: KeyKind = KeyKind {
    name: "fernet",
    step: "fernet-keys",
    other: "credential",
    condition: FERNET_KEYS_READY,
    title: "Fernet",
    max_active_keys_env: "OS_fernet_tokens__max_active_keys",
};

/// The credential encryption keys.
pub(crate) const CREDENTIAL: KeyKind = KeyKind {
    name: "credential",
    step: "credential-keys",
    other: "fernet",
    condition: CREDENTIAL_KEYS_READY,
    title: "Credential",
    max_active_keys_env: "OS_credential__max_active_keys",
};

impl KeyKind {
    /// `{name}-{kind}-keys`.
    pub(crate) fn secret(&self, keystone: &str) -> String {
        format!("{keystone}-{}-keys", self.name)
    }

    /// `{name}-{kind}-keys-rotation`.
    pub(crate) fn staging(&self, keystone: &str) -> String {
        format!("{keystone}-{}-keys-rotation", self.name)
    }

    /// `{name}-{kind}-rotate`: the CronJob and its RBAC.
    pub(crate) fn rotate(&self, keystone: &str) -> String {
        format!("{keystone}-{}-rotate", self.name)
    }

    /// The script's data key.
    pub(crate) fn script_key(&self) -> String {
        format!("{}_rotate.sh", self.name)
    }

    /// The spec block of this kind.
    pub(crate) fn spec<'k>(&self, keystone: &'k Keystone) -> &'k KeyRotationSpec {
        if self.name == "fernet" {
            &keystone.spec.fernet
        } else {
            &keystone.spec.credential_keys
        }
    }

    fn rotation(&self, keystone: &Keystone) -> Rotation {
        let keys = self.spec(keystone).max_active_keys;
        if self.name == "fernet" {
            Rotation::fernet_keys(keys)
        } else {
            Rotation::credential_keys(keys)
        }
    }
}

/// A Fernet-format key: 32 random bytes, urlsafe base64 with padding (44 characters).
pub(crate) fn generate_key() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| Error::Spec(format!("no randomness for a key: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE.encode(bytes))
}

/// Step 6a.
pub(crate) fn run_fernet(pass: &mut Pass<'_>) -> StepResult {
    run(pass, &FERNET)
}

/// Step 6b.
pub(crate) fn run_credential(pass: &mut Pass<'_>) -> StepResult {
    run(pass, &CREDENTIAL)
}

/// One key step over `kind`.
pub(crate) fn run(pass: &mut Pass<'_>, kind: &KeyKind) -> StepResult {
    let name = pass.name().to_owned();
    let namespace = pass.namespace().to_owned();
    let secret = kind.secret(&name);
    let existing = pass
        .cluster
        .get_typed::<Secret>(Some(&namespace), &secret)
        .map_err(Error::cluster(format!(
            "reading Secret {namespace}/{secret}"
        )))?;
    if existing.is_none() {
        create_keys(pass, kind, &secret)?;
        pass.event(
            EventType::Normal,
            &format!("{}KeysGenerated", kind.title),
            &format!("Initial {} encryption keys have been generated", kind.title),
        );
        pass.condition(
            kind.condition,
            false,
            "GeneratingKeys",
            &format!("Initial {} keys have been generated", kind.title),
        );
        return Ok(Some(SECRET_POLLING));
    }
    ensure_object(
        pass.cluster,
        &pass.owner,
        &objects::staging_secret(pass, kind),
    )
    .map_err(Error::cluster(format!(
        "applying Secret {namespace}/{}",
        kind.staging(&name)
    )))?;
    let regarding = ObjectRef::of::<Keystone>(Some(&namespace), &name);
    let staging = kind.staging(&name);
    let applied = commit_staged_rotation(
        pass.cluster,
        &StagedRotation {
            rotation: kind.rotation(&pass.keystone),
            namespace: &namespace,
            staging: &staging,
            target: &secret,
            regarding: &regarding,
        },
    )
    .map_err(|source| Error::Rotation {
        what: format!("applying the {} rotation output", kind.name),
        source: Box::new(source),
    })?;
    if applied {
        pass.condition(
            kind.condition,
            true,
            &format!("{}KeysRotated", kind.title),
            "rotation applied; staging secret cleared",
        );
        return Ok(Some(SECRET_POLLING));
    }
    let (account, role, binding) = objects::rbac(pass, kind);
    let rotate = kind.rotate(&name);
    let rbac_error = || {
        Error::cluster(format!(
            "ensuring the {} rotation RBAC {namespace}/{rotate}",
            kind.name
        ))
    };
    ensure_object(pass.cluster, &pass.owner, &account).map_err(rbac_error())?;
    ensure_object(pass.cluster, &pass.owner, &role).map_err(rbac_error())?;
    ensure_object(pass.cluster, &pass.owner, &binding).map_err(rbac_error())?;
    let script_data = BTreeMap::from([(kind.script_key(), script::rotate_script(kind.name))]);
    let script = create_immutable_config_map(
        pass.cluster,
        &pass.owner,
        &format!("{name}-{}-rotate-script", kind.name),
        &namespace,
        &script_data,
    )
    .map_err(|source| Error::ConfigMap {
        what: format!("creating the {} rotate script ConfigMap", kind.name),
        source,
    })?;
    let config_map = pass.config_map(kind.step)?;
    ensure_cron_job(
        pass.cluster,
        &pass.owner,
        &objects::cron_job(pass, kind, &config_map, &script),
    )
    .map_err(|source| Error::Job {
        what: format!("ensuring the {} rotation CronJob", kind.name),
        source,
    })?;
    ensure_push_secret(pass.cluster, &pass.owner, &objects::backup(pass, kind)).map_err(
        |source| Error::Secrets {
            what: format!("ensuring the {} keys PushSecret", kind.name),
            source,
        },
    )?;
    pass.condition(
        kind.condition,
        true,
        &format!("{}KeysAvailable", kind.title),
        &format!(
            "{} keys Secret exists and rotation CronJob is configured",
            kind.title
        ),
    );
    Ok(None)
}

/// Creates the keys Secret with N fresh keys `"0"`..`"N-1"`.
fn create_keys(pass: &Pass<'_>, kind: &KeyKind, secret: &str) -> Result<(), Error> {
    let count = kind.spec(&pass.keystone).active_keys();
    let mut data = BTreeMap::new();
    for index in 0..count {
        data.insert(index.to_string(), ByteString(generate_key()?.into_bytes()));
    }
    let object = Secret {
        metadata: ObjectMeta {
            name: Some(secret.to_owned()),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(common_labels(pass.name())),
            owner_references: Some(vec![controller_reference(&pass.owner)]),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    };
    pass.cluster
        .create_typed(&object)
        .map_err(Error::cluster(format!(
            "creating {} keys secret {}",
            kind.name,
            pass.key(secret)
        )))?;
    Ok(())
}

#[cfg(test)]
mod tests;
