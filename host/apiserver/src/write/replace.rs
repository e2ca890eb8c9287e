//! The write of an existing object (update, patch, apply) around its admission webhooks:
//! the replacement is computed from a snapshot of the stored object, the mutating
//! webhooks, the server's admission and the validating webhooks run without the state
//! lock, and the commit happens only if the stored object is still the one the
//! replacement was computed from; otherwise the whole write is computed again from the
//! new stored object (as kube-apiserver's `GuaranteedUpdate` retries), so a request that
//! names a resourceVersion gets its 409 and one that does not is applied to the latest.

use serde_json::{Value, json};

use super::commit::{self, existing};
use super::create::insert;
use super::{Manager, Written};
use crate::authn::User;
use crate::route::{Params, Target};
use crate::server::{Shared, State};
use crate::status::{ApiError, Result};
use crate::webhooks::{self, Attributes, Operation, resource_version};

/// How often a write is computed again because the object changed under it.
pub(super) const ATTEMPTS: usize = 8;

/// What a write does with the stored object.
pub(super) enum Next {
    /// Replace `old` with `new`.
    Replace {
        old: Value,
        new: Value,
        manager: Manager,
    },
    /// There is no object: create this one (server-side apply).
    Create { object: Value, manager: Manager },
}

/// Runs the write `compute` describes against the stored object `name`, with its
/// webhooks (see the module).
pub(super) async fn replace(
    shared: &Shared,
    target: &Target,
    name: &str,
    params: &Params,
    user: &User,
    compute: impl Fn(&State) -> Result<Next>,
) -> Result<Written> {
    let rt = &target.rt;
    for _ in 0..ATTEMPTS {
        let next = compute(&shared.lock())?;
        let (old, new, manager) = match next {
            Next::Create { object, manager } => {
                return insert(shared, target, params, object, manager, user).await;
            }
            Next::Replace { old, new, manager } => (old, new, manager),
        };
        // The options carry the fieldManager the request named (not the one derived from
        // its user agent), as kube-apiserver's do.
        let field_manager = params.get("fieldManager");
        let attrs = Attributes {
            target,
            name: name.to_owned(),
            operation: Operation::Update,
            old: Some(old.clone()),
            dry_run: params.dry_run(),
            options: webhooks::options("UpdateOptions", params.dry_run(), field_manager),
            user,
        };
        let (mutated, mut warnings) = webhooks::mutate(shared, &attrs, Some(new)).await?;
        let new = mutated.unwrap_or_else(|| json!({}));
        let mut prepared = commit::prepare(target, name, &old, new, manager, params)?;
        warnings.append(&mut prepared.warnings);
        warnings.extend(webhooks::validate(shared, &attrs, Some(&prepared.object)).await?);
        let mut state = shared.lock();
        crate::rbac::check_escalation(&state.store, user, &target.rt, &prepared.object)?;
        if !unchanged(&state, target, name, &old) {
            continue;
        }
        return commit::finish(&mut state, shared, rt, prepared, warnings);
    }
    Err(ApiError::modified(rt, name))
}

/// Whether the stored object `name` still is `old` (same resourceVersion).
pub(super) fn unchanged(state: &State, target: &Target, name: &str, old: &Value) -> bool {
    existing(state, target, name)
        .ok()
        .is_some_and(|current| resource_version(&current) == resource_version(old))
}
