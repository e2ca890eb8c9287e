//! Step 2, managed (`spec.openBao.instanceRef`; facts §3.6 "Managed flow"): the
//! OpenBaoCluster `i` is checked as provisioned (ProvisioningReady), then the store's
//! AppRole credentials are minted or refreshed ([`minting`](crate::minting)).
//!
//! Every False row emits a Warning event named after its reason, with the message, and
//! retries after 30 s; `ns` is the store's namespace, `sa` = `i-provisioner`:
//!
//! | Case | ProvisioningReady |
//! |---|---|
//! | no OpenBaoCluster `ns/i` (or its kind not served) | False `InstanceNotFound` "OpenBaoCluster ns/i does not exist" |
//! | it is not `Available` True | False `WaitingForInstance` "OpenBaoCluster ns/i is not Available yet" |
//! | Secret `i-tls-ca` without a non-empty `ca.crt` | False `WaitingForInstanceTLS` "waiting for Secret ns/i-tls-ca to carry the \"ca.crt\" trust bundle of OpenBaoCluster \"i\"" |
//! | the TokenRequest: no ServiceAccount `sa` | False `WaitingForInstance` "waiting for the provisioner ServiceAccount ns/sa of OpenBaoCluster \"i\"" |
//! | the TokenRequest is forbidden | False `ProvisioningDenied` "the operator may not mint a bound token for the provisioner ServiceAccount ns/sa: …" |
//! | the CA cannot be trusted | False `OpenBaoUnreachable` "configuring the OpenBao TLS trust: …" |
//! | the Kubernetes login (role `provisioner`) is denied (403) / fails otherwise | False `ProvisioningDenied` / `OpenBaoUnreachable` "logging in to OpenBao: …" |
//! | reading the mount: 403 / other failure | False `ProvisioningDenied` / `OpenBaoUnreachable` (the error) |
//! | the mount is absent | False `InstanceNotProvisioned` "the KV mount \"barbican\" is not mounted on OpenBaoCluster \"i\"; the instance must run the self-init requests barbican_kv, approle_auth, barbican_approle_role" |
//! | reading the role ID of AppRole `barbican`: 404 | False `InstanceNotProvisioned` "the AppRole \"barbican\" does not exist on OpenBaoCluster \"i\"; the instance must run the self-init requests …" |
//! | … 403 / other failure | False `ProvisioningDenied` / `OpenBaoUnreachable` (the error) |
//! | all there | True `Provisioned` "OpenBaoCluster \"i\" carries the KV mount \"barbican\" and the AppRole \"barbican\""; then the credentials |
//! | a read fails (other than NotFound), the TokenRequest fails otherwise | error |
//!
//! The token is requested for `sa` with audience `i`, valid 10 minutes, used once and never
//! stored. The server is `https://i.ns.svc:8200`, trusting the instance's CA; the
//! provisioner's session is revoked at the end, whatever happened.
//!
//! DECISION: CobaltCore's ProvisioningDenied message for a refused TokenRequest names its
//! Helm chart's `rbac.secretStoreNamespaces`; here the grant is the plugin's declared
//! `create` on `serviceaccounts/token`, which the host refuses outside the pass's
//! namespace reach, so the message names the account and the cluster's error only.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use wasm_operator_sdk::token::request_token;
use wasm_operator_sdk::{ApiError, ClusterExt, Error as SdkError, ObjectRef};

use crate::conditions::{
    INSTANCE_NOT_FOUND, INSTANCE_NOT_PROVISIONED, OPENBAO_UNREACHABLE, PROVISIONED,
    PROVISIONING_DENIED, PROVISIONING_READY, WAITING_FOR_INSTANCE, WAITING_FOR_INSTANCE_TLS,
};
use crate::error::Error;
use crate::instance::{
    CA_SECRET_SUFFIX, OpenBaoCluster, PROVISIONER_ROLE, PROVISIONER_SA_SUFFIX, STORE_APPROLE,
    instance_url, not_provisioned,
};
use crate::minting;
use crate::openbao::Client;
use crate::pass::{Gate, Pass};
use crate::types::{CA_KEY, OpenBaoStoreSpec};

/// How long the provisioner's token lives: it is used once, within the pass.
pub(crate) const PROVISIONER_TOKEN_TTL: Duration = Duration::from_secs(10 * 60);

