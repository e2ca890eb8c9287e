//! The OpenBao finalizer (facts §2.20, second row, and §2.12): the backup PushSecrets
//! `{name}-fernet-keys-backup` and `{name}-credential-keys-backup`, whose deletion has
//! External Secrets purge the keys from OpenBao (`deletionPolicy: Delete`).
//!
//! Every pass runs the three phases in order over what the cluster holds now, so where a
//! deletion stands is read off the PushSecrets themselves: one that is terminating has
//! been through phases 0 and 1, one that is gone through all three.
//!
//! | Phase | What the pass finds | What it does | SecretsReady | Pass |
//! |---|---|---|---|---|
//! | 0 | a live PushSecret without ESO's finalizer `pushsecret.externalsecrets.io/finalizer`, at most [`ADOPTION_WAIT`] after the deletionTimestamp | nothing is deleted (a delete before ESO adopts it would orphan the OpenBao data) | False `WaitingForESOAdoption` | 15 s |
//! | 0 | the same, later than that | Warning `ESOAdoptionTimedOut` for it, on to phase 1 | | |
//! | 1 | | Delete of each PushSecret not already terminating (NotFound tolerated) | | |
//! | 2 | a PushSecret still there (read past the cache), at most [`CLEANUP_STALL`] after the deletionTimestamp | | False `OpenBaoFinalizerBlocked` | 15 s |
//! | 2 | the same, later than that | its finalizers stripped; Warning `OpenBaoCleanupStalled` naming the OpenBao paths that keep their data | | |
//! | done | none left | Normal `OpenBaoSecretsFinalized`; the finalizer released | | goes on |
//!
//! `FinalizingOpenBaoSecrets` is recorded by the pass that goes on to phase 1 and finds an
//! adopted PushSecret not yet terminating: the pass that deletes it, once per deletion (not
//! by the passes that wait in phase 0, even when one of the two is adopted already). When the children are
//! abandoned (the target cluster is gone), the finalizer is released with a Warning
//! `RemoteChildrenAbandoned` and nothing else.

use std::time::Duration;

use serde_json::json;
use wasm_operator_sdk::external::eso::PushSecret;
use wasm_operator_sdk::{ApiError, Cluster, ClusterExt, EventType, Propagation, ReadFrom, log};

use super::{Children, go_duration, since_deletion, unserved_as};
use crate::conditions::SECRETS_READY;
use crate::error::Error;
use crate::finalizers::{self, OPENBAO_FINALIZER};
use crate::pass::{Pass, SECRET_POLLING, StepResult};
use crate::steps::keys::{CREDENTIAL, FERNET};

/// The finalizer External Secrets puts on a PushSecret it adopted: its delete then purges
/// the OpenBao data before the PushSecret goes.
pub(crate) const ESO_FINALIZER: &str = "pushsecret.externalsecrets.io/finalizer";

/// How long after the deletionTimestamp phase 0 waits for ESO to adopt a PushSecret
/// (CobaltCore's `OpenBaoAdoptionWaitTimeout`).
pub(crate) const ADOPTION_WAIT: Duration = Duration::from_secs(10 * 60);

/// How long after the deletionTimestamp phase 2 waits for a deleted PushSecret to go
/// (CobaltCore's `OpenBaoCleanupStallTimeout`).
pub(crate) const CLEANUP_STALL: Duration = Duration::from_secs(5 * 60);

/// The backup PushSecrets of Keystone `name`, as the key steps name them.
pub(crate) fn backup_names(name: &str) -> [String; 2] {
    [FERNET.name, CREDENTIAL.name].map(|kind| format!("{name}-{kind}-keys-backup"))
}

/// Releases the OpenBao finalizer when the Keystone carries it and its PushSecrets are
/// gone; `Ok(Some(15 s))` while it waits on them.
pub(crate) fn release(pass: &mut Pass<'_>, children: Children<'_>) -> StepResult {
    if !finalizers::holds(&pass.keystone, OPENBAO_FINALIZER) {
        return Ok(None);
    }
    let cluster = match children {
        Children::Abandoned => {
            pass.event(
                EventType::Warning,
                "RemoteChildrenAbandoned",
                "Target cluster is no longer registered; releasing the openbao-finalizer \
                 without deleting the backup PushSecrets on it",
            );
            finalizers::release(pass, OPENBAO_FINALIZER)?;
            return Ok(None);
        }
        Children::Local(cluster) | Children::Remote(cluster) => cluster,
    };
    let names = backup_names(pass.name());
    let found = names
        .iter()
        .map(|name| read(pass, cluster, name, ReadFrom::Cache))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(after) = await_adoption(pass, &names, &found) {
        return Ok(Some(after));
    }
    if found
        .iter()
        .flatten()
        .any(|ps| !terminating(ps) && adopted(ps))
    {
        pass.event(
            EventType::Normal,
            "FinalizingOpenBaoSecrets",
            "Cleaning up OpenBao backup PushSecrets before removing Keystone",
        );
    }
    for (name, ps) in names.iter().zip(&found) {
        if !ps.as_ref().is_some_and(terminating) {
            delete(pass, cluster, name)?;
        }
    }
    let mut held = Vec::new();
    for name in &names {
        held.extend(read(pass, cluster, name, ReadFrom::Server)?);
    }
    if let Some(first) = held.first() {
        if since_deletion(pass) <= CLEANUP_STALL {
            let message = format!(
                "Waiting for PushSecret {:?} to be garbage-collected before releasing \
                 openbao-finalizer",
                first.metadata.name.as_deref().unwrap_or_default()
            );
            pass.condition(SECRETS_READY, false, "OpenBaoFinalizerBlocked", &message);
            return Ok(Some(SECRET_POLLING));
        }
        strip(pass, cluster, &held)?;
    }
    pass.event(
        EventType::Normal,
        "OpenBaoSecretsFinalized",
        "OpenBao backup PushSecrets deleted; releasing openbao-finalizer",
    );
    finalizers::release(pass, OPENBAO_FINALIZER)?;
    Ok(None)
}

