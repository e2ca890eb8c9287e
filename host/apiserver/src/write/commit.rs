//! Storing a write: the server's rules for replacing a stored object (update, patch,
//! apply), and what follows every change to the store.

use serde_json::{Value, json};

use super::{Manager, Written};
use crate::admission::{self, Admitted};
use crate::objects::{
    as_written, for_storage, generation_relevant, has_finalizers, is_deleting, key_for, meta_str,
    metadata_mut, without_volatile,
};
use crate::registry::ResourceType;
use crate::route::{Params, Target};
use crate::server::{Shared, State};
use crate::status::{ApiError, Result};
use crate::store::StoreKey;
use crate::{lifecycle, managed};

/// The stored object `name` of the target, or 404.
pub(super) fn existing(state: &State, target: &Target, name: &str) -> Result<Value> {
    let rt = &target.rt;
    state
        .store
        .get(&key_for(rt, target.namespace.as_deref(), name))
        .map(|o| as_written(o, rt))
        .ok_or_else(|| ApiError::not_found(rt, name))
}

/// 409 when `request` names a resourceVersion other than the stored object's (optimistic
/// concurrency of update and patch).
pub(super) fn check_resource_version(
    rt: &ResourceType,
    name: &str,
    request: &Value,
    stored: &Value,
) -> Result<()> {
    match meta_str(request, "resourceVersion") {
        Some(rv) if Some(rv) != meta_str(stored, "resourceVersion") => {
            Err(ApiError::modified(rt, name))
        }
        _ => Ok(()),
    }
}

/// `incoming` as a write of the main resource (`sub` = None) or of a subresource sees it:
/// a status write takes only status (and managedFields) onto `old`; a main write keeps the
/// stored status.
pub(super) fn merge_write(old: &Value, mut incoming: Value, sub: Option<&str>) -> Value {
    match sub {
        Some("status") => {
            let mut new = old.clone();
            if let (Some(map), Some(status)) = (new.as_object_mut(), incoming.get("status")) {
                map.insert("status".into(), status.clone());
            } else if let Some(map) = new.as_object_mut() {
                map.remove("status");
            }
            // Metadata writes through status are limited to what the status strategy keeps.
            if let (Some(fields), Some(meta)) = (
                incoming.pointer("/metadata/managedFields").cloned(),
                new.get_mut("metadata"),
            ) {
                meta["managedFields"] = fields;
            }
            new
        }
        _ => {
            if let (Some(map), Some(status)) = (incoming.as_object_mut(), old.get("status")) {
                map.insert("status".into(), status.clone());
            }
            incoming
        }
    }
}

/// What storing a prepared replacement does.
enum Outcome {
    /// The object changed: store it.
    Store,
    /// The object is deleting and has no finalizers left: remove it.
    Remove,
    /// Nothing changed (answer the stored object) or a dry run (answer the new one).
    Answer,
}

/// A replacement ready to commit: the object as it would be stored.
pub(super) struct Prepared {
    key: StoreKey,
    /// The object as it would be stored (what validating webhooks see).
    pub(super) object: Value,
    /// What the request answers when nothing is stored.
    answer: Value,
    outcome: Outcome,
    /// The server's admission warnings.
    pub(super) warnings: Vec<String>,
}

