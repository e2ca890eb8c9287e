//! Step 2, brownfield (`spec.openBao.server`; facts §3.6 "Brownfield"): the AppRole
//! credentials of a server provisioned outside the operator, validated read-only — a
//! login and a capability read, nothing written to the server.
//!
//! With `c` = `spec.openBao.server.credentialsSecretRef.name`, `p` =
//! `<kvMountpoint>/data/probe`; every False row also emits a Warning event named after
//! its reason, with the message, and retries after 30 s:
//!
//! | Case | CredentialsReady | Pass |
//! |---|---|---|
//! | always | (ProvisioningReady removed: nothing provisions a brownfield server) | — |
//! | Secret `c` missing, or its `role-id` missing or empty | False `WaitingForCredentials` "waiting for Secret ns/c to carry a non-empty \"role-id\"" | 30 s |
//! | the same for `secret-id` | False `WaitingForCredentials` "… \"secret-id\"" | 30 s |
//! | a CA bundle Secret named, without a non-empty `ca.crt` | False `WaitingForCredentials` "waiting for Secret ns/ca to carry a non-empty \"ca.crt\"" | 30 s |
//! | the CA cannot be trusted | False `OpenBaoUnreachable` "configuring the OpenBao TLS trust: …" | 30 s |
//! | the login is rejected (400, 403) | False `InvalidCredentials` "logging in to OpenBao with the approle auth method: POST /v1/auth/approle/login: HTTP 400" | 30 s |
//! | the login fails otherwise (no answer, 5xx) | False `OpenBaoUnreachable` (the error) | 30 s |
//! | the capability read is denied (403) | False `InsufficientCapabilities` (the error) | 30 s |
//! | the capability read fails otherwise | False `OpenBaoUnreachable` (the error) | 30 s |
//! | `p` lacks some of create, read, update, delete, list (and no `root`) | False `InsufficientCapabilities` "the AppRole credentials of Secret ns/c lack the delete, list capabilities on \"p\"" | 30 s |
//! | all granted | True `CredentialsAvailable` "Secret ns/c carries AppRole credentials with the create, read, update, delete, list capabilities on \"p\"" | gate passed, 15 min |
//! | reading a Secret fails (other than NotFound) | unchanged | error |
//!
//! Every request carries `X-Vault-Namespace` when `spec.openBao.namespace` is set (the
//! AppRole lives there). The session is revoked at the end, whatever happened.

use crate::conditions::{
    CREDENTIALS_AVAILABLE, CREDENTIALS_READY, INSUFFICIENT_CAPABILITIES, INVALID_CREDENTIALS,
    OPENBAO_UNREACHABLE, PROVISIONING_READY, WAITING_FOR_CREDENTIALS, remove,
};
use crate::error::Error;
use crate::openbao::Client;
use crate::pass::{Gate, Pass, SECRET_STORE_REVALIDATE};
use crate::types::{CA_KEY, OpenBaoServerSpec, OpenBaoStoreSpec, ROLE_ID_KEY, SECRET_ID_KEY};

/// The capabilities Barbican's vault plugin needs on the KV data path, in order.
pub(crate) const REQUIRED_CAPABILITIES: [&str; 5] = ["create", "read", "update", "delete", "list"];

/// The required capabilities `granted` lacks, in order (none when it holds `root`).
pub(crate) fn missing_capabilities(granted: &[String]) -> Vec<&'static str> {
    if granted.iter().any(|c| c == "root") {
        return Vec::new();
    }
    REQUIRED_CAPABILITIES
        .into_iter()
        .filter(|r| !granted.iter().any(|g| g == r))
        .collect()
}

/// `waiting for Secret ns/name to carry a non-empty "key"`.
pub(crate) fn waiting_for(pass: &mut Pass<'_>, name: &str, key: &str) -> Gate {
    let message = format!(
        "waiting for Secret {} to carry a non-empty {key:?}",
        pass.key(name)
    );
    pass.fail(CREDENTIALS_READY, WAITING_FOR_CREDENTIALS, &message)
}

