//! The state one pass threads through its steps, and how a step ends.

use std::ops::ControlFlow;
use std::time::Duration;

use wasm_operator_sdk::{Cluster, Event, EventType, ObjectRef, log};

use crate::conditions;
use crate::error::Error;
use crate::identity::Transport;
use crate::types::{KeystoneIdentityBackend, KeystoneIdentityBackendStatus};

/// RequeueSecretPolling: waiting on a Secret, the projection or the rollout.
pub(crate) const SECRET_POLLING: Duration = Duration::from_secs(15);
/// RequeueDatabaseWait: waiting on something in Keystone someone else provisions, or on
/// a failed deletion.
pub(crate) const IDENTITY_WAIT: Duration = Duration::from_secs(30);
/// `Requeue`: run the next pass at once (after the finalizer was added).
pub(crate) const NEXT_PASS: Duration = Duration::ZERO;

/// How a step ends: go on with `T`, or end the pass (`Break`) asking to run again after
/// a while (`Some`) or on the next change (`None`).
pub(crate) type Flow<T = ()> = Result<ControlFlow<Option<Duration>, T>, Error>;

/// One pass over one backend.
pub(crate) struct Pass<'c> {
    /// The management cluster: the backend, its Keystone and the Keystone's Deployment.
    pub(crate) cluster: &'c dyn Cluster,
    /// How identity requests are sent.
    pub(crate) transport: &'c dyn Transport,
    /// The backend as the pass found it; its status is what the pass writes.
    pub(crate) backend: KeystoneIdentityBackend,
}

impl<'c> Pass<'c> {
    /// The backend's name.
    pub(crate) fn name(&self) -> &str {
        self.backend.name()
    }

    /// The backend's namespace.
    pub(crate) fn namespace(&self) -> &str {
        self.backend.namespace()
    }

    /// `namespace/name` of an object named `name` in the backend's namespace.
    pub(crate) fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.namespace())
    }

    /// The status, created empty when absent.
    pub(crate) fn status_mut(&mut self) -> &mut KeystoneIdentityBackendStatus {
        self.backend.status.get_or_insert_with(Default::default)
    }

    /// `status.domainID`, empty when unknown.
    pub(crate) fn domain_id(&self) -> &str {
        self.backend
            .status
            .as_ref()
            .map_or("", |s| s.domain_id.as_str())
    }

    /// Whether the condition `type_` stands True.
    pub(crate) fn is_true(&self, type_: &str) -> bool {
        self.backend
            .status
            .as_ref()
            .is_some_and(|s| wasm_operator_sdk::blocks::conditions::is_true(&s.conditions, type_))
    }

    /// Sets a condition for the backend's generation, under the transient-reason rule.
    pub(crate) fn condition(&mut self, type_: &str, ready: bool, reason: &str, message: &str) {
        let generation = self.backend.metadata.generation.unwrap_or_default();
        let status = self.status_mut();
        conditions::set(
            &mut status.conditions,
            generation,
            type_,
            ready,
            reason,
            message,
        );
    }

    /// Records an event on the backend; a failure to record is logged, not fatal.
    pub(crate) fn event(&self, event_type: EventType, reason: &str, note: &str) {
        let regarding =
            ObjectRef::of::<KeystoneIdentityBackend>(Some(self.namespace()), self.name());
        let event = Event {
            event_type,
            reason: reason.to_owned(),
            action: "Reconcile".to_owned(),
            note: note.to_owned(),
        };
        if let Err(e) = self.cluster.record_event(&regarding, &event) {
            log::warn(&format!("{regarding}: cannot record event {reason}: {e}"));
        }
    }
}
