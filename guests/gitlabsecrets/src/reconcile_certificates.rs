//! Step `certificates`: the CA, TLS and chain Secrets of each spec.certificates entry,
//! planned together with the readyUnits of the TLS Secret and written in that order,
//! stopping at the first write that fails (see [`converge`]).
//!
//! A set is read and planned without generating first; a new set is issued only after the
//! Secrets were read again past the cache and the GitLabSecrets was found current, because
//! a key can take seconds to generate.

use wasm_operator_sdk::planner::CertificatesRequest;

use crate::converge::{Converged, converge, undecodable};
use crate::error::Result;
use crate::freshness::ReadSecret;
use crate::pass::Pass;
use crate::reconcile::Flow;

/// Runs the step.
pub fn run(pass: &mut Pass<'_>) -> Result<Flow> {
    let certificates = pass.spec.certificates.clone();
    for declared in &certificates {
        let names = declared.names.each_ref().map(String::as_str);
        let entry = match &declared.entry {
            Ok(entry) => entry,
            Err(error) => {
                let results = undecodable(pass, &names, error);
                pass.results.extend(results);
                continue;
            }
        };
        let certificate = serde_json::to_string(entry).unwrap_or_default();
        let ready_units = pass.old_ready_units(&entry.tls_secret);
        let planner = pass.planner;
        let plan = |read: &[Option<ReadSecret>], generate: bool| {
            let json = |i: usize| {
                read.get(i)
                    .and_then(Option::as_ref)
                    .map(|s| s.json.to_text())
            };
            let request = CertificatesRequest {
                certificate: certificate.clone(),
                ca_secret: json(0),
                tls_secret: json(1),
                chain_secret: json(2),
                ready_units: ready_units.clone(),
                generate,
            };
            planner.plan_certificates(&request).map(|plan| plan.secrets)
        };
        match converge(pass, &names, &plan)? {
            Converged::Done(results) => pass.results.extend(results),
            Converged::Stale => return Ok(Flow::Requeue),
        }
    }
    Ok(Flow::Continue)
}
