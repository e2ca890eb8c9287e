//! The state one pass threads through its steps.

use std::time::Duration;

use wasm_operator_sdk::blocks::conditions::{FALSE, NewCondition, TRUE, set_condition};
use wasm_operator_sdk::{Cluster, Event, EventType, ObjectRef, Owner, log};

use wasm_operator_sdk::blocks::service::{Service, Waiting};

use crate::error::Error;
use crate::types::{DEFAULT_SERVICE_USER, Glance, GlanceStatus};

/// What a step returns: go on (`None`), end the pass and run again after a while, or fail.
pub(crate) type StepResult = Result<Option<Duration>, Error>;

/// A gate waiting on Secrets.
pub(crate) const SECRET_POLLING: Duration = Duration::from_secs(15);
/// Waiting on the database and its Job.
pub(crate) const DATABASE_POLLING: Duration = Duration::from_secs(30);
/// Waiting on a rollout.
pub(crate) const DEPLOYMENT_POLLING: Duration = Duration::from_secs(10);

/// What the Backends step hands the Config and Deployment steps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Projection {
    /// Whether exactly one credential-ready backend is the default; only then is the
    /// projection rendered, otherwise the last good one the Deployment mounts is kept.
    pub(crate) valid: bool,
    /// `[DEFAULT] enabled_backends`: `<name>:s3,…` over the rendered backends, by name.
    pub(crate) enabled_backends: String,
    /// `[glance_store] default_backend`.
    pub(crate) default_backend: String,
    /// `{name}-backends-{hash}`.
    pub(crate) secret_name: String,
    /// The S3 host of every attached backend (for egress).
    pub(crate) hosts: Vec<String>,
}

/// One pass over one Glance.
pub(crate) struct Pass<'c> {
    /// The cluster the children live on: the target cluster the Glance's
    /// `targetClusterRef` names, or the Glance's own.
    pub(crate) cluster: &'c dyn Cluster,
    /// The Glance's own cluster: the Glance (its status, finalizers, events) and its
    /// GlanceBackends.
    pub(crate) primary_cluster: &'c dyn Cluster,
    /// Why the target cluster the Glance names did not open (the host's text).
    pub(crate) target_error: Option<String>,
    /// The Glance as the pass found it; its status is what the pass writes.
    pub(crate) glance: Glance,
    /// The controller owner of every child.
    pub(crate) owner: Owner,
    /// SHA-256 hex of the database connection string, once DBConnectionSecret ran (a
    /// pod annotation: a new password rolls the pods).
    pub(crate) db_connection_hash: String,
    /// The Backends step's projection.
    pub(crate) projection: Projection,
    /// `{name}-config-{hash}` the Deployment mounts, once the Config step ran (empty when
    /// there is neither a valid projection nor a last good config).
    pub(crate) config_secret: String,
    /// `{name}-backends-{hash}` the Deployment mounts (empty as above).
    pub(crate) backends_secret: String,
}

impl<'c> Pass<'c> {
    /// A pass over `glance`.
    pub(crate) fn new(cluster: &'c dyn Cluster, glance: Glance, owner: Owner) -> Self {
        Self {
            cluster,
            primary_cluster: cluster,
            target_error: None,
            glance,
            owner,
            db_connection_hash: String::new(),
            projection: Projection::default(),
            config_secret: String::new(),
            backends_secret: String::new(),
        }
    }

    /// The Glance's name.
    pub(crate) fn name(&self) -> &str {
        self.glance.name()
    }

    /// The Glance's namespace.
    pub(crate) fn namespace(&self) -> &str {
        self.glance.namespace()
    }

    /// The Glance as the SDK's shared service steps take it.
    pub(crate) fn service(&self) -> Service<'_> {
        Service {
            cluster: self.cluster,
            owner: &self.owner,
            namespace: self.glance.namespace(),
            name: self.glance.name(),
            title: "Glance",
            default_user: DEFAULT_SERVICE_USER,
            spec: &self.glance.spec,
        }
    }

    /// Sets condition `type_` False as `waiting` says.
    pub(crate) fn waiting(&mut self, type_: &str, waiting: &Waiting) {
        self.condition(type_, false, &waiting.reason, &waiting.message);
    }

    /// `namespace/name` of an object in the Glance's namespace.
    pub(crate) fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.namespace())
    }

    /// The status, created when absent.
    pub(crate) fn status_mut(&mut self) -> &mut GlanceStatus {
        self.glance.status.get_or_insert_with(GlanceStatus::default)
    }

    /// Sets condition `type_` for the current generation.
    pub(crate) fn condition(&mut self, type_: &str, ready: bool, reason: &str, message: &str) {
        let generation = self.glance.metadata.generation.unwrap_or_default();
        set_condition(
            &mut self.status_mut().conditions,
            &NewCondition {
                type_,
                status: if ready { TRUE } else { FALSE },
                reason,
                message,
                observed_generation: generation,
            },
        );
    }

    /// Records an event about the Glance; a failure to record is logged, not fatal.
    pub(crate) fn event(&self, event_type: EventType, reason: &str, note: &str) {
        let regarding = ObjectRef::of::<Glance>(Some(self.namespace()), self.name());
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
