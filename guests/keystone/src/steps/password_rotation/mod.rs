//! Step 12 — PasswordRotation (facts §2.19, with §2.11 and §2.12): scheduled rotation of
//! the admin password. A CronJob stages a fresh password on a staging Secret; the step
//! validates it and commits it onto the push-source Secret, which a PushSecret mirrors to
//! the secret store; the admin ExternalSecret syncs it back into the admin Secret, and the
//! Bootstrap step re-runs on the new password's digest.
//!
//! | spec.passwordRotation | What the step does | PasswordRotationReady |
//! |---|---|---|
//! | absent, or `enabled: false` | deletes the CronJob, the two Secrets, the RBAC, the PushSecret and every script ConfigMap the Keystone controls | True `RotationDisabled`, go on |
//! | enabled, a valid new password staged | commits it (1–3 below) | True `AdminPasswordRotated`, next pass at once |
//! | enabled, otherwise | 1–7 below | True `PasswordRotationConfigured`, go on |
//!
//! The enabled path, with L = `passwordLength` normalized (0 → 32, below 24 → 24):
//!
//! | # | What | |
//! |---|---|---|
//! | 1 | push-source Secret `{name}-admin-password-next` (labels only: the commit owns its data) | |
//! | 2 | staging Secret `{name}-admin-password-rotation`, label `cobaltcore.c5c3.io/rotation-target=admin-password` (the CronJob owns its data) | |
//! | 3 | commit (SDK `commit_staged_rotation`): no completion annotation → nothing; not RFC 3339 → Warning `AdminPasswordRotationAnnotationInvalid`; key `password` missing, empty or shorter than L → Warning `AdminPasswordRotationRejected`, the staging Secret left as is; already committed → staging deleted | applied → Normal `AdminPasswordRotated` |
//! | 4 | ServiceAccount, Role, RoleBinding `{name}-admin-password-rotate`: `get` on `-next`, `get` + `patch` on `-rotation` | |
//! | 5 | immutable script ConfigMap `{name}-admin-password-rotate-script-{hash}`, key `admin_password_rotate.sh` | |
//! | 6 | CronJob `{name}-admin-password-rotate`; then older script ConfigMaps pruned | |
//! | 7 | PushSecret `{name}-admin-password-backup`, only once `-next` holds a valid password | |
//!
//! DECISION: the disabled path deletes only objects the Keystone controls, each with its
//! uid as precondition (SDK `ensure_or_delete`, `prune_immutable_config_maps`); an object
//! of one of the names someone else made is left. A pass that finds nothing sends no
//! delete. (CobaltCore deletes by name.)
//!
//! DECISION: script ConfigMaps of older contents (a new plugin build) are pruned once the
//! CronJob names the current one, keeping the newest older one: a Job the CronJob started
//! before may still mount it. CobaltCore leaves them until rotation is disabled.
//!
//! DECISION: an empty `schedule` (admission bypassed) is the documented default
//! `0 0 1 * *`, as an empty `passwordLength` is 32.
//!
//! DECISION: once created, the PushSecret stays while rotation is enabled, even if the
//! push-source Secret is later edited to hold no valid password (as in CobaltCore): the
//! gate only keeps an empty Secret from overwriting the seeded password in the store.

