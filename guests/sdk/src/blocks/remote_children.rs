//! Children on a target cluster (facts §2.20; contract 1.3): a CR whose `targetClusterRef`
//! names a cluster writes its children there, where no owner reference collects them. The
//! host writes the owner as the labels `openstack.c5c3.io/owner-kind`, `-name`,
//! `-namespace`; the CR holds [`FINALIZER`] until its deletion has swept every object
//! those labels name ([`sweep`]).
//!
//! A parent [`open`]s the ref on its own cluster, then asks [`gate`] (a live CR) or
//! [`deletion`] (a deleting one) what to do, and carries it out:
//!
//! | Case | Decision | What the reconciler does |
//! |---|---|---|
//! | no ref, or the target opens and the finalizer is held | [`Gate::Open`] | its steps, children written where it opened |
//! | the target does not open | [`Gate::Unavailable`] | gate condition False [`TARGET_CLUSTER_UNAVAILABLE`] with the host's text, [`TARGET_POLLING`]; no finalizer, no child |
//! | the target opens, the finalizer missing | [`Gate::AddFinalizer`] | add [`FINALIZER`], run again at once |
//! | deleting, the finalizer not held | [`Deletion::NotHeld`] | nothing |
//! | deleting, the target opens | [`Deletion::Sweep`] | [`sweep`] the kinds it wrote, then release [`FINALIZER`] |
//! | deleting, the target does not open, less than [`ABANDON_AFTER`] since the deletionTimestamp | [`Deletion::Wait`] | gate condition False with [`wait_message`], [`TARGET_POLLING`] |
//! | deleting, the target does not open after [`ABANDON_AFTER`] | [`Deletion::Abandon`] | Warning [`REASON_ABANDONED`] ([`abandoned_message`]), release without a sweep |

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use crate::cluster::{Cluster, ListOptions, Propagation, has_finalizer};
use crate::error::ApiError;
use crate::external::certmanager::Certificate;
use crate::external::eso::PushSecret;
use crate::external::gateway::HttpRoute;
use crate::external::mariadb::{Database, Grant, User};
use crate::object::{KindRef, ObjectRef};

/// The finalizer a targeted CR holds until its remote children are swept.
pub const FINALIZER: &str = "openstack.c5c3.io/remote-children";

/// The prefix of the owner labels on children written to a target cluster; what a
/// targeting plugin's `describe()` declares as its owner label prefix.
pub const OWNER_LABEL_PREFIX: &str = "openstack.c5c3.io";

/// How long a deleting CR waits for a target cluster that does not open before it
/// abandons the children there (CobaltCore's `AbandonAfter`).
pub const ABANDON_AFTER: Duration = Duration::from_secs(5 * 60);

/// The Warning a deletion records when it releases [`FINALIZER`] without a sweep.
pub const REASON_ABANDONED: &str = "RemoteChildrenAbandoned";

/// Every kind a CobaltCore operator sweeps from a target cluster (facts §2.20); a
/// reconciler sweeps those of them it writes.
pub fn swept() -> [KindRef; 18] {
    [
        KindRef::of::<Deployment>(),
        KindRef::of::<Service>(),
        KindRef::of::<ConfigMap>(),
        KindRef::of::<Secret>(),
        KindRef::of::<ServiceAccount>(),
        KindRef::of::<Role>(),
        KindRef::of::<RoleBinding>(),
        KindRef::of::<Job>(),
        KindRef::of::<CronJob>(),
        KindRef::of::<PodDisruptionBudget>(),
        KindRef::of::<HorizontalPodAutoscaler>(),
        KindRef::of::<NetworkPolicy>(),
        KindRef::of::<HttpRoute>(),
        KindRef::of::<Certificate>(),
        KindRef::of::<PushSecret>(),
        KindRef::of::<Database>(),
        KindRef::of::<User>(),
        KindRef::of::<Grant>(),
    ]
}

/// The CR whose children are swept.
#[derive(Debug, Clone, Copy)]
pub struct RemoteOwner<'a> {
    /// Its kind (`Keystone`, `Glance`, …).
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

impl RemoteOwner<'_> {
    /// The label selector of its children on a target cluster.
    pub fn selector(&self) -> String {
        let p = OWNER_LABEL_PREFIX;
        format!(
            "{p}/owner-kind={},{p}/owner-name={},{p}/owner-namespace={}",
            self.kind, self.name, self.namespace
        )
    }
}

/// A sweep call the target cluster refused or failed.
#[derive(Debug, thiserror::Error)]
#[error("{what} on the target cluster: {source}")]
pub struct SweepError {
    /// The call: `listing the Deployment children`, `deleting Secret ns/x`.
    pub what: String,
    #[source]
    pub source: ApiError,
}

