//! The remote-children finalizer (facts §2.20, third row): the children a Keystone with a
//! `targetClusterRef` projected onto its target cluster, which no owner reference there
//! collects.
//!
//! | Children | What it does | Finalizer |
//! |---|---|---|
//! | on this cluster | nothing to sweep: children here are collected from their owner references | released |
//! | abandoned (target cluster gone) | Warning `RemoteChildrenAbandoned` | released |
//!
//! This host resolves no target cluster, so it never sweeps one: the label-selected sweep
//! (owner labels `openstack.c5c3.io/owner-kind`, `-name`, `-namespace`) is the case the
//! target-clusters issue adds to [`Children`], which this match then has to handle.

use wasm_operator_sdk::EventType;

use super::Children;
use crate::error::Error;
use crate::finalizers::{self, REMOTE_CHILDREN_FINALIZER};
use crate::pass::Pass;

/// Releases the remote-children finalizer when the Keystone carries it.
pub(crate) fn release(pass: &mut Pass<'_>, children: Children<'_>) -> Result<(), Error> {
    if !finalizers::holds(&pass.keystone, REMOTE_CHILDREN_FINALIZER) {
        return Ok(());
    }
    match children {
        Children::Local(_) => {}
        Children::Abandoned => pass.event(
            EventType::Warning,
            "RemoteChildrenAbandoned",
            "Target cluster is no longer registered; releasing the remote-children finalizer \
             without deleting the objects on it labelled as owned by this Keystone",
        ),
    }
    finalizers::release(pass, REMOTE_CHILDREN_FINALIZER)
}

#[cfg(test)]
#[path = "remote_children_tests.rs"]
mod tests;
