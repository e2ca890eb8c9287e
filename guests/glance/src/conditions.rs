//! The Glance's conditions (facts §4) and its aggregate Ready.
//!
//! | Type | Set by | Reasons |
//! |---|---|---|
//! | SecretsReady | [`steps::secrets`](crate::steps::secrets) | T `SecretsAvailable`; F `WaitingForSecrets`, `TargetClusterUnavailable` |
//! | BackendsReady | [`steps::backends`](crate::steps::backends) | T `AllBackendsProjected`; F `NoDefaultBackend`, `WaitingForBackends` |
//! | DatabaseReady | [`steps::database`](crate::steps::database) | T `DatabaseSynced`; F `ClusterNotReady`, `WaitingForDatabase`, `DBSyncInProgress`, `DBSyncFailed` |
//! | DeploymentReady | [`steps::deployment`](crate::steps::deployment) | T `DeploymentReady`; F `WaitingForBackends`, `DeploymentNotReady` |
//! | GlanceAPIReady | [`steps::deployment`](crate::steps::deployment) | T `APIAvailable`; F `WaitingForDeployment` |
//! | HPAReady, NetworkPolicyReady, HTTPRouteReady, DBPurgeReady | [`steps::not_required`](crate::steps::not_required) | T `NotRequired` |
//!
//! Ready is True (`AllReady`) when all nine are True, else False (`NotAllReady`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use wasm_operator_sdk::blocks::conditions::set_aggregate_ready;

pub(crate) const SECRETS_READY: &str = "SecretsReady";
pub(crate) const BACKENDS_READY: &str = "BackendsReady";
pub(crate) const DATABASE_READY: &str = "DatabaseReady";
pub(crate) const DEPLOYMENT_READY: &str = "DeploymentReady";
pub(crate) const GLANCE_API_READY: &str = "GlanceAPIReady";
pub(crate) const HPA_READY: &str = "HPAReady";
pub(crate) const NETWORK_POLICY_READY: &str = "NetworkPolicyReady";
pub(crate) const HTTP_ROUTE_READY: &str = "HTTPRouteReady";
pub(crate) const DB_PURGE_READY: &str = "DBPurgeReady";

/// The sub-conditions Ready aggregates (facts §4).
pub(crate) const READY_SET: [&str; 9] = [
    SECRETS_READY,
    BACKENDS_READY,
    DATABASE_READY,
    DEPLOYMENT_READY,
    GLANCE_API_READY,
    HPA_READY,
    NETWORK_POLICY_READY,
    HTTP_ROUTE_READY,
    DB_PURGE_READY,
];

/// Recomputes Ready over [`READY_SET`].
pub(crate) fn recompute_ready(conditions: &mut Vec<Condition>, generation: i64) {
    set_aggregate_ready(conditions, generation, &READY_SET);
}