/// Prepares `new` to replace `old`, with the server's rules for metadata, status,
/// generation, managedFields, immutability and deletion; touches no state.
///
/// A main-resource write of a kind with a status subresource keeps `old`'s status.
/// Admission runs on `new`; uid, creationTimestamp, deletion fields, namespace and name are
/// `old`'s; generation is bumped when the spec changes. An object that is deleting and has
/// no finalizers left is to be removed. An unchanged object is not to be stored (the
/// answer is `old`); a dry run answers `new` without storing it.
pub(super) fn prepare(
    target: &Target,
    name: &str,
    old: &Value,
    mut new: Value,
    manager: Manager,
    params: &Params,
) -> Result<Prepared> {
    let rt = &target.rt;
    let sub = target.subresource.as_deref();
    if rt.status && sub.is_none() {
        match (new.as_object_mut(), old.get("status")) {
            (Some(map), Some(status)) => {
                map.insert("status".into(), status.clone());
            }
            (Some(map), None) => {
                map.remove("status");
            }
            _ => {}
        }
    }
    let Admitted {
        object: admitted,
        warnings,
    } = admission::admit(rt, name, new, Some(old), params)?;
    new = admitted;
    let generation = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .filter(|_| rt.has_generation());
    {
        let meta = metadata_mut(&mut new)?;
        for field in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "namespace",
            "name",
            "generation",
        ] {
            match old.pointer(&format!("/metadata/{field}")) {
                Some(v) => meta.insert(field.into(), v.clone()),
                None => meta.remove(field),
            };
        }
    }
    if let Some(generation) = generation
        && generation_relevant(&new, rt) != generation_relevant(old, rt)
    {
        metadata_mut(&mut new)?.insert("generation".into(), json!(generation + 1));
    }
    admission::check_update(rt, name, old, &new)?;
    if let Manager::Update(manager) = manager {
        new = managed::on_update(Some(old), new, &manager, sub, rt)?;
    }
    let key = key_for(rt, target.namespace.as_deref(), name);
    let (outcome, answer) = if params.dry_run() {
        (Outcome::Answer, new.clone())
    } else if is_deleting(&new) && !has_finalizers(&new) {
        (Outcome::Remove, new.clone())
    } else if without_volatile(&new) == without_volatile(old) {
        (Outcome::Answer, old.clone())
    } else {
        (Outcome::Store, new.clone())
    };
    Ok(Prepared {
        key,
        object: new,
        answer,
        outcome,
        warnings,
    })
}

/// Commits a prepared replacement (the caller checked the stored object is still the one
/// it was prepared from). Always 200, with `warnings`.
pub(super) fn finish(
    state: &mut State,
    shared: &Shared,
    rt: &ResourceType,
    prepared: Prepared,
    warnings: Vec<String>,
) -> Result<Written> {
    let Prepared {
        key,
        object,
        answer,
        outcome,
        ..
    } = prepared;
    match outcome {
        Outcome::Answer => Ok(Written::served(200, &answer, rt, warnings)),
        Outcome::Remove => {
            let removed = remove(state, shared, rt, &key)?;
            Ok(Written::served(
                200,
                &removed.unwrap_or(object),
                rt,
                warnings,
            ))
        }
        Outcome::Store => {
            let stored = put(state, shared, rt, key, object)?;
            Ok(Written::served(200, &stored, rt, warnings))
        }
    }
}

/// Stores `object` at `key` and does what follows storing a written object: the registry
/// is refreshed after a CRD write, and the lifecycle controllers are woken when the stored
/// object concerns them. Returns the object as stored (with its new resourceVersion).
pub(super) fn put(
    state: &mut State,
    shared: &Shared,
    rt: &ResourceType,
    key: StoreKey,
    object: Value,
) -> Result<Value> {
    let stored = state.store.put(key, for_storage(object, rt))?;
    admission::after_write(state, rt);
    if lifecycle::concerns(&stored) {
        shared.wake_lifecycle();
    }
    Ok(stored)
}

/// Removes the object at `key` and does what follows a removal: the registry is refreshed
/// after a CRD removal, and the lifecycle controllers are woken (dependents may now be
/// garbage). Returns the removed object, if there was one.
pub(super) fn remove(
    state: &mut State,
    shared: &Shared,
    rt: &ResourceType,
    key: &StoreKey,
) -> Result<Option<Value>> {
    let removed = state.store.remove(key)?;
    admission::after_write(state, rt);
    shared.wake_lifecycle();
    Ok(removed)
}
