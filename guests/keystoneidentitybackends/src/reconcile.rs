//! The controller flows of facts §3.2 steps 1–8 are wired by the lead.
//!
//! Scaffolding only: until then a pass does nothing and asks for no requeue, so the crate
//! builds and the plugin loads with its kind, watches and admission.

use wasm_operator_sdk::{Cluster, Outcome, ReconcileError, Request};

/// One pass for `request`: nothing yet.
pub(crate) fn reconcile(
    _cluster: &dyn Cluster,
    _request: &Request,
) -> Result<Outcome, ReconcileError> {
    Ok(Outcome::done())
}
