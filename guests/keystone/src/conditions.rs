//! The Keystone's condition types and reasons (facts §1.7), and Ready.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use wasm_operator_sdk::blocks::conditions::{
    FALSE, NewCondition, TRUE, set_aggregate_ready, set_condition,
};

/// The aggregate the SDK sets (`set_aggregate_ready`); named here for the tests.
#[cfg(test)]
pub(crate) const READY: &str = "Ready";
pub(crate) const SECRETS_READY: &str = "SecretsReady";
pub(crate) const FERNET_KEYS_READY: &str = "FernetKeysReady";
pub(crate) const CREDENTIAL_KEYS_READY: &str = "CredentialKeysReady";
pub(crate) const DATABASE_READY: &str = "DatabaseReady";
pub(crate) const DATABASE_TLS_READY: &str = "DatabaseTLSReady";
pub(crate) const POLICY_VALID_READY: &str = "PolicyValidReady";
pub(crate) const DEPLOYMENT_READY: &str = "DeploymentReady";
pub(crate) const KEYSTONE_API_READY: &str = "KeystoneAPIReady";
pub(crate) const HPA_READY: &str = "HPAReady";
pub(crate) const NETWORK_POLICY_READY: &str = "NetworkPolicyReady";
pub(crate) const HTTP_ROUTE_READY: &str = "HTTPRouteReady";
pub(crate) const BOOTSTRAP_READY: &str = "BootstrapReady";
pub(crate) const TRUST_FLUSH_READY: &str = "TrustFlushReady";
pub(crate) const PASSWORD_ROTATION_READY: &str = "PasswordRotationReady";
pub(crate) const IDENTITY_BACKENDS_READY: &str = "IdentityBackendsReady";
pub(crate) const EXTRA_CONFIG_HEALTHY: &str = "ExtraConfigHealthy";

/// The conditions Ready requires, all True (ExtraConfigHealthy is informational).
pub(crate) const READY_SET: &[&str] = &[
    SECRETS_READY,
    FERNET_KEYS_READY,
    CREDENTIAL_KEYS_READY,
    DATABASE_READY,
    DATABASE_TLS_READY,
    POLICY_VALID_READY,
    DEPLOYMENT_READY,
    KEYSTONE_API_READY,
    HPA_READY,
    NETWORK_POLICY_READY,
    HTTP_ROUTE_READY,
    BOOTSTRAP_READY,
    TRUST_FLUSH_READY,
    PASSWORD_ROTATION_READY,
    IDENTITY_BACKENDS_READY,
];

/// Sets a condition for `generation`.
pub(crate) fn set(
    conditions: &mut Vec<Condition>,
    generation: i64,
    type_: &str,
    ready: bool,
    reason: &str,
    message: &str,
) {
    set_condition(
        conditions,
        &NewCondition {
            type_,
            status: if ready { TRUE } else { FALSE },
            reason,
            message,
            observed_generation: generation,
        },
    );
}

/// Recomputes Ready from [`READY_SET`] (True `AllReady` when every one is True, else
/// False `NotAllReady`).
pub(crate) fn recompute_ready(conditions: &mut Vec<Condition>, generation: i64) {
    set_aggregate_ready(conditions, generation, READY_SET);
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_operator_sdk::blocks::conditions::find;

    #[test]
    fn ready_is_true_only_when_all_fifteen_sub_conditions_are_true() {
        let mut conditions = Vec::new();
        for type_ in READY_SET {
            set(&mut conditions, 4, type_, true, "R", "m");
        }
        set(
            &mut conditions,
            4,
            EXTRA_CONFIG_HEALTHY,
            false,
            "OwnedKeysOverridden",
            "m",
        );
        recompute_ready(&mut conditions, 4);
        let ready = find(&conditions, READY).expect("Ready");
        assert_eq!(
            (
                ready.status.as_str(),
                ready.reason.as_str(),
                ready.observed_generation
            ),
            ("True", "AllReady", Some(4))
        );
        set(&mut conditions, 5, HPA_READY, false, "R", "m");
        recompute_ready(&mut conditions, 5);
        let ready = find(&conditions, READY).expect("Ready");
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "NotAllReady")
        );
        assert_eq!(ready.message, "One or more sub-conditions are not ready");
        assert_eq!(READY_SET.len(), 15);
    }
}
