//! The Keystone's finalizers (facts §2.1 point 4, §2.20): which ones it carries, adding
//! them in the prelude one per pass, and releasing one.
//!
//! | Finalizer | Carried | Guards |
//! |---|---|---|
//! | [`FINALIZER`] | always | the MariaDB Database, User and Grant `{name}` |
//! | [`OPENBAO_FINALIZER`] | always | the backup PushSecrets and the OpenBao data behind them |
//! | [`REMOTE_CHILDREN_FINALIZER`] | only with `targetClusterRef` | the children on the target cluster |
//!
//! The list is written with a JSON merge patch of `metadata.finalizers` that carries the
//! resourceVersion the pass read: the list sent is the one read with ours added or
//! removed, so when another client changed the Keystone since (a finalizer of its own
//! added or removed), the server refuses the patch with Conflict and the pass runs again
//! on the new list, instead of the other client's change being lost. After a write the
//! pass holds the stored list and resourceVersion, so its status write does not conflict
//! with its own patch.

use wasm_operator_sdk::ClusterExt;

use crate::error::Error;
use crate::pass::{NEXT_PASS, Pass, StepResult};
use crate::types::Keystone;

/// Holds the Keystone until its MariaDB Database, User and Grant are deleted.
pub(crate) const FINALIZER: &str = "keystone.openstack.c5c3.io/finalizer";
/// Holds the Keystone until its backup PushSecrets are gone.
pub(crate) const OPENBAO_FINALIZER: &str = "keystone.openstack.c5c3.io/openbao-finalizer";
/// Holds a Keystone with a `targetClusterRef` until its children there are swept.
pub(crate) use wasm_operator_sdk::blocks::remote_children::FINALIZER as REMOTE_CHILDREN_FINALIZER;

/// Every finalizer this reconciler may put on a Keystone, in the order they are added and
/// released.
pub(crate) const ALL: [&str; 3] = [FINALIZER, OPENBAO_FINALIZER, REMOTE_CHILDREN_FINALIZER];

/// The finalizers `keystone` is to carry, in the order they are added: the remote-children
/// one only when it names a target cluster.
pub(crate) fn wanted(keystone: &Keystone) -> Vec<&'static str> {
    let mut wanted = vec![FINALIZER, OPENBAO_FINALIZER];
    if keystone.spec.target_cluster_ref.is_some() {
        wanted.push(REMOTE_CHILDREN_FINALIZER);
    }
    wanted
}

/// Whether `keystone` carries `finalizer`.
pub(crate) fn holds(keystone: &Keystone, finalizer: &str) -> bool {
    wasm_operator_sdk::has_finalizer(&keystone.metadata, finalizer)
}

/// Whether `keystone` carries any finalizer of this reconciler.
pub(crate) fn holds_any(keystone: &Keystone) -> bool {
    ALL.iter().any(|f| holds(keystone, f))
}

/// Adds the first [`wanted`] finalizer the Keystone lacks and ends the pass with
/// [`NEXT_PASS`], so the next pass starts from the stored list; `Ok(None)`, with no
/// request sent, when it carries them all.
///
/// The prelude calls this only once the children's cluster is resolved: a Keystone whose
/// target cannot be resolved gets no finalizer (nothing was created for it).
pub(crate) fn ensure_next(pass: &mut Pass<'_>) -> StepResult {
    let Some(missing) = wanted(&pass.keystone)
        .into_iter()
        .find(|f| !holds(&pass.keystone, f))
    else {
        return Ok(None);
    };
    let what = format!(
        "adding finalizer {missing} to Keystone {}",
        pass.key(pass.name())
    );
    pass.primary_cluster
        .add_finalizer(&mut pass.keystone, missing)
        .map_err(Error::cluster(what))?;
    Ok(Some(NEXT_PASS))
}

/// Removes `finalizer` from the Keystone, keeping every other one; nothing is sent when it
/// does not carry it.
pub(crate) fn release(pass: &mut Pass<'_>, finalizer: &str) -> Result<(), Error> {
    let what = format!(
        "removing finalizer {finalizer} from Keystone {}",
        pass.key(pass.name())
    );
    pass.primary_cluster
        .remove_finalizer(&mut pass.keystone, finalizer)
        .map_err(Error::cluster(what))?;
    Ok(())
}

#[cfg(test)]
#[path = "finalizers_tests.rs"]
mod tests;
