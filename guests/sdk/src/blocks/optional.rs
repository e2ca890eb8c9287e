//! Optional objects: applied while their spec block is set, deleted once it is not
//! (facts §2.4 "delete Certificate if cert-manager serves the kind", §2.13 NetworkPolicy).
//!
//! [`ensure_or_delete`] applies the desired object through
//! [`ensure_object`](crate::blocks::apply::ensure_object) when there is one. When there is
//! none it deletes the object of that name — NotFound is fine — and, with
//! [`WhenAbsent::DeleteIfServed`], only when the cluster serves the kind (an optional
//! operator such as cert-manager may not be installed; nothing of a kind not served can
//! exist).
//!
//! DECISION: the delete touches only an object `owner` controls, and only that very object
//! (its uid is a precondition of the delete). CobaltCore deletes whatever carries the
//! name; an object of that name someone else made (a user's own NetworkPolicy, the
//! Certificate of a brownfield database) is left alone here and reported as
//! [`Optional::NotOwned`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{Metadata, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::blocks::apply::{ensure_object, is_controlled_by, name_of};
use crate::cluster::{Cluster, ClusterExt, DeleteOptions, Owner, Preconditions, Propagation};
use crate::error::ApiError;
use crate::log;
use crate::object::{KindRef, ObjectRef, object_key};

/// What to do about an absent spec block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenAbsent {
    /// Delete the object.
    Delete,
    /// Delete the object if the cluster serves its kind; otherwise there is nothing to do.
    DeleteIfServed,
}

/// What [`ensure_or_delete`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Optional<K> {
    /// The spec block is set: the object as the server stored it.
    Applied(K),
    /// The spec block is absent and no object of the name is left: `deleted` when this
    /// call deleted it.
    Absent { deleted: bool },
    /// The spec block is absent and the cluster does not serve the kind.
    NotServed,
    /// The spec block is absent and an object of the name exists that the owner does not
    /// control: left as it is.
    NotOwned,
}

/// Why ensuring or deleting an optional object failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Asking whether the cluster serves the kind failed.
    #[error("asking whether the cluster serves {kind}: {source}")]
    Served {
        kind: &'static str,
        #[source]
        source: ApiError,
    },
    /// Reading the object before deleting it failed.
    #[error("reading {what}: {source}")]
    Get {
        what: String,
        #[source]
        source: crate::Error,
    },
    /// Deleting the object failed (a Conflict: it was replaced since it was read).
    #[error("deleting {what}: {source}")]
    Delete {
        what: String,
        #[source]
        source: ApiError,
    },
    /// Applying the desired object failed.
    #[error("applying {what}: {source}")]
    Apply {
        what: String,
        #[source]
        source: crate::Error,
    },
    /// The desired object is not the one named: the call would apply one object and
    /// delete another.
    #[error("{kind} {got} was given to be ensured as {expected}")]
    Misnamed {
        kind: &'static str,
        expected: String,
        got: String,
    },
}

/// Applies `desired` under `owner` when it is set; otherwise deletes the `K` named `name`
/// in `namespace` if `owner` controls it (see the module), first asking whether the kind
/// is served when `when_absent` says so.
pub fn ensure_or_delete<C, K>(
    cluster: &C,
    owner: &Owner,
    namespace: &str,
    name: &str,
    desired: Option<&K>,
    when_absent: WhenAbsent,
) -> Result<Optional<K>, Error>
where
    C: Cluster + ?Sized,
    K: Resource + Metadata<Ty = ObjectMeta> + Serialize + DeserializeOwned,
    K::Scope: 'static,
{
    let what = format!("{} {}", K::KIND, object_key(Some(namespace), name));
    if let Some(desired) = desired {
        let got = name_of(desired).map_err(|source| Error::Apply {
            what: what.clone(),
            source,
        })?;
        if got != (Some(namespace), name) {
            return Err(Error::Misnamed {
                kind: K::KIND,
                expected: object_key(Some(namespace), name),
                got: object_key(got.0, got.1),
            });
        }
        let stored = ensure_object(cluster, owner, desired)
            .map_err(|source| Error::Apply { what, source })?;
        return Ok(Optional::Applied(stored));
    }
    if when_absent == WhenAbsent::DeleteIfServed {
        let served = cluster
            .served(&KindRef::of::<K>())
            .map_err(|source| Error::Served {
                kind: K::KIND,
                source,
            })?;
        if !served {
            return Ok(Optional::NotServed);
        }
    }
    let existing: Option<K> =
        cluster
            .get_typed(Some(namespace), name)
            .map_err(|source| Error::Get {
                what: what.clone(),
                source,
            })?;
    let Some(existing) = existing else {
        return Ok(Optional::Absent { deleted: false });
    };
    let meta = existing.metadata();
    if !is_controlled_by(meta, &owner.uid) {
        log::info(&format!(
            "{what} is not controlled by {} {}: not deleted",
            owner.kind, owner.name
        ));
        return Ok(Optional::NotOwned);
    }
    let options = DeleteOptions {
        propagation: Propagation::Background,
        preconditions: Preconditions {
            uid: meta.uid.clone(),
            resource_version: None,
        },
    };
    match cluster.delete_with(&ObjectRef::of::<K>(Some(namespace), name), &options) {
        Ok(()) => Ok(Optional::Absent { deleted: true }),
        Err(ApiError::NotFound(_)) => Ok(Optional::Absent { deleted: false }),
        Err(source) => Err(Error::Delete { what, source }),
    }
}

#[cfg(test)]
#[path = "optional_tests.rs"]
mod tests;