/// Runs step 2 for the brownfield store `spec` describes, whose server is `server`.
pub(crate) fn run(
    pass: &mut Pass<'_>,
    spec: &OpenBaoStoreSpec,
    server: &OpenBaoServerSpec,
) -> Result<Gate, Error> {
    remove(pass.store, PROVISIONING_READY);
    let credentials = server.credentials_secret_ref.name.as_str();
    let Some(role_id) = pass.read_credential(credentials, ROLE_ID_KEY)? else {
        return Ok(waiting_for(pass, credentials, ROLE_ID_KEY));
    };
    let Some(secret_id) = pass.read_credential(credentials, SECRET_ID_KEY)? else {
        return Ok(waiting_for(pass, credentials, SECRET_ID_KEY));
    };
    if let Some(ca) = &server.ca_bundle_secret_ref {
        if pass.read_credential(&ca.name, CA_KEY)?.is_none() {
            return Ok(waiting_for(pass, &ca.name, CA_KEY));
        }
        let secret = wasm_operator_sdk::ObjectRef::of::<k8s_openapi::api::core::v1::Secret>(
            Some(pass.store.namespace()),
            &ca.name,
        );
        if let Err(e) = pass.transport.trust_ca(&secret, CA_KEY) {
            let message = format!("configuring the OpenBao TLS trust: {e}");
            return Ok(pass.fail(CREDENTIALS_READY, OPENBAO_UNREACHABLE, &message));
        }
    }
    let client = Client::new(pass.transport, &server.url, &spec.namespace);
    let gate = validate(pass, &client, spec, credentials, (&role_id, &secret_id));
    pass.revoke(&client);
    Ok(gate)
}

/// The login and the capability read.
fn validate(
    pass: &mut Pass<'_>,
    client: &Client<'_>,
    spec: &OpenBaoStoreSpec,
    credentials: &str,
    (role_id, secret_id): (&str, &str),
) -> Gate {
    if let Err(e) = client.login_approle(role_id, secret_id) {
        let reason = if e.is_invalid_credentials() {
            INVALID_CREDENTIALS
        } else {
            OPENBAO_UNREACHABLE
        };
        return pass.fail(CREDENTIALS_READY, reason, &e.to_string());
    }
    let probe = format!("{}/data/probe", spec.kv_mountpoint);
    let granted = match client.capabilities_self(&probe) {
        Ok(granted) => granted,
        Err(e) => return pass.fail_openbao(CREDENTIALS_READY, INSUFFICIENT_CAPABILITIES, &e),
    };
    let key = pass.key(credentials);
    let missing = missing_capabilities(&granted);
    if !missing.is_empty() {
        let message = format!(
            "the AppRole credentials of Secret {key} lack the {} capabilities on {probe:?}",
            missing.join(", ")
        );
        return pass.fail(CREDENTIALS_READY, INSUFFICIENT_CAPABILITIES, &message);
    }
    let message = format!(
        "Secret {key} carries AppRole credentials with the {} capabilities on {probe:?}",
        REQUIRED_CAPABILITIES.join(", ")
    );
    pass.set(CREDENTIALS_READY, true, CREDENTIALS_AVAILABLE, &message);
    Gate::Passed(SECRET_STORE_REVALIDATE)
}

/// Neither mode is named (admission bypassed): nothing to resolve credentials against
/// (CredentialsReady False `WaitingForCredentials`, a Warning, 30 s).
pub(crate) fn no_server(pass: &mut Pass<'_>) -> Gate {
    pass.fail(
        CREDENTIALS_READY,
        WAITING_FOR_CREDENTIALS,
        "spec.openBao names neither instanceRef nor server; there is no OpenBao server to \
         resolve credentials against",
    )
}

#[cfg(test)]
#[path = "brownfield_tests.rs"]
mod tests;