/// Runs step 2 for the managed store `spec` describes, on instance `instance`.
pub(crate) fn run(
    pass: &mut Pass<'_>,
    spec: &OpenBaoStoreSpec,
    instance: &str,
) -> Result<Gate, Error> {
    let namespace = pass.store.namespace().to_owned();
    let key = pass.key(instance);
    let found: Option<OpenBaoCluster> = pass
        .cluster
        .get_typed(Some(&namespace), instance)
        .map_err(|source| Error::Cluster {
            what: format!("fetching OpenBaoCluster {key}"),
            source,
        })?;
    let Some(cluster) = found else {
        let message = format!("OpenBaoCluster {key} does not exist");
        return Ok(pass.fail(PROVISIONING_READY, INSTANCE_NOT_FOUND, &message));
    };
    if !cluster.is_available() {
        let message = format!("OpenBaoCluster {key} is not Available yet");
        return Ok(pass.fail(PROVISIONING_READY, WAITING_FOR_INSTANCE, &message));
    }
    let ca = format!("{instance}{CA_SECRET_SUFFIX}");
    if pass.read_credential(&ca, CA_KEY)?.is_none() {
        let message = format!(
            "waiting for Secret {} to carry the {CA_KEY:?} trust bundle of OpenBaoCluster {instance:?}",
            pass.key(&ca)
        );
        return Ok(pass.fail(PROVISIONING_READY, WAITING_FOR_INSTANCE_TLS, &message));
    }
    let account = format!("{instance}{PROVISIONER_SA_SUFFIX}");
    let token = match request_token(
        pass.cluster,
        &namespace,
        &account,
        instance,
        PROVISIONER_TOKEN_TTL,
    ) {
        Ok(token) => token.token,
        Err(SdkError::Api(ApiError::NotFound(_))) => {
            let message = format!(
                "waiting for the provisioner ServiceAccount {} of OpenBaoCluster {instance:?}",
                pass.key(&account)
            );
            return Ok(pass.fail(PROVISIONING_READY, WAITING_FOR_INSTANCE, &message));
        }
        Err(SdkError::Api(e @ ApiError::Forbidden(_))) => {
            let message = format!(
                "the operator may not mint a bound token for the provisioner ServiceAccount {}: {e}",
                pass.key(&account)
            );
            return Ok(pass.fail(PROVISIONING_READY, PROVISIONING_DENIED, &message));
        }
        Err(source) => {
            return Err(Error::Cluster {
                what: format!("minting a token for ServiceAccount {}", pass.key(&account)),
                source,
            });
        }
    };
    let secret = ObjectRef::of::<Secret>(Some(&namespace), &ca);
    if let Err(e) = pass.transport.trust_ca(&secret, CA_KEY) {
        let message = format!("configuring the OpenBao TLS trust: {e}");
        return Ok(pass.fail(PROVISIONING_READY, OPENBAO_UNREACHABLE, &message));
    }
    let url = instance_url(instance, &namespace);
    let provisioner = Client::new(pass.transport, &url, "");
    let result = provision(pass, &provisioner, spec, instance, &token);
    let gate = match result {
        Ok(Ok(role_id)) => minting::run(pass, &provisioner, &url, &role_id),
        Ok(Err(gate)) => Ok(gate),
        Err(e) => Err(e),
    };
    pass.revoke(&provisioner);
    gate
}

/// The provisioner's login, the mount and the AppRole: the role ID once all are there
/// (ProvisioningReady True), the gate otherwise.
fn provision(
    pass: &mut Pass<'_>,
    provisioner: &Client<'_>,
    spec: &OpenBaoStoreSpec,
    instance: &str,
    token: &str,
) -> Result<Result<String, Gate>, Error> {
    if let Err(e) = provisioner.login_kubernetes(token, PROVISIONER_ROLE) {
        let reason = if e.is_permission_denied() {
            PROVISIONING_DENIED
        } else {
            OPENBAO_UNREACHABLE
        };
        let message = format!("logging in to OpenBao: {e}");
        return Ok(Err(pass.fail(PROVISIONING_READY, reason, &message)));
    }
    let mount = &spec.kv_mountpoint;
    match provisioner.mount_exists(mount) {
        Ok(true) => {}
        Ok(false) => {
            let gap =
                format!("the KV mount {mount:?} is not mounted on OpenBaoCluster {instance:?}");
            let gate = pass.fail(
                PROVISIONING_READY,
                INSTANCE_NOT_PROVISIONED,
                &not_provisioned(&gap),
            );
            return Ok(Err(gate));
        }
        Err(e) => {
            return Ok(Err(pass.fail_openbao(
                PROVISIONING_READY,
                PROVISIONING_DENIED,
                &e,
            )));
        }
    }
    let role_id = match provisioner.read_role_id(STORE_APPROLE) {
        Ok(role_id) => role_id,
        Err(e) if e.is_not_found() => {
            let gap = format!(
                "the AppRole {STORE_APPROLE:?} does not exist on OpenBaoCluster {instance:?}"
            );
            let gate = pass.fail(
                PROVISIONING_READY,
                INSTANCE_NOT_PROVISIONED,
                &not_provisioned(&gap),
            );
            return Ok(Err(gate));
        }
        Err(e) => {
            return Ok(Err(pass.fail_openbao(
                PROVISIONING_READY,
                PROVISIONING_DENIED,
                &e,
            )));
        }
    };
    let message = format!(
        "OpenBaoCluster {instance:?} carries the KV mount {mount:?} and the AppRole {STORE_APPROLE:?}"
    );
    pass.set(PROVISIONING_READY, true, PROVISIONED, &message);
    Ok(Ok(role_id))
}

#[cfg(test)]
#[path = "managed_tests.rs"]
mod tests;