/// Sends a Delete (background propagation) for every object of `kinds` in the owner's
/// namespace on `target` whose owner labels name `owner`; a kind the target does not serve
/// is skipped, an object already gone is not an error. Returns how many Deletes were sent.
pub fn sweep(
    target: &dyn Cluster,
    owner: RemoteOwner<'_>,
    kinds: &[KindRef],
) -> Result<usize, SweepError> {
    let options = ListOptions {
        label_selector: Some(owner.selector()),
        ..ListOptions::default()
    };
    let mut sent = 0;
    for kind in kinds {
        let listed = match target.list(kind, Some(owner.namespace), &options) {
            Ok(listed) => listed,
            Err(ApiError::NotServed(_)) => continue,
            Err(source) => {
                return Err(SweepError {
                    what: format!("listing the {} children", kind.kind),
                    source,
                });
            }
        };
        for child in listed {
            let name = child
                .pointer("/metadata/name")
                .and_then(|n| n.as_str())
                .unwrap_or_default();
            let object = ObjectRef {
                api_version: kind.api_version.clone(),
                kind: kind.kind.clone(),
                namespace: Some(owner.namespace.to_owned()),
                name: name.to_owned(),
            };
            match target.delete(&object, Propagation::Background) {
                Ok(()) => sent += 1,
                Err(ApiError::NotFound(_)) => {}
                Err(source) => {
                    return Err(SweepError {
                        what: format!("deleting {} {}/{name}", kind.kind, owner.namespace),
                        source,
                    });
                }
            }
        }
    }
    Ok(sent)
}

/// The gate message of a deletion waiting for `target` to open; `error` is the host's text.
pub fn wait_message(error: &str, target: &str) -> String {
    let seconds = ABANDON_AFTER.as_secs();
    format!(
        "{error}; waiting at least {}m{}s before abandoning the children on target cluster \
         {target:?}",
        seconds / 60,
        seconds % 60
    )
}

/// The note of the [`REASON_ABANDONED`] Warning on a CR of `kind`.
pub fn abandoned_message(kind: &str) -> String {
    format!(
        "Target cluster is no longer registered; releasing the remote-children finalizer \
         without deleting the objects on it labelled as owned by this {kind}"
    )
}

/// The reason of a parent's gate condition while its target cluster does not open.
pub const TARGET_CLUSTER_UNAVAILABLE: &str = "TargetClusterUnavailable";

/// How long a pass whose target does not open waits before it runs again.
pub const TARGET_POLLING: Duration = Duration::from_secs(15);

/// The cluster a pass writes its children to, once `targetClusterRef` was opened.
pub struct Opened<'c> {
    /// The target's handle; `None` without a ref, or when it did not open.
    pub target: Option<Box<dyn Cluster + 'c>>,
    /// Why the named target did not open (the host's text).
    pub error: Option<String>,
}

/// Opens the target cluster a primary's `targetClusterRef` names on `cluster` (the
/// primary's); without a ref there is nothing to open.
pub fn open<'c>(cluster: &'c dyn Cluster, target: Option<&str>) -> Opened<'c> {
    match target.map(|name| cluster.open_target(name)) {
        None => Opened {
            target: None,
            error: None,
        },
        Some(Ok(children)) => Opened {
            target: Some(children),
            error: None,
        },
        Some(Err(error)) => Opened {
            target: None,
            error: Some(error.to_string()),
        },
    }
}

/// What a live primary's pass does about its target before the steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Run the steps: no target, or it opened and [`FINALIZER`] is held.
    Open,
    /// The target did not open: the gate condition False with
    /// [`TARGET_CLUSTER_UNAVAILABLE`] and this message, the status written, run again after
    /// [`TARGET_POLLING`]; no finalizer added and no child written.
    Unavailable(String),
    /// The target opened and [`FINALIZER`] is missing: add it before any child is written
    /// (and nothing else this pass), then run again at once.
    AddFinalizer,
}

/// The gate of a live primary: `targeted` when its `targetClusterRef` is set,
/// `target_error` what [`open`] answered.
pub fn gate(metadata: &ObjectMeta, targeted: bool, target_error: Option<&str>) -> Gate {
    match target_error {
        Some(error) => Gate::Unavailable(error.to_owned()),
        None if targeted && !has_finalizer(metadata, FINALIZER) => Gate::AddFinalizer,
        None => Gate::Open,
    }
}

/// What the pass over a deleting primary does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deletion {
    /// [`FINALIZER`] is not held: nothing (its local children go by owner reference).
    NotHeld,
    /// The target opened: [`sweep`] it, then release [`FINALIZER`].
    Sweep,
    /// The target does not open, less than [`ABANDON_AFTER`] after the deletionTimestamp:
    /// the gate condition False with this message ([`wait_message`]), [`TARGET_POLLING`].
    Wait(String),
    /// The target has not opened for [`ABANDON_AFTER`]: a Warning [`REASON_ABANDONED`]
    /// ([`abandoned_message`]), [`FINALIZER`] released without a sweep.
    Abandon,
}

/// The deletion of a primary whose `targetClusterRef` names `target`, at `now`.
pub fn deletion(
    metadata: &ObjectMeta,
    target: &str,
    target_error: Option<&str>,
    now: &Time,
) -> Deletion {
    if !has_finalizer(metadata, FINALIZER) {
        return Deletion::NotHeld;
    }
    match target_error {
        None => Deletion::Sweep,
        Some(error) if since_deletion(metadata, now) < ABANDON_AFTER => {
            Deletion::Wait(wait_message(error, target))
        }
        Some(_) => Deletion::Abandon,
    }
}

/// How long before `now` the deletionTimestamp is (zero without one, or one in the future).
fn since_deletion(metadata: &ObjectMeta, now: &Time) -> Duration {
    let Some(deleted) = &metadata.deletion_timestamp else {
        return Duration::ZERO;
    };
    Duration::try_from(now.0.duration_since(deleted.0)).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
#[path = "remote_children_tests.rs"]
mod tests;
