//! The Glance's `targetClusterRef` (facts §2.1, §2.20, §4): its children (the API, its Job, Secrets and MariaDB objects) on
//! the target cluster the host opened; the Glance itself (status, finalizers, events) and
//! its GlanceBackends on this one. What happens when is the SDK's
//! ([`targeted_parent`]: the gate, the remote-children finalizer before any child, the
//! sweep on deletion, the 5-minute abandon); this module is the Glance's side of it, the gate
//! condition being SecretsReady.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::blocks::remote_children::{
    FINALIZER, SweepError, TARGET_CLUSTER_UNAVAILABLE,
};
use wasm_operator_sdk::blocks::service::child_kinds;
use wasm_operator_sdk::blocks::targeted_parent::{self, TargetedPass};
use wasm_operator_sdk::{Cluster, ClusterExt, EventType, KindRef};

use crate::conditions::SECRETS_READY;
use crate::error::Error;
use crate::pass::{Pass, StepResult};
use crate::types::GlanceStatus;

/// The kinds a Glance writes to a target cluster, swept on deletion.
pub(crate) fn swept() -> [KindRef; 7] {
    child_kinds()
}

/// Before the steps of a live Glance: `Some` ends the pass (gated, or the finalizer
/// added), `None` runs the steps.
pub(crate) fn gate(pass: &mut Pass<'_>, before: &Option<GlanceStatus>) -> Option<StepResult> {
    targeted_parent::gate(&mut Targeted { pass, before })
}

/// The deletion of a Glance: sweeps its children from the target and releases the
/// finalizer, or waits for the target, or abandons them.
pub(crate) fn delete(pass: &mut Pass<'_>, before: &Option<GlanceStatus>) -> StepResult {
    targeted_parent::delete(&mut Targeted { pass, before }, &swept())
}

/// A pass, with the status it started from (the status is written only when it changed).
struct Targeted<'p, 'c> {
    pass: &'p mut Pass<'c>,
    before: &'p Option<GlanceStatus>,
}

impl TargetedPass for Targeted<'_, '_> {
    type Error = Error;

    fn kind(&self) -> &'static str {
        "Glance"
    }

    fn metadata(&self) -> &ObjectMeta {
        &self.pass.glance.metadata
    }

    fn target(&self) -> Option<&str> {
        let target = self.pass.glance.spec.target_cluster_ref.as_ref();
        target.map(|t| t.name.as_str())
    }

    fn target_error(&self) -> Option<&str> {
        self.pass.target_error.as_deref()
    }

    fn children(&self) -> &dyn Cluster {
        self.pass.cluster
    }

    fn hold(&mut self, message: &str) -> Result<(), Error> {
        (self.pass).condition(SECRETS_READY, false, TARGET_CLUSTER_UNAVAILABLE, message);
        crate::reconcile::write_status(self.pass, self.before)
    }

    fn write_finalizer(&mut self, add: bool) -> Result<(), Error> {
        let pass = &mut *self.pass;
        let what = format!(
            "{} finalizer {FINALIZER} on Glance {}",
            if add { "adding" } else { "removing" },
            pass.key(pass.name())
        );
        let cluster = pass.primary_cluster;
        let written = if add {
            cluster.add_finalizer(&mut pass.glance, FINALIZER)
        } else {
            cluster.remove_finalizer(&mut pass.glance, FINALIZER)
        };
        written.map(|_| ()).map_err(Error::cluster(what))
    }

    fn sweep_failed(&self, error: SweepError) -> Error {
        let target = self.target().unwrap_or_default();
        Error::Cluster {
            what: format!("{} on target cluster {target:?}", error.what),
            source: error.source.into(),
        }
    }

    fn warn(&self, reason: &str, note: &str) {
        self.pass.event(EventType::Warning, reason, note);
    }
}

#[cfg(test)]
#[path = "targeting_tests.rs"]
mod tests;
