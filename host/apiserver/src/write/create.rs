//! Create: POST to a collection, and the insert that server-side apply of a missing object
//! shares with it.

use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::commit;
use super::request::{decode_object, field_manager};
use super::{Manager, Written};
use crate::admission::{self, Admitted};
use crate::authn::User;
use crate::managed;
use crate::objects::{key_for, meta_str, metadata_mut, name_error, new_uid, now};
use crate::route::{Params, Target};
use crate::server::{Shared, State};
use crate::status::{ApiError, Result};
use crate::store::StoreKey;
use crate::webhooks;

/// POST to a collection: creates the body's object, 201.
pub(crate) async fn create(
    shared: &Shared,
    target: &Target,
    params: &Params,
    headers: &HeaderMap,
    body: &[u8],
    user: &User,
) -> Result<Written> {
    let object = decode_object(body, target)?;
    insert(
        shared,
        target,
        params,
        object,
        Manager::Update(field_manager(params, headers)),
        user,
    )
    .await
}

/// Stores `object` as a new object of the target, 201.
///
/// The namespace comes from the URL. The mutating webhooks see the object as sent; then a
/// missing name comes from `generateName`, the name must be valid and free (409
/// otherwise), and the server sets uid, creationTimestamp and generation 1, drops
/// client-sent volatile metadata and, for kinds with a status subresource, the status. The
/// validating webhooks see that object; the name is checked free again before it is
/// stored. A dry run answers the object without storing it.
pub(super) async fn insert(
    shared: &Shared,
    target: &Target,
    params: &Params,
    mut object: Value,
    manager: Manager,
    user: &User,
) -> Result<Written> {
    let rt = &target.rt;
    let meta = metadata_mut(&mut object)?;
    if let Some(ns) = &target.namespace {
        meta.insert("namespace".into(), json!(ns));
    }
    // The options carry the fieldManager the request named (not the one derived from
    // its user agent), as kube-apiserver's do.
    let field_manager = params.get("fieldManager");
    let mut attrs = webhooks::Attributes {
        target,
        name: meta_str(&object, "name").unwrap_or_default().to_owned(),
        operation: webhooks::Operation::Create,
        old: None,
        dry_run: params.dry_run(),
        options: webhooks::options("CreateOptions", params.dry_run(), field_manager),
        user,
    };
    let (mutated, mut warnings) = webhooks::mutate(shared, &attrs, Some(object)).await?;
    let object = mutated.unwrap_or_else(|| json!({}));
    let (key, object, admitted) = prepare(shared, target, params, object, &manager)?;
    warnings.extend(admitted);
    attrs.name = meta_str(&object, "name").unwrap_or_default().to_owned();
    warnings.extend(webhooks::validate(shared, &attrs, Some(&object)).await?);
    let name = attrs.name;
    let mut state = shared.lock();
    crate::rbac::check_escalation(&state.store, user, &target.rt, &object)?;
    if rt.namespaced {
        let ns = target.namespace.as_deref().unwrap_or_default();
        admission::check_namespace(&state, rt, &name, ns)?;
    }
    if state.store.get(&key).is_some() {
        return Err(ApiError::already_exists(rt, &name));
    }
    if params.dry_run() {
        return Ok(Written::served(201, &object, rt, warnings));
    }
    let stored = commit::put(&mut state, shared, rt, key, object)?;
    drop(state);
    Ok(Written::served(201, &stored, rt, warnings))
}

/// The object a create stores, under the lock: its name, the server's admission and
/// metadata; with its key and admission's warnings.
fn prepare(
    shared: &Shared,
    target: &Target,
    params: &Params,
    mut object: Value,
    manager: &Manager,
) -> Result<(StoreKey, Value, Vec<String>)> {
    let rt = &target.rt;
    let mut state = shared.lock();
    let meta = metadata_mut(&mut object)?;
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
    if let Manager::Update(manager) = manager {
        object = managed::on_update(None, object, manager, None, rt)?;
    }
    Ok((key, object, warnings))
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
