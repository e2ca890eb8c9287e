//! The Cinder's conditions (facts §4) and its aggregate Ready.
//!
//! | Type | Set by | Reasons |
//! |---|---|---|
//! | SecretsReady | [`steps::secrets`](crate::steps::secrets) | T `SecretsAvailable`; F `WaitingForSecrets`, `TargetClusterUnavailable` |
//! | BackendsReady | [`steps::backends`](crate::steps::backends) | T `AllBackendsProjected`, `NoBackends`; F `WaitingForBackends` |
//! | BackupBackendReady | [`steps::backup_backend`](crate::steps::backup_backend) | T `BackupBackendProjected`, `NoBackupBackend`; F `WaitingForBackupBackend`, `MultipleBackupBackends` |
//! | VolumeServicesReady | [`steps::volume_services`](crate::steps::volume_services) | T `AllVolumeServicesReady`, `NoBackends`; F `WaitingForVolumeServices`, `ServiceRemoveJobFailed` |
//! | BackupServiceReady | [`steps::backup_service`](crate::steps::backup_service) | T `BackupServiceReady`, `BackupNotConfigured`; F `WaitingForBackupService` |
//! | DatabaseReady | [`steps::database`](crate::steps::database) | T `DatabaseSynced`; F `ClusterNotReady`, `WaitingForDatabase`, `DBSyncInProgress`, `DBSyncFailed` |
//! | DeploymentReady | [`steps::deployment`](crate::steps::deployment) | T `DeploymentReady`; F `DeploymentNotReady` |
//! | CinderAPIReady | [`steps::deployment`](crate::steps::deployment) | T `APIAvailable`; F `WaitingForDeployment` |
//! | HPAReady, NetworkPolicyReady, HTTPRouteReady, DBPurgeReady | [`steps::not_required`](crate::steps::not_required) | T `NotRequired` |
//!
//! Ready is True (`AllReady`) when all twelve are True, else False (`NotAllReady`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use wasm_operator_sdk::blocks::conditions::set_aggregate_ready;

pub(crate) const SECRETS_READY: &str = "SecretsReady";
pub(crate) const BACKENDS_READY: &str = "BackendsReady";
pub(crate) const BACKUP_BACKEND_READY: &str = "BackupBackendReady";
pub(crate) const VOLUME_SERVICES_READY: &str = "VolumeServicesReady";
pub(crate) const BACKUP_SERVICE_READY: &str = "BackupServiceReady";
pub(crate) const DATABASE_READY: &str = "DatabaseReady";
pub(crate) const DEPLOYMENT_READY: &str = "DeploymentReady";
pub(crate) const CINDER_API_READY: &str = "CinderAPIReady";
pub(crate) const HPA_READY: &str = "HPAReady";
pub(crate) const NETWORK_POLICY_READY: &str = "NetworkPolicyReady";
pub(crate) const HTTP_ROUTE_READY: &str = "HTTPRouteReady";
pub(crate) const DB_PURGE_READY: &str = "DBPurgeReady";

/// The sub-conditions Ready aggregates.
///
/// DECISION: facts §4 gives no Ready set for Cinder; this is Glance's with the Cinder
/// aggregation and service conditions.
pub(crate) const READY_SET: [&str; 12] = [
    SECRETS_READY,
    BACKENDS_READY,
    BACKUP_BACKEND_READY,
    VOLUME_SERVICES_READY,
    BACKUP_SERVICE_READY,
    DATABASE_READY,
    DEPLOYMENT_READY,
    CINDER_API_READY,
    HPA_READY,
    NETWORK_POLICY_READY,
    HTTP_ROUTE_READY,
    DB_PURGE_READY,
];

/// Recomputes Ready over [`READY_SET`].
pub(crate) fn recompute_ready(conditions: &mut Vec<Condition>, generation: i64) {
    set_aggregate_ready(conditions, generation, &READY_SET);
}
