//! Step `secrets`: each Secret of spec.secrets, grouped by name, planned with its entries
//! and the readyUnits of its status entry, and written as [`converge`] says.

use wasm_operator_sdk::planner::SecretRequest;

use crate::converge::{Converged, converge, undecodable};
use crate::error::Result;
use crate::freshness::ReadSecret;
use crate::grouping::group_secrets;
use crate::pass::Pass;
use crate::reconcile::Flow;

/// Runs the step.
pub fn run(pass: &mut Pass<'_>) -> Result<Flow> {
    let secrets = pass.spec.secrets.clone();
    for group in group_secrets(&secrets) {
        if let Some(error) = group.invalid {
            let results = undecodable(pass, &[group.name], error);
            pass.results.extend(results);
            continue;
        }
        let entries = group.entries_json();
        let ready_units = pass.old_ready_units(group.name);
        let planner = pass.planner;
        let plan = |read: &[Option<ReadSecret>], generate: bool| {
            let request = SecretRequest {
                name: group.name.to_owned(),
                entries: entries.clone(),
                existing: read
                    .first()
                    .and_then(Option::as_ref)
                    .map(|s| s.json.to_text()),
                ready_units: ready_units.clone(),
                generate,
            };
            planner.plan(&request).map(|plan| vec![plan])
        };
        match converge(pass, &[group.name], &plan)? {
            Converged::Done(results) => pass.results.extend(results),
            Converged::Stale => return Ok(Flow::Requeue),
        }
    }
    Ok(Flow::Continue)
}
