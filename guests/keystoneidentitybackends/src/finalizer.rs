//! The backend's finalizer `keystone.openstack.c5c3.io/identitybackend` (facts §3.2
//! step 1): held until the deletion flow ran.
//!
//! | Case | What the pass does |
//! |---|---|
//! | not carried, not deleting | adds it, then runs again at once (no status write) |
//! | carried | nothing |
//! | released ([`release`]) | removes it, keeping every other finalizer |
//!
//! The list is written with a JSON merge patch of `metadata.finalizers` under the
//! resourceVersion the pass read: the list sent is the one read with ours added or
//! removed, so another client's change since is refused (Conflict) instead of lost, and
//! the next pass starts from the new list.

use std::ops::ControlFlow;

use wasm_operator_sdk::ClusterExt;

use crate::error::Error;
use crate::pass::{Flow, NEXT_PASS, Pass};
use crate::types::{FINALIZER, KeystoneIdentityBackend};

/// Whether `backend` carries the finalizer.
pub(crate) fn holds(backend: &KeystoneIdentityBackend) -> bool {
    wasm_operator_sdk::has_finalizer(&backend.metadata, FINALIZER)
}

/// Adds the finalizer and ends the pass for an immediate next one; goes on (nothing sent)
/// when it is carried.
pub(crate) fn ensure(pass: &mut Pass<'_>) -> Flow {
    let what = format!(
        "adding the finalizer to KeystoneIdentityBackend {}",
        pass.key(pass.name())
    );
    let added = pass
        .cluster
        .add_finalizer(&mut pass.backend, FINALIZER)
        .map_err(Error::cluster(what))?;
    Ok(match added {
        true => ControlFlow::Break(Some(NEXT_PASS)),
        false => ControlFlow::Continue(()),
    })
}

/// Removes the finalizer; nothing is sent when it is not carried.
pub(crate) fn release(pass: &mut Pass<'_>) -> Result<(), Error> {
    let what = format!(
        "removing the finalizer from KeystoneIdentityBackend {}",
        pass.key(pass.name())
    );
    pass.cluster
        .remove_finalizer(&mut pass.backend, FINALIZER)
        .map_err(Error::cluster(what))?;
    Ok(())
}

#[cfg(test)]
#[path = "finalizer_tests.rs"]
mod tests;
