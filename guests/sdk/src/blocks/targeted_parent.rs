//! What a parent whose CR may name a `targetClusterRef` does about it before its steps and
//! on deletion (facts §2.1, §2.20): the [`remote_children`] decisions, carried out through
//! the parent's pass ([`TargetedPass`]).
//!
//! | Case | [`gate`] / [`delete`] |
//! |---|---|
//! | no ref, or the target opens and [`FINALIZER`](remote_children::FINALIZER) is held | `None`: run the steps |
//! | the target does not open | [`TargetedPass::hold`] with the host's text, [`TARGET_POLLING`]; no finalizer added, no child written |
//! | the target opens, the finalizer missing | the finalizer added, run again at once |
//! | deleting, the finalizer not held | nothing |
//! | deleting, the target opens | the CR's labelled children of the kinds given swept there, the finalizer released |
//! | deleting, the target does not open, under 5 min | [`TargetedPass::hold`] with the wait message, [`TARGET_POLLING`] |
//! | deleting, the target has not opened for 5 min | Warning [`REASON_ABANDONED`], the finalizer released without a sweep |

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::blocks::remote_children::{
    self, Deletion, Gate, REASON_ABANDONED, RemoteOwner, SweepError, TARGET_POLLING,
    abandoned_message, sweep,
};
use crate::cluster::Cluster;
use crate::object::KindRef;

/// A parent's pass as the target handling needs it.
pub trait TargetedPass {
    /// The parent's error.
    type Error;

    /// The CR's kind (`Glance`).
    fn kind(&self) -> &'static str;

    /// The CR's metadata as the pass holds it.
    fn metadata(&self) -> &ObjectMeta;

    /// The cluster its `targetClusterRef` names, if any.
    fn target(&self) -> Option<&str>;

    /// Why that cluster did not open (the host's text); `None` when it opened.
    fn target_error(&self) -> Option<&str>;

    /// The cluster the children live on: the opened target.
    fn children(&self) -> &dyn Cluster;

    /// Sets the parent's gate condition False with reason
    /// [`TARGET_CLUSTER_UNAVAILABLE`](remote_children::TARGET_CLUSTER_UNAVAILABLE) and
    /// `message`, and writes the status.
    fn hold(&mut self, message: &str) -> Result<(), Self::Error>;

    /// Adds (`true`) or removes [`FINALIZER`](remote_children::FINALIZER) on the CR, on its own cluster.
    fn write_finalizer(&mut self, add: bool) -> Result<(), Self::Error>;

    /// The error of a sweep the target refused.
    fn sweep_failed(&self, error: SweepError) -> Self::Error;

    /// Records a Warning about the CR.
    fn warn(&self, reason: &str, note: &str);
}

/// Before the steps of a live CR: `Some` ends the pass (gated, or the finalizer added),
/// `None` runs the steps.
pub fn gate<P: TargetedPass>(pass: &mut P) -> Option<Result<Option<Duration>, P::Error>> {
    let targeted = pass.target().is_some();
    match remote_children::gate(pass.metadata(), targeted, pass.target_error()) {
        Gate::Open => None,
        Gate::Unavailable(message) => Some(pass.hold(&message).map(|()| Some(TARGET_POLLING))),
        Gate::AddFinalizer => Some(pass.write_finalizer(true).map(|()| Some(Duration::ZERO))),
    }
}

/// The deletion of a CR: sweeps its children of `kinds` from the target and releases
/// [`FINALIZER`](remote_children::FINALIZER), or waits for the target, or abandons them (see the module table).
pub fn delete<P: TargetedPass>(
    pass: &mut P,
    kinds: &[KindRef],
) -> Result<Option<Duration>, P::Error> {
    let target = pass.target().unwrap_or_default().to_owned();
    let now = crate::blocks::conditions::now();
    match remote_children::deletion(pass.metadata(), &target, pass.target_error(), &now) {
        Deletion::NotHeld => return Ok(None),
        Deletion::Sweep => {
            let metadata = pass.metadata();
            let owner = RemoteOwner {
                kind: pass.kind(),
                namespace: metadata.namespace.as_deref().unwrap_or_default(),
                name: metadata.name.as_deref().unwrap_or_default(),
            };
            let sent = sweep(pass.children(), owner, kinds).map_err(|e| pass.sweep_failed(e))?;
            crate::log::debug(&format!(
                "{} {}/{}: {sent} children deleted on target cluster {target:?}",
                owner.kind, owner.namespace, owner.name
            ));
        }
        Deletion::Wait(message) => {
            pass.hold(&message)?;
            return Ok(Some(TARGET_POLLING));
        }
        Deletion::Abandon => pass.warn(REASON_ABANDONED, &abandoned_message(pass.kind())),
    }
    pass.write_finalizer(false)?;
    Ok(None)
}
