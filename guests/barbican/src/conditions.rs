//! The Barbican's conditions (facts §4) and its aggregate Ready.
//!
//! | Type | Set by | Reasons |
//! |---|---|---|
//! | SecretsReady | [`steps::secrets`](crate::steps::secrets) | T `SecretsAvailable`; F `WaitingForSecrets`, `TargetClusterUnavailable` |
//! | SecretStoresReady | [`steps::secret_stores`](crate::steps::secret_stores) | T `AllStoresProjected`; F `NoDefaultSecretStore`, `MultipleOpenBaoStores`, `WaitingForSecretStores` |
//! | DatabaseReady | [`steps::database`](crate::steps::database) | T `DatabaseSynced`; F `ClusterNotReady`, `WaitingForDatabase`, `DBSyncInProgress`, `DBSyncFailed` |
//! | DeploymentReady | [`steps::deployment`](crate::steps::deployment) | T `DeploymentReady`; F `WaitingForSecretStores`, `DeploymentNotReady` |
//! | BarbicanAPIReady | [`steps::deployment`](crate::steps::deployment) | T `APIAvailable`; F `WaitingForDeployment` |
//! | HPAReady, NetworkPolicyReady, HTTPRouteReady, DBCleanReady | [`steps::not_required`](crate::steps::not_required) | T `NotRequired` |
//!
//! Ready is True (`AllReady`) when all nine are True, else False (`NotAllReady`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use wasm_operator_sdk::blocks::conditions::set_aggregate_ready;

pub(crate) const SECRETS_READY: &str = "SecretsReady";
pub(crate) const SECRET_STORES_READY: &str = "SecretStoresReady";
pub(crate) const DATABASE_READY: &str = "DatabaseReady";
pub(crate) const DEPLOYMENT_READY: &str = "DeploymentReady";
pub(crate) const BARBICAN_API_READY: &str = "BarbicanAPIReady";
pub(crate) const HPA_READY: &str = "HPAReady";
pub(crate) const NETWORK_POLICY_READY: &str = "NetworkPolicyReady";
pub(crate) const HTTP_ROUTE_READY: &str = "HTTPRouteReady";
pub(crate) const DB_CLEAN_READY: &str = "DBCleanReady";

/// The sub-conditions Ready aggregates (facts §4).
pub(crate) const READY_SET: [&str; 9] = [
    SECRETS_READY,
    DATABASE_READY,
    SECRET_STORES_READY,
    DEPLOYMENT_READY,
    BARBICAN_API_READY,
    HPA_READY,
    NETWORK_POLICY_READY,
    HTTP_ROUTE_READY,
    DB_CLEAN_READY,
];

/// Recomputes Ready over [`READY_SET`].
pub(crate) fn recompute_ready(conditions: &mut Vec<Condition>, generation: i64) {
    set_aggregate_ready(conditions, generation, &READY_SET);
}
