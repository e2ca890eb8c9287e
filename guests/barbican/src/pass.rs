//! The state one pass threads through its steps.

use std::time::Duration;

use wasm_operator_sdk::blocks::conditions::{FALSE, NewCondition, TRUE, set_condition};
use wasm_operator_sdk::{Cluster, Event, EventType, ObjectRef, Owner, log};

use wasm_operator_sdk::blocks::config::ini::Sections;

use wasm_operator_sdk::blocks::service::{Service, Waiting};

use crate::error::Error;
use crate::types::{Barbican, BarbicanStatus, DEFAULT_SERVICE_USER};

/// What a step returns: go on (`None`), end the pass and run again after a while, or fail.
pub(crate) type StepResult = Result<Option<Duration>, Error>;

/// A gate waiting on Secrets.
pub(crate) const SECRET_POLLING: Duration = Duration::from_secs(15);
/// Waiting on the database and its Job.
pub(crate) const DATABASE_POLLING: Duration = Duration::from_secs(30);
/// Waiting on a rollout.
pub(crate) const DEPLOYMENT_POLLING: Duration = Duration::from_secs(10);

/// What the SecretStores step hands the Config and Deployment steps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Projection {
    /// Whether exactly one credential-ready store is the default, at most one is of type
    /// OpenBao, and the default's credentials were read; only then is the config
    /// rendered, otherwise the last good one the Deployment runs is kept.
    pub(crate) valid: bool,
    /// `[secretstore]`, one `[secretstore:<store>]` per credential-ready store, and
    /// `[vault_plugin]` from the default store.
    pub(crate) sections: Sections,
    /// The Secret with the default store's AppRole credentials (`secret-id` reaches the
    /// pods as `OS_VAULT_PLUGIN__APPROLE_SECRET_ID`).
    pub(crate) credentials_secret: String,
    /// SHA-256 hex of the secret ID (a pod annotation: a new secret ID rolls the pods).
    pub(crate) secret_id_digest: String,
    /// The Secret with the OpenBao server's CA bundle, when there is one.
    pub(crate) ca_secret: Option<String>,
    /// The server URL of every credential-ready store.
    pub(crate) hosts: Vec<String>,
}

/// One pass over one Barbican.
pub(crate) struct Pass<'c> {
    /// The cluster the children live on: the target cluster the Barbican's
    /// `targetClusterRef` names, or the Barbican's own.
    pub(crate) cluster: &'c dyn Cluster,
    /// The Barbican's own cluster: the Barbican (its status, finalizers, events) and its
    /// BarbicanSecretStores.
    pub(crate) primary_cluster: &'c dyn Cluster,
    /// Why the target cluster the Barbican names did not open (the host's text).
    pub(crate) target_error: Option<String>,
    /// The Barbican as the pass found it; its status is what the pass writes.
    pub(crate) barbican: Barbican,
    /// The controller owner of every child.
    pub(crate) owner: Owner,
    /// SHA-256 hex of the database connection string, once DBConnectionSecret ran (a
    /// pod annotation: a new password rolls the pods).
    pub(crate) db_connection_hash: String,
    /// The SecretStores step's projection.
    pub(crate) projection: Projection,
    /// `{name}-config-{hash}` the Deployment mounts, once the Config step rendered one
    /// (empty on an invalid projection: the running Deployment keeps its own).
    pub(crate) config_secret: String,
}

impl<'c> Pass<'c> {
    /// A pass over `barbican`.
    pub(crate) fn new(cluster: &'c dyn Cluster, barbican: Barbican, owner: Owner) -> Self {
        Self {
            cluster,
            primary_cluster: cluster,
            target_error: None,
            barbican,
            owner,
            db_connection_hash: String::new(),
            projection: Projection::default(),
            config_secret: String::new(),
        }
    }

    /// The Barbican's name.
    pub(crate) fn name(&self) -> &str {
        self.barbican.name()
    }

    /// The Barbican's namespace.
    pub(crate) fn namespace(&self) -> &str {
        self.barbican.namespace()
    }

    /// The Barbican as the SDK's shared service steps take it.
    pub(crate) fn service(&self) -> Service<'_> {
        Service {
            cluster: self.cluster,
            owner: &self.owner,
            namespace: self.barbican.namespace(),
            name: self.barbican.name(),
            title: "Barbican",
            default_user: DEFAULT_SERVICE_USER,
            spec: &self.barbican.spec,
        }
    }

    /// Sets condition `type_` False as `waiting` says.
    pub(crate) fn waiting(&mut self, type_: &str, waiting: &Waiting) {
        self.condition(type_, false, &waiting.reason, &waiting.message);
    }

    /// `namespace/name` of an object in the Barbican's namespace.
    pub(crate) fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.namespace())
    }

    /// The status, created when absent.
    pub(crate) fn status_mut(&mut self) -> &mut BarbicanStatus {
        self.barbican
            .status
            .get_or_insert_with(BarbicanStatus::default)
    }

    /// Sets condition `type_` for the current generation.
    pub(crate) fn condition(&mut self, type_: &str, ready: bool, reason: &str, message: &str) {
        let generation = self.barbican.metadata.generation.unwrap_or_default();
        set_condition(
            &mut self.status_mut().service.conditions,
            &NewCondition {
                type_,
                status: if ready { TRUE } else { FALSE },
                reason,
                message,
                observed_generation: generation,
            },
        );
    }

    /// Records an event about the Barbican; a failure to record is logged, not fatal.
    pub(crate) fn event(&self, event_type: EventType, reason: &str, note: &str) {
        let regarding = ObjectRef::of::<Barbican>(Some(self.namespace()), self.name());
        let event = Event {
            event_type,
            reason: reason.to_owned(),
            action: "Reconcile".to_owned(),
            note: note.to_owned(),
        };
        if let Err(e) = self.primary_cluster.record_event(&regarding, &event) {
            log::warn(&format!("recording event {reason} on {regarding}: {e}"));
        }
    }
}
