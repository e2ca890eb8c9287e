//! The main finalizer (facts §2.20, first row): the MariaDB Database, User and Grant
//! `{name}`.
//!
//! | Children | Requests | Events | Finalizer |
//! |---|---|---|---|
//! | on this cluster, one of the three live (present, not terminating) | Delete of each of the three | `FinalizingDatabase`, `DatabaseFinalized` | released |
//! | on this cluster, none live | Delete of each of the three (NotFound tolerated) | `DatabaseFinalized` | released |
//! | abandoned (target cluster gone) | — | Warning `RemoteChildrenAbandoned` | released |
//!
//! The deletes are not waited for: mariadb-operator drops the database once the Keystone's
//! Pods, collected after the Keystone, have let go of it. A kind the cluster does not serve
//! (no mariadb-operator, a brownfield database) has nothing to delete. A failed read or
//! delete ends the pass with the error, the finalizer kept.

use k8s_openapi::Resource;
use wasm_operator_sdk::external::mariadb::{Database, Grant, User};
use wasm_operator_sdk::{Cluster, ClusterExt, EventType, ObjectRef, Propagation, ReadFrom};

use super::{Children, unserved_as};
use crate::error::Error;
use crate::finalizers::{self, FINALIZER};
use crate::pass::Pass;

/// Releases the main finalizer when the Keystone carries it.
pub(crate) fn release(pass: &mut Pass<'_>, children: Children<'_>) -> Result<(), Error> {
    if !finalizers::holds(&pass.keystone, FINALIZER) {
        return Ok(());
    }
    match children {
        Children::Abandoned => pass.event(
            EventType::Warning,
            "RemoteChildrenAbandoned",
            "Target cluster is no longer registered; releasing the finalizer without deleting \
             the MariaDB Database, User, and Grant on it",
        ),
        Children::Local(cluster) | Children::Remote(cluster) => {
            let live = is_live::<Database>(pass, cluster)?
                || is_live::<User>(pass, cluster)?
                || is_live::<Grant>(pass, cluster)?;
            if live {
                pass.event(
                    EventType::Normal,
                    "FinalizingDatabase",
                    "Cleaning up MariaDB Database, User, and Grant before removing Keystone",
                );
            }
            delete::<Database>(pass, cluster)?;
            delete::<User>(pass, cluster)?;
            delete::<Grant>(pass, cluster)?;
            pass.event(
                EventType::Normal,
                "DatabaseFinalized",
                "MariaDB Database, User, and Grant marked for deletion; releasing finalizer",
            );
        }
    }
    finalizers::release(pass, FINALIZER)
}

/// Whether the `K` named after the Keystone exists and is not terminating.
fn is_live<K: Resource>(pass: &Pass<'_>, cluster: &dyn Cluster) -> Result<bool, Error> {
    let object = ObjectRef::of::<K>(Some(pass.namespace()), pass.name());
    let found = unserved_as(
        cluster.get(&object, ReadFrom::Cache).map_err(Into::into),
        None,
    )
    .map_err(Error::cluster(format!(
        "reading {} {}",
        K::KIND,
        pass.key(pass.name())
    )))?;
    Ok(found.is_some_and(|o| {
        o.pointer("/metadata/deletionTimestamp")
            .is_none_or(serde_json::Value::is_null)
    }))
}

/// Sends the delete of the `K` named after the Keystone; one that is not there is fine.
fn delete<K: Resource>(pass: &Pass<'_>, cluster: &dyn Cluster) -> Result<(), Error> {
    let deleted =
        cluster.delete_typed::<K>(Some(pass.namespace()), pass.name(), Propagation::Background);
    unserved_as(deleted, false).map_err(Error::cluster(format!(
        "deleting {} {}",
        K::KIND,
        pass.key(pass.name())
    )))?;
    Ok(())
}

#[cfg(test)]
#[path = "database_tests.rs"]
mod tests;