mod objects;
pub(crate) mod script;

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::CronJob;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{Metadata, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_operator_sdk::ObjectRef;
use wasm_operator_sdk::blocks::apply::ensure_object;
use wasm_operator_sdk::blocks::config::{create_immutable_config_map, prune_immutable_config_maps};
use wasm_operator_sdk::blocks::job::ensure_cron_job;
use wasm_operator_sdk::blocks::optional::{WhenAbsent, ensure_or_delete};
use wasm_operator_sdk::blocks::secrets::ensure_push_secret;
use wasm_operator_sdk::blocks::secrets::rotation::{
    Rotation, StagedRotation, commit_staged_rotation, normalized_password_length, validate_password,
};
use wasm_operator_sdk::external::eso::PushSecret;

use crate::conditions::PASSWORD_ROTATION_READY;
use crate::error::Error;
use crate::pass::{NEXT_PASS, Pass, StepResult};
use crate::types::{Keystone, PasswordRotationSpec};

/// The schedule of an enabled rotation whose `schedule` is empty.
pub(crate) const DEFAULT_SCHEDULE: &str = "0 0 1 * *";
/// How many script ConfigMaps of older contents are kept beside the current one.
const SCRIPTS_RETAINED: usize = 1;

/// `{name}-admin-password-next`: the push-source Secret the PushSecret mirrors.
pub(crate) fn next_name(keystone: &str) -> String {
    format!("{keystone}-admin-password-next")
}

/// `{name}-admin-password-rotation`: the staging Secret the CronJob writes.
pub(crate) fn staging_name(keystone: &str) -> String {
    format!("{keystone}-admin-password-rotation")
}

/// `{name}-admin-password-rotate`: the CronJob and its RBAC.
pub(crate) fn rotate_name(keystone: &str) -> String {
    format!("{keystone}-admin-password-rotate")
}

/// `{name}-admin-password-rotate-script`: the base of the script ConfigMaps.
pub(crate) fn script_base(keystone: &str) -> String {
    format!("{keystone}-admin-password-rotate-script")
}

/// `{name}-admin-password-backup`: the PushSecret.
pub(crate) fn backup_name(keystone: &str) -> String {
    format!("{keystone}-admin-password-backup")
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let enabled = pass
        .keystone
        .spec
        .password_rotation
        .clone()
        .filter(|rotation| rotation.enabled);
    let Some(spec) = enabled else {
        remove(pass)?;
        pass.condition(
            PASSWORD_ROTATION_READY,
            true,
            "RotationDisabled",
            "Scheduled admin password rotation is disabled; Model B resources removed",
        );
        return Ok(None);
    };
    let push_source = ensure_secrets(pass)?;
    if commit(pass, &spec)? {
        pass.condition(
            PASSWORD_ROTATION_READY,
            true,
            "AdminPasswordRotated",
            "rotation applied; staging secret cleared",
        );
        return Ok(Some(NEXT_PASS));
    }
    configure(pass, &spec, &push_source)?;
    pass.condition(
        PASSWORD_ROTATION_READY,
        true,
        "PasswordRotationConfigured",
        "Admin password rotation CronJob is configured",
    );
    Ok(None)
}

/// Steps 1–2: the push-source and staging Secrets; the push-source Secret as stored.
fn ensure_secrets(pass: &Pass<'_>) -> Result<Secret, Error> {
    let (next, staging) = (next_name(pass.name()), staging_name(pass.name()));
    let push_source =
        ensure_object(pass.cluster, &pass.owner, &objects::push_source(pass)).map_err(
            Error::cluster(format!("applying Secret {}", pass.key(&next))),
        )?;
    ensure_object(pass.cluster, &pass.owner, &objects::staging(pass)).map_err(Error::cluster(
        format!("applying Secret {}", pass.key(&staging)),
    ))?;
    Ok(push_source)
}

/// Step 3: the commit of a staged password onto the push-source Secret; whether one was
/// committed.
fn commit(pass: &Pass<'_>, spec: &PasswordRotationSpec) -> Result<bool, Error> {
    let name = pass.name();
    let namespace = pass.namespace();
    let (next, staging) = (next_name(name), staging_name(name));
    let regarding = ObjectRef::of::<Keystone>(Some(namespace), name);
    commit_staged_rotation(
        pass.cluster,
        &StagedRotation {
            rotation: Rotation::admin_password(spec.password_length),
            namespace,
            staging: &staging,
            target: &next,
            regarding: &regarding,
        },
    )
    .map_err(|source| Error::Rotation {
        what: "applying the admin password rotation output".into(),
        source: Box::new(source),
    })
}

/// Steps 4–7: RBAC, script, CronJob, and the PushSecret once `push_source` holds a
/// password to push.
fn configure(
    pass: &Pass<'_>,
    spec: &PasswordRotationSpec,
    push_source: &Secret,
) -> Result<(), Error> {
    let name = pass.name();
    let namespace = pass.namespace();
    let length = normalized_password_length(spec.password_length);
    let (account, role, binding) = objects::rbac(pass);
    let rbac_error = || {
        Error::cluster(format!(
            "ensuring the admin password rotation RBAC {}",
            pass.key(&rotate_name(name))
        ))
    };
    ensure_object(pass.cluster, &pass.owner, &account).map_err(rbac_error())?;
    ensure_object(pass.cluster, &pass.owner, &role).map_err(rbac_error())?;
    ensure_object(pass.cluster, &pass.owner, &binding).map_err(rbac_error())?;
    let base = script_base(name);
    let data = BTreeMap::from([(script::SCRIPT_KEY.to_owned(), script::rotate_script())]);
    let script = create_immutable_config_map(pass.cluster, &pass.owner, &base, namespace, &data)
        .map_err(|source| Error::ConfigMap {
            what: "creating the admin password rotate script ConfigMap".into(),
            source,
        })?;
    ensure_cron_job(
        pass.cluster,
        &pass.owner,
        &objects::cron_job(pass, spec, length, &script),
    )
    .map_err(|source| Error::Job {
        what: "ensuring the admin password rotation CronJob".into(),
        source,
    })?;
    prune_immutable_config_maps(
        pass.cluster,
        &pass.owner,
        &base,
        namespace,
        &script,
        SCRIPTS_RETAINED,
    )
    .map_err(|source| Error::Prune {
        what: "pruning the admin password rotate script ConfigMaps".into(),
        source: Box::new(source),
    })?;
    let pushed = push_source.data.clone().unwrap_or_default();
    if validate_password(&pushed, length).is_ok() {
        ensure_push_secret(pass.cluster, &pass.owner, &objects::backup(pass)).map_err(
            |source| Error::Secrets {
                what: "ensuring the admin password PushSecret".into(),
                source,
            },
        )?;
    }
    Ok(())
}

/// The disabled path: every object of the feature the Keystone controls, deleted.
fn remove(pass: &Pass<'_>) -> Result<(), Error> {
    let name = pass.name();
    let rotate = rotate_name(name);
    absent::<CronJob>(pass, &rotate)?;
    absent::<Secret>(pass, &staging_name(name))?;
    absent::<Secret>(pass, &next_name(name))?;
    absent::<RoleBinding>(pass, &rotate)?;
    absent::<Role>(pass, &rotate)?;
    absent::<ServiceAccount>(pass, &rotate)?;
    absent::<PushSecret>(pass, &backup_name(name))?;
    prune_immutable_config_maps(
        pass.cluster,
        &pass.owner,
        &script_base(name),
        pass.namespace(),
        "",
        0,
    )
    .map_err(|source| Error::Prune {
        what: "deleting the admin password rotate script ConfigMaps".into(),
        source: Box::new(source),
    })
}

/// Deletes the `K` named `name` if the Keystone controls it.
fn absent<K>(pass: &Pass<'_>, name: &str) -> Result<(), Error>
where
    K: Resource + Metadata<Ty = ObjectMeta> + Serialize + DeserializeOwned,
    K::Scope: 'static,
{
    ensure_or_delete::<_, K>(
        pass.cluster,
        &pass.owner,
        pass.namespace(),
        name,
        None,
        WhenAbsent::Delete,
    )?;
    Ok(())
}

#[cfg(test)]
mod commit_tests;
#[cfg(test)]
mod tests;
