//! The credentials gate (facts §4, through the shared credential gate of §3.1).
//!
//! | Gate | Not ready → the parent's SecretsReady False |
//! |---|---|
//! | Secret `spec.database.secretRef.name` with `username` and `password` | `WaitingForDBCredentials` |
//! | Secret `spec.serviceUser.secretRef.name` with its key (`password` by default) | `WaitingForServiceUserCredentials` |

use super::{Error, Service, Waiting};
use crate::blocks::secrets::credentials::{CredentialGate, credential_gate};

/// The first gate that holds, `None` when both pass.
pub fn gate(service: &Service<'_>) -> Result<Option<Waiting>, Error> {
    let spec = service.spec;
    let service_key = [spec.service_user.password_key()];
    let waiting_for_password = format!(
        "Waiting for ESO to sync the {} service-user password from OpenBao",
        service.title
    );
    let gates = [
        (
            CredentialGate {
                noun: "Database credentials",
                namespace: service.namespace,
                name: &spec.database.secret_ref.name,
                expected_keys: &["username", "password"],
                waiting_message: "Waiting for ESO to sync database credentials from OpenBao",
            },
            "WaitingForDBCredentials",
        ),
        (
            CredentialGate {
                noun: "Service-user credentials",
                namespace: service.namespace,
                name: &spec.service_user.secret_ref.name,
                expected_keys: &service_key,
                waiting_message: &waiting_for_password,
            },
            "WaitingForServiceUserCredentials",
        ),
    ];
    for (gate, reason) in gates {
        let outcome = credential_gate(service.cluster, &gate).map_err(|source| Error::Secrets {
            what: format!("checking Secret {}", service.key(gate.name)),
            source,
        })?;
        if let Some(condition) = outcome.condition("", reason, 0) {
            return Ok(Some(Waiting::new(reason, condition.message)));
        }
    }
    Ok(None)
}
