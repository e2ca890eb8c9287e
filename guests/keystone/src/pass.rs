//! The state one pass threads through its steps.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use wasm_operator_sdk::{Cluster, Event, EventType, ObjectRef, Owner, log};

use crate::conditions;
use crate::error::Error;
use crate::federation::Federation;
use crate::steps::health_check::{Egress, Probe};
use crate::types::{Keystone, KeystoneStatus};

/// What a step returns: go on (`None`), end the pass and run again after a while, or fail.
pub(crate) type StepResult = Result<Option<Duration>, Error>;

/// RequeueSecretPolling: a gate waiting on Secrets, stores or certificates.
pub(crate) const SECRET_POLLING: Duration = Duration::from_secs(15);
/// RequeueDeploymentPolling: waiting on a rollout.
pub(crate) const DEPLOYMENT_POLLING: Duration = Duration::from_secs(10);
/// Waiting on the database and its Jobs.
pub(crate) const DATABASE_POLLING: Duration = Duration::from_secs(30);
/// `Requeue`: run the next pass at once (after persisting a phase change).
pub(crate) const NEXT_PASS: Duration = Duration::ZERO;

/// One pass over one Keystone.
#[derive(Clone)]
pub(crate) struct Pass<'c> {
    /// The cluster the children live on: the target cluster the Keystone's
    /// `targetClusterRef` names, or the Keystone's own.
    pub(crate) cluster: &'c dyn Cluster,
    /// The Keystone's own cluster: the Keystone itself (its status, finalizers and events)
    /// and its satellites with their Secrets.
    pub(crate) primary_cluster: &'c dyn Cluster,
    /// Why the target cluster the Keystone names could not be opened (the host's text).
    pub(crate) target_error: Option<String>,
    /// The Keystone as the pass found it; its status is what the pass writes.
    pub(crate) keystone: Keystone,
    /// The controller owner of every child.
    pub(crate) owner: Owner,
    /// `{name}-config-{hash}`, once the Config step ran.
    pub(crate) config_map_name: Option<String>,
    /// SHA-256 hex of the database connection string, once DBConnectionSecret ran.
    pub(crate) db_connection_hash: Option<String>,
    /// `{name}-domains-{hash}` when LDAP domains are projected, else empty.
    pub(crate) domains_secret_name: String,
    /// The federation projection, once IdentityBackends projected an OIDC or SAML backend.
    pub(crate) federation: Option<Federation>,
    /// The time of the pass, read once when it starts: every bound the pass checks (the
    /// deletion branch's waits, the health check's probe cache) is computed from it.
    pub(crate) now: Time,
    /// How the health check sends its GET: the plugin's HTTP egress, or a test's answers.
    pub(crate) probe: &'c dyn Probe,
}

impl<'c> Pass<'c> {
    /// A pass over `keystone` (which has a name and a uid), at the current time.
    pub(crate) fn new(cluster: &'c dyn Cluster, keystone: Keystone, owner: Owner) -> Self {
        Self {
            cluster,
            primary_cluster: cluster,
            target_error: None,
            keystone,
            owner,
            config_map_name: None,
            db_connection_hash: None,
            domains_secret_name: String::new(),
            federation: None,
            now: wasm_operator_sdk::blocks::conditions::now(),
            probe: &Egress,
        }
    }

    /// The Keystone's name.
    pub(crate) fn name(&self) -> &str {
        self.keystone.metadata.name.as_deref().unwrap_or_default()
    }

    /// The Keystone's namespace.
    pub(crate) fn namespace(&self) -> &str {
        self.keystone
            .metadata
            .namespace
            .as_deref()
            .unwrap_or_default()
    }

    /// The config ConfigMap's name, which the Config step sets; a [`Error::StepOrder`] of
    /// `step` when it did not run in this pass.
    pub(crate) fn config_map(&self, step: &'static str) -> Result<String, Error> {
        self.config_map_name.clone().ok_or(Error::StepOrder {
            step,
            value: "the config ConfigMap's name",
        })
    }

    /// `namespace/name` of a child named `name`.
    pub(crate) fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.namespace())
    }

    fn generation(&self) -> i64 {
        self.keystone.metadata.generation.unwrap_or_default()
    }

    /// The status's conditions.
    #[cfg(test)]
    pub(crate) fn conditions(
        &self,
    ) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition] {
        self.keystone
            .status
            .as_ref()
            .map_or(&[], |s| s.conditions.as_slice())
    }

    /// The status's condition of `type_`, as the pass found or set it.
    pub(crate) fn conditions_of(
        &self,
        type_: &str,
    ) -> Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> {
        self.keystone
            .status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == type_))
    }

    /// Sets a condition for the Keystone's generation.
    pub(crate) fn condition(&mut self, type_: &str, ready: bool, reason: &str, message: &str) {
        let generation = self.generation();
        let status = self
            .keystone
            .status
            .get_or_insert_with(KeystoneStatus::default);
        conditions::set(
            &mut status.conditions,
            generation,
            type_,
            ready,
            reason,
            message,
        );
    }

    /// The status, created empty when absent.
    pub(crate) fn status_mut(&mut self) -> &mut KeystoneStatus {
        self.keystone
            .status
            .get_or_insert_with(KeystoneStatus::default)
    }

    /// Records an event on the Keystone; a failure to record is logged, not fatal.
    pub(crate) fn event(&self, event_type: EventType, reason: &str, note: &str) {
        let regarding = ObjectRef::of::<Keystone>(Some(self.namespace()), self.name());
        let event = Event {
            event_type,
            reason: reason.to_owned(),
            action: "Reconcile".to_owned(),
            note: note.to_owned(),
        };
        if let Err(e) = self.primary_cluster.record_event(&regarding, &event) {
            log::warn(&format!("{regarding}: cannot record event {reason}: {e}"));
        }
    }
}

impl wasm_operator_sdk::blocks::pipeline::GroupState for Pass<'_> {
    /// A group member hands back its own condition and its writes to the Keystone's
    /// annotations and resourceVersion; nothing else of its copy.
    fn merge_member(&mut self, before: &Self, member: &Self, condition_type: &str) {
        if let Some(from) = &member.keystone.status {
            let into = self.status_mut();
            wasm_operator_sdk::blocks::conditions::adopt_condition(
                &mut into.conditions,
                &from.conditions,
                condition_type,
            );
        }
        wasm_operator_sdk::blocks::pipeline::adopt_metadata_writes(
            &mut self.keystone.metadata,
            &before.keystone.metadata,
            &member.keystone.metadata,
        );
    }
}
