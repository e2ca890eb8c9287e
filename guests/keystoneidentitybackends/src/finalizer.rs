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

use serde_json::{Value, json};
use wasm_operator_sdk::ClusterExt;

use crate::error::Error;
use crate::pass::{Flow, NEXT_PASS, Pass};
use crate::types::{FINALIZER, KeystoneIdentityBackend};

/// Whether `backend` carries the finalizer.
pub(crate) fn holds(backend: &KeystoneIdentityBackend) -> bool {
    backend
        .metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == FINALIZER)
}

/// Adds the finalizer and ends the pass for an immediate next one; goes on (nothing sent)
/// when it is carried.
pub(crate) fn ensure(pass: &mut Pass<'_>) -> Flow {
    if holds(&pass.backend) {
        return Ok(ControlFlow::Continue(()));
    }
    let mut list = pass.backend.metadata.finalizers.clone().unwrap_or_default();
    list.push(FINALIZER.to_owned());
    write(pass, list, "adding the finalizer to")?;
    Ok(ControlFlow::Break(Some(NEXT_PASS)))
}

/// Removes the finalizer; nothing is sent when it is not carried.
pub(crate) fn release(pass: &mut Pass<'_>) -> Result<(), Error> {
    if !holds(&pass.backend) {
        return Ok(());
    }
    let list: Vec<String> = pass
        .backend
        .metadata
        .finalizers
        .iter()
        .flatten()
        .filter(|f| *f != FINALIZER)
        .cloned()
        .collect();
    write(pass, list, "removing the finalizer from")
}

/// Patches `metadata.finalizers` to `list` under the resourceVersion the pass holds.
fn write(pass: &mut Pass<'_>, list: Vec<String>, doing: &str) -> Result<(), Error> {
    let key = pass.key(pass.name());
    let what = format!("{doing} KeystoneIdentityBackend {key}");
    let version = pass
        .backend
        .metadata
        .resource_version
        .clone()
        .ok_or_else(|| Error::Cluster {
            what: what.clone(),
            source: wasm_operator_sdk::Error::MissingField {
                what: format!("KeystoneIdentityBackend {key}"),
                field: "metadata.resourceVersion",
            },
        })?;
    let finalizers = if list.is_empty() {
        Value::Null
    } else {
        json!(list)
    };
    let patch = json!({"metadata": {"finalizers": finalizers}});
    let namespace = pass.namespace().to_owned();
    let name = pass.name().to_owned();
    let stored: KeystoneIdentityBackend = pass
        .cluster
        .merge_patch(Some(&namespace), &name, patch, Some(&version))
        .map_err(Error::cluster(what))?;
    pass.backend.metadata.finalizers = stored.metadata.finalizers;
    pass.backend.metadata.resource_version = stored.metadata.resource_version;
    Ok(())
}

#[cfg(test)]
#[path = "finalizer_tests.rs"]
mod tests;
