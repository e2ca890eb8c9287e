//! Create: POST to a collection, and the insert that server-side apply of a missing object
//! shares with it.

use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::commit;
use super::request::{decode_object, field_manager};
use super::{Manager, Written};
use crate::admission::{self, Admitted};
use crate::managed;
use crate::objects::{key_for, metadata_mut, name_error, new_uid, now};
use crate::route::{Params, Target};
use crate::server::{Shared, State};
use crate::status::{ApiError, Result};

/// POST to a collection: creates the body's object, 201.
pub(crate) fn create(
    shared: &Shared,
    target: &Target,
    params: &Params,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Written> {
    let object = decode_object(body, target)?;
    insert(
        shared,
        target,
        params,
        object,
        Manager::Update(field_manager(params, headers)),
    )
}

/// Stores `object` as a new object of the target, 201.
///
/// The namespace comes from the URL, a missing name from `generateName`; the name must be
/// valid and free (409 otherwise). The server sets uid, creationTimestamp and generation 1,
/// drops client-sent volatile metadata and, for kinds with a status subresource, the status.
/// A dry run answers the object without storing it.
pub(super) fn insert(
    shared: &Shared,
    target: &Target,
    params: &Params,
    mut object: Value,
    manager: Manager,
) -> Result<Written> {
    let rt = &target.rt;
    let meta = metadata_mut(&mut object)?;
    if let Some(ns) = &target.namespace {
        meta.insert("namespace".into(), json!(ns));
    }
    let mut state = shared.lock();
    if meta
        .get("name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        let Some(prefix) = meta
            .get("generateName")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Err(ApiError::invalid_field(
                rt,
                "",
                "metadata.name",
                "FieldValueRequired",
                "Required value: name or generateName is required",
            ));
        };
        meta.insert("name".into(), json!(generate_name(&state, target, &prefix)));
    }
    let name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if let Some(error) = name_error(&name) {
        return Err(ApiError::invalid_field(
            rt,
            &name,
            "metadata.name",
            "FieldValueInvalid",
            &error,
        ));
    }
    let Admitted {
        mut object,
        warnings,
    } = admission::admit(rt, &name, object, None, params)?;
    if rt.namespaced {
        let ns = target.namespace.as_deref().unwrap_or_default();
        admission::check_namespace(&state, rt, &name, ns)?;
    }
    let key = key_for(rt, target.namespace.as_deref(), &name);
    if state.store.get(&key).is_some() {
        return Err(ApiError::already_exists(rt, &name));
    }
    let meta = metadata_mut(&mut object)?;
    for volatile in [
        "uid",
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "generation",
    ] {
        meta.remove(volatile);
    }
    meta.insert("uid".into(), json!(new_uid()));
    meta.insert("creationTimestamp".into(), json!(now()));
    if rt.has_generation() {
        meta.insert("generation".into(), json!(1));
    }
    if rt.status
        && let Some(map) = object.as_object_mut()
    {
        map.remove("status");
    }
    admission::on_create(&mut state, rt, &mut object)?;
    if let Manager::Update(manager) = &manager {
        object = managed::on_update(None, object, manager, None, rt)?;
    }
    if params.dry_run() {
        return Ok(Written::served(201, &object, rt, warnings));
    }
    let stored = commit::put(&mut state, shared, rt, key, object)?;
    drop(state);
    Ok(Written::served(201, &stored, rt, warnings))
}

/// `prefix` plus five random characters, a name no object of the target has yet.
fn generate_name(state: &State, target: &Target, prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    loop {
        let suffix: String = (0..5)
            .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char)
            .collect();
        let name = format!("{prefix}{suffix}");
        if state
            .store
            .get(&key_for(&target.rt, target.namespace.as_deref(), &name))
            .is_none()
        {
            return name;
        }
    }
}
