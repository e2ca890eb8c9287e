//! What one pass's credential steps share: the cluster the Barbican's children live on,
//! the way to OpenBao, the clock, the store — and how a step reports a waiting or failed
//! state (CobaltCore's `fail`: a False condition, a Warning event named after the reason,
//! and a retry after [`SECRET_STORE_RETRY`]; never an error of the pass).

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use wasm_operator_sdk::blocks::secrets::{self, get_secret_value};
use wasm_operator_sdk::{Cluster, Event, EventType, ObjectRef, log};

use crate::conditions;
use crate::error::Error;
use crate::openbao::{self, Transport};
use crate::types::BarbicanSecretStore;

/// RequeueSecretStoreRetry: every waiting and failure state of the credential steps.
pub(crate) const SECRET_STORE_RETRY: Duration = Duration::from_secs(30);
/// RequeueSecretStoreRevalidate: a store whose credentials the server accepts checks them
/// again after this long (brownfield; managed without a secret-ID TTL).
pub(crate) const SECRET_STORE_REVALIDATE: Duration = Duration::from_secs(15 * 60);

/// Where a credential step left the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// CredentialsReady is True; look again after this long.
    Passed(Duration),
    /// CredentialsReady (or ProvisioningReady) is False; look again after this long.
    Held(Duration),
}

/// One pass's credential steps.
pub(crate) struct Pass<'a> {
    /// The cluster the Barbican's children (and the store's Secrets) live on.
    pub(crate) cluster: &'a dyn Cluster,
    pub(crate) transport: &'a dyn Transport,
    pub(crate) now: Timestamp,
    pub(crate) store: &'a mut BarbicanSecretStore,
}

impl Pass<'_> {
    /// `namespace/name` of the object `name` in the store's namespace.
    pub(crate) fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.store.namespace())
    }

    /// Sets condition `type_` on the store.
    pub(crate) fn set(&mut self, type_: &str, ready: bool, reason: &str, message: &str) {
        conditions::set(self.store, type_, ready, reason, message);
    }

    /// CobaltCore's `fail`: `type_` False under `reason`, a Warning event `reason` with
    /// the message, and a retry after 30 s.
    pub(crate) fn fail(&mut self, type_: &str, reason: &str, message: &str) -> Gate {
        self.set(type_, false, reason, message);
        self.warn(reason, message);
        Gate::Held(SECRET_STORE_RETRY)
    }

    /// CobaltCore's `failOpenBao`: a 403 is the policy gap `denied` names, anything else
    /// the server being out of reach; the call's error text is the message.
    pub(crate) fn fail_openbao(
        &mut self,
        type_: &str,
        denied: &str,
        error: &openbao::Error,
    ) -> Gate {
        let reason = if error.is_permission_denied() {
            denied
        } else {
            conditions::OPENBAO_UNREACHABLE
        };
        self.fail(type_, reason, &error.to_string())
    }

    /// Records a Warning event on the store; a failure to record is logged, not fatal.
    fn warn(&self, reason: &str, note: &str) {
        let regarding =
            ObjectRef::of::<BarbicanSecretStore>(Some(self.store.namespace()), self.store.name());
        let event = Event {
            event_type: EventType::Warning,
            reason: reason.to_owned(),
            action: "Reconcile".to_owned(),
            note: note.to_owned(),
        };
        if let Err(e) = self.cluster.record_event(&regarding, &event) {
            log::warn(&format!("{regarding}: cannot record event {reason}: {e}"));
        }
    }

    /// The value of data key `key` of Secret `name` in the store's namespace; `None` when
    /// the Secret, the key or a value is missing (none of them is something to
    /// authenticate with). Another failed read is an error naming both.
    pub(crate) fn read_credential(&self, name: &str, key: &str) -> Result<Option<String>, Error> {
        match get_secret_value(self.cluster, self.store.namespace(), name, key) {
            Ok(value) => Ok(Some(value).filter(|v| !v.is_empty())),
            Err(secrets::Error::SecretNotFound { .. } | secrets::Error::KeyNotFound { .. }) => {
                Ok(None)
            }
            Err(source) => Err(Error::Secret {
                key: key.to_owned(),
                secret: self.key(name),
                source: Box::new(source),
            }),
        }
    }

    /// Hands an OpenBao session back; a failure is logged (the token expires on its own).
    pub(crate) fn revoke(&self, client: &openbao::Client<'_>) {
        if let Err(e) = client.revoke_self() {
            log::warn(&format!(
                "BarbicanSecretStore {}: {e}",
                self.key(self.store.name())
            ));
        }
    }
}