/// Phase 0: `Some(15 s)` with SecretsReady False `WaitingForESOAdoption` while a live
/// PushSecret lacks ESO's finalizer within [`ADOPTION_WAIT`]; past it, a Warning
/// `ESOAdoptionTimedOut` for each such PushSecret and `None` (it is deleted regardless).
fn await_adoption(
    pass: &mut Pass<'_>,
    names: &[String],
    found: &[Option<PushSecret>],
) -> Option<Duration> {
    let timed_out = since_deletion(pass) > ADOPTION_WAIT;
    for (name, ps) in names.iter().zip(found) {
        let Some(ps) = ps else { continue };
        if terminating(ps) || adopted(ps) {
            continue;
        }
        if !timed_out {
            let message = format!(
                "Waiting for ESO to adopt PushSecret {name:?} (cleanup finalizer not yet installed)"
            );
            pass.condition(SECRETS_READY, false, "WaitingForESOAdoption", &message);
            return Some(SECRET_POLLING);
        }
        log::warn(&format!(
            "Keystone {}: PushSecret {name} not adopted by ESO within {}; deleting it",
            pass.key(pass.name()),
            go_duration(ADOPTION_WAIT)
        ));
        pass.event(
            EventType::Warning,
            "ESOAdoptionTimedOut",
            &format!(
                "PushSecret {name:?} not adopted by ESO within {} of deletion; force-deleting \
                 to release the openbao-finalizer (the OpenBao kv-v2 path may be orphaned \
                 only if ESO is not running)",
                go_duration(ADOPTION_WAIT)
            ),
        );
    }
    None
}

/// Phase 2 past [`CLEANUP_STALL`]: strips the finalizers of the PushSecrets still there
/// (under the resourceVersion read) and names the OpenBao paths that keep their data.
fn strip(pass: &Pass<'_>, cluster: &dyn Cluster, held: &[PushSecret]) -> Result<(), Error> {
    let mut names = Vec::new();
    let mut paths = Vec::new();
    for ps in held {
        let name = ps.metadata.name.clone().unwrap_or_default();
        let stripped = cluster.merge_patch::<PushSecret>(
            Some(pass.namespace()),
            &name,
            json!({"metadata": {"finalizers": null}}),
            ps.metadata.resource_version.as_deref(),
        );
        match stripped {
            Ok(_) | Err(wasm_operator_sdk::Error::Api(ApiError::NotFound(_))) => {}
            Err(e) => {
                return Err(Error::Cluster {
                    what: format!("removing the finalizers of PushSecret {}", pass.key(&name)),
                    source: e,
                });
            }
        }
        paths.extend(
            ps.spec
                .data
                .iter()
                .map(|d| d.match_.remote_ref.remote_key.clone()),
        );
        names.push(name);
    }
    log::warn(&format!(
        "Keystone {}: PushSecrets {names:?} still there {} after deletion; their \
         finalizers were removed",
        pass.key(pass.name()),
        go_duration(CLEANUP_STALL)
    ));
    pass.event(
        EventType::Warning,
        "OpenBaoCleanupStalled",
        &format!(
            "ESO could not delete the OpenBao data behind PushSecret(s) [{}] within {} of \
             deletion; the kv-v2 path(s) [{}] may still hold the backed-up keys — delete \
             them by hand",
            names.join(" "),
            go_duration(CLEANUP_STALL),
            paths.join(" ")
        ),
    );
    Ok(())
}

fn terminating(ps: &PushSecret) -> bool {
    ps.metadata.deletion_timestamp.is_some()
}

fn adopted(ps: &PushSecret) -> bool {
    ps.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == ESO_FINALIZER)
}

/// The PushSecret `name`, when there is one.
fn read(
    pass: &Pass<'_>,
    cluster: &dyn Cluster,
    name: &str,
    from: ReadFrom,
) -> Result<Option<PushSecret>, Error> {
    unserved_as(
        cluster.get_typed_from::<PushSecret>(Some(pass.namespace()), name, from),
        None,
    )
    .map_err(Error::cluster(format!(
        "reading PushSecret {}",
        pass.key(name)
    )))
}

/// Sends the delete of PushSecret `name`; one that is not there is fine.
fn delete(pass: &Pass<'_>, cluster: &dyn Cluster, name: &str) -> Result<(), Error> {
    let deleted =
        cluster.delete_typed::<PushSecret>(Some(pass.namespace()), name, Propagation::Background);
    unserved_as(deleted, false).map_err(Error::cluster(format!(
        "deleting PushSecret {}",
        pass.key(name)
    )))?;
    Ok(())
}

#[cfg(test)]
#[path = "openbao_tests.rs"]
mod tests;
