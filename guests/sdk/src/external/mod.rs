//! Types for the CRDs of the operators CobaltCore builds on: mariadb-operator
//! (`k8s.mariadb.com/v1alpha1`), External Secrets (`external-secrets.io/v1` and `v1alpha1`),
//! cert-manager (`cert-manager.io/v1`) and the Gateway API (`gateway.networking.k8s.io/v1`).
//!
//! Field names are those of the upstream CRDs. Each type carries the fields the building
//! blocks set or read; every field is optional and skipped when unset, so a value built in
//! code serializes into a server-side apply body holding only what the builder set. The
//! CRD YAML the embedded API server serves for these kinds is in `crds/external/`.
//!
//! DECISION: one lenient [`StatusCondition`] for all of them. Their condition
//! structs differ in which fields are required (ESO has no observedGeneration, mariadb uses
//! `metav1.Condition`), and the blocks only ever read type, status, reason and message.

pub mod certmanager;
pub mod eso;
pub mod gateway;
pub mod mariadb;

use serde::{Deserialize, Serialize};

/// One condition of an external operator's status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusCondition {
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The status block every external kind here shares: its conditions (other status fields
/// are not read and are dropped on decode).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionsStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<StatusCondition>,
}

/// The `Ready` condition type mariadb-operator, External Secrets and cert-manager use.
pub const READY: &str = "Ready";

/// Whether `conditions` holds `condition_type` with status `True`.
pub fn condition_true(conditions: &[StatusCondition], condition_type: &str) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == condition_type && c.status == "True")
}

/// Whether an optional status reports `Ready=True`.
pub fn status_ready(status: Option<&ConditionsStatus>) -> bool {
    status.is_some_and(|s| condition_true(&s.conditions, READY))
}

/// [`crate::custom_resource!`] for the external kinds of this module.
macro_rules! external_kind {
    ($($args:tt)*) => {
        $crate::custom_resource!($($args)*);
    };
}
pub(crate) use external_kind;

#[cfg(test)]
mod crd_tests;
