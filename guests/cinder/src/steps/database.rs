//! Database (facts §4): the SDK's [`database`] block with `cinder-manage db sync`, on
//! DatabaseReady. Waiting → its reason, 30 s; a failed sync → DBSyncFailed, a Warning
//! event of that reason, and the pass fails; synced → installedRelease =
//! spec.openStackRelease and DatabaseReady True `DatabaseSynced` "Database schema is up to
//! date".
//!
//! DECISION: no upgrade flow (expand/migrate/contract) and no schema check: a new image
//! re-runs the plain sync (the Job's re-run key is its pod template).

use wasm_operator_sdk::EventType;
use wasm_operator_sdk::blocks::service::database::{self, DatabaseState};

use crate::conditions::DATABASE_READY;
use crate::error::Error;
use crate::pass::{DATABASE_POLLING, Pass, StepResult};

/// The schema sync.
pub(crate) const SYNC_COMMAND: [&str; 3] = ["cinder-manage", "db", "sync"];

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    match database::ensure(&pass.service(), &SYNC_COMMAND)? {
        DatabaseState::Waiting(waiting) => {
            pass.waiting(DATABASE_READY, &waiting);
            Ok(Some(DATABASE_POLLING))
        }
        DatabaseState::Failed(failed, source) => {
            pass.waiting(DATABASE_READY, &failed);
            pass.event(EventType::Warning, &failed.reason, &failed.message);
            Err(Error::Job { source })
        }
        DatabaseState::Synced => {
            let release = pass.cinder.spec.open_stack_release.clone();
            pass.status_mut().service.installed_release = release;
            pass.condition(
                DATABASE_READY,
                true,
                "DatabaseSynced",
                "Database schema is up to date",
            );
            Ok(None)
        }
    }
}
