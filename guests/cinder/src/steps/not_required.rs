//! HPA, NetworkPolicy, HTTPRoute and DBPurge (facts §4's parallel group): the minimal
//! parent serves none of their spec blocks, so each condition is True `NotRequired`
//! "<what> is not configured" and nothing is created.

use crate::conditions::{DB_PURGE_READY, HPA_READY, HTTP_ROUTE_READY, NETWORK_POLICY_READY};
use crate::pass::{Pass, StepResult};

/// The conditions and what each stands for.
const NOT_CONFIGURED: [(&str, &str); 4] = [
    (HPA_READY, "autoscaling"),
    (NETWORK_POLICY_READY, "networkPolicy"),
    (HTTP_ROUTE_READY, "gateway"),
    (DB_PURGE_READY, "dbPurge"),
];

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    for (type_, what) in NOT_CONFIGURED {
        pass.condition(
            type_,
            true,
            "NotRequired",
            &format!("{what} is not configured"),
        );
    }
    Ok(None)
}
