//! The state one pass threads through its steps.

use std::time::Duration;

use wasm_operator_sdk::blocks::conditions::{FALSE, NewCondition, TRUE, set_condition};
use wasm_operator_sdk::{Cluster, Event, EventType, ObjectRef, Owner, log};

use wasm_operator_sdk::blocks::service::{Service, Waiting};

use crate::error::Error;
use crate::types::{Cinder, CinderStatus, DEFAULT_SERVICE_USER};

/// What a step returns: go on (`None`), end the pass and run again after a while, or fail.
pub(crate) type StepResult = Result<Option<Duration>, Error>;

/// A gate waiting on Secrets.
pub(crate) const SECRET_POLLING: Duration = Duration::from_secs(15);
/// Waiting on the database and its Job.
pub(crate) const DATABASE_POLLING: Duration = Duration::from_secs(30);
/// Waiting on a rollout.
pub(crate) const DEPLOYMENT_POLLING: Duration = Duration::from_secs(10);

/// One projected CinderBackend: what its cinder-volume Deployment mounts.
#[derive(Debug, Clone)]
pub(crate) struct BackendProjection {
    /// The backend's name: its section, its volume_backend_name, its Deployment's suffix.
    pub(crate) name: String,
    /// `{cinder}-backend-{name}-{hash}`.
    pub(crate) secret: String,
    /// The backend's spec, as the Deployment needs it (the NFS export, the Ceph names).
    pub(crate) spec: crate::satellites::SatelliteSpec,
}

/// The projected CinderBackupBackend.
#[derive(Debug, Clone)]
pub(crate) struct BackupProjection {
    /// The backup backend's name (its Secret's base is `{cinder}-backup-{name}`).
    pub(crate) name: String,
    /// `{cinder}-backup-{name}-{hash}`.
    pub(crate) secret: String,
    /// Its spec.
    pub(crate) spec: crate::satellites::SatelliteSpec,
}

/// One pass over one Cinder.
pub(crate) struct Pass<'c> {
    /// The cluster the children live on: the target cluster the Cinder's
    /// `targetClusterRef` names, or the Cinder's own.
    pub(crate) cluster: &'c dyn Cluster,
    /// The Cinder's own cluster: the Cinder (its status, finalizers, events) and its
    /// CinderBackends and CinderBackupBackends.
    pub(crate) primary_cluster: &'c dyn Cluster,
    /// Why the target cluster the Cinder names did not open (the host's text).
    pub(crate) target_error: Option<String>,
    /// The Cinder as the pass found it; its status is what the pass writes.
    pub(crate) cinder: Cinder,
    /// The controller owner of every child.
    pub(crate) owner: Owner,
    /// SHA-256 hex of the database connection string, once DBConnectionSecret ran (a
    /// pod annotation: a new password rolls the pods).
    pub(crate) db_connection_hash: String,
    /// The Backends step's projections, by name.
    pub(crate) backends: Vec<BackendProjection>,
    /// The BackupBackend step's projection, when exactly one is credential-ready.
    pub(crate) backup: Option<BackupProjection>,
    /// `{name}-config-{hash}` every Deployment mounts, once the Config step ran.
    pub(crate) config_secret: String,
}

impl<'c> Pass<'c> {
    /// A pass over `cinder`.
    pub(crate) fn new(cluster: &'c dyn Cluster, cinder: Cinder, owner: Owner) -> Self {
        Self {
            cluster,
            primary_cluster: cluster,
            target_error: None,
            cinder,
            owner,
            db_connection_hash: String::new(),
            backends: Vec::new(),
            backup: None,
            config_secret: String::new(),
        }
    }

    /// The Cinder's name.
    pub(crate) fn name(&self) -> &str {
        self.cinder.name()
    }

    /// The Cinder's namespace.
    pub(crate) fn namespace(&self) -> &str {
        self.cinder.namespace()
    }

    /// The Cinder as the SDK's shared service steps take it.
    pub(crate) fn service(&self) -> Service<'_> {
        Service {
            cluster: self.cluster,
            owner: &self.owner,
            namespace: self.cinder.namespace(),
            name: self.cinder.name(),
            title: "Cinder",
            default_user: DEFAULT_SERVICE_USER,
            spec: &self.cinder.spec,
        }
    }

    /// Sets condition `type_` False as `waiting` says.
    pub(crate) fn waiting(&mut self, type_: &str, waiting: &Waiting) {
        self.condition(type_, false, &waiting.reason, &waiting.message);
    }

    /// `namespace/name` of an object in the Cinder's namespace.
    pub(crate) fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.namespace())
    }

    /// The status, created when absent.
    pub(crate) fn status_mut(&mut self) -> &mut CinderStatus {
        self.cinder.status.get_or_insert_with(CinderStatus::default)
    }

    /// Sets condition `type_` for the current generation.
    pub(crate) fn condition(&mut self, type_: &str, ready: bool, reason: &str, message: &str) {
        let generation = self.cinder.metadata.generation.unwrap_or_default();
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

    /// Records an event about the Cinder; a failure to record is logged, not fatal.
    pub(crate) fn event(&self, event_type: EventType, reason: &str, note: &str) {
        let regarding = ObjectRef::of::<Cinder>(Some(self.namespace()), self.name());
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
