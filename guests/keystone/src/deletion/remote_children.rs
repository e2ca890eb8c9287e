//! The remote-children finalizer (facts §2.20, third row): the children a Keystone with a
//! `targetClusterRef` projected onto its target cluster, which no owner reference there
//! collects.
//!
//! | Children | What it does | Finalizer |
//! |---|---|---|
//! | on this cluster | nothing to sweep: children here are collected from their owner references | released |
//! | on the target cluster | Delete of every object of the swept kinds (facts §2.20, the SDK's `remote_children::swept`) in the Keystone's namespace whose owner labels (`openstack.c5c3.io/owner-kind`, `-name`, `-namespace`) name it; a kind the target does not serve is skipped | released once the deletes are sent |
//! | abandoned (target cluster gone) | Warning `RemoteChildrenAbandoned` | released |

use wasm_operator_sdk::EventType;
use wasm_operator_sdk::blocks::remote_children::{
    REASON_ABANDONED, RemoteOwner, abandoned_message, sweep, swept,
};

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
        Children::Remote(target) => {
            let owner = RemoteOwner {
                kind: "Keystone",
                namespace: pass.namespace(),
                name: pass.name(),
            };
            sweep(target, owner, &swept()).map_err(|e| Error::Cluster {
                what: format!("{} on the target cluster", e.what),
                source: e.source.into(),
            })?;
        }
        Children::Abandoned => pass.event(
            EventType::Warning,
            REASON_ABANDONED,
            &abandoned_message("Keystone"),
        ),
    }
    finalizers::release(pass, REMOTE_CHILDREN_FINALIZER)
}

#[cfg(test)]
#[path = "remote_children_tests.rs"]
mod tests;
