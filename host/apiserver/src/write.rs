//! Writes: create, update, patch (merge, JSON, strategic, apply), delete and
//! deletecollection, on the main resource and the status subresource.
//!
//! Every write goes through [`commit`]: the server-owned metadata is kept, status is taken
//! only from status writes (for kinds with a status subresource), `generation` is bumped
//! only when the spec changes, managedFields are updated, and a write that changes nothing
//! is not stored (resourceVersion unchanged, no watch event).

use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::admission::{self, Admitted};
use crate::objects::{
    generation_relevant, has_finalizers, is_deleting, key_for, meta_str, metadata_mut, name_error,
    new_uid, now, served, without_volatile,
};
use crate::patch::{self, PatchKind};
use crate::registry::ResourceType;
use crate::route::{Params, Target};
use crate::server::{Shared, State};
use crate::status::{ApiError, Result};
use crate::{lifecycle, managed};

/// A successful write: status code, the object as served, warnings for the Warning header.
pub struct Written {
    pub code: u16,
    pub object: Value,
    pub warnings: Vec<String>,
}

/// The field manager of a request: `fieldManager`, else the user agent's program name.
pub fn field_manager(params: &Params, headers: &HeaderMap) -> String {
    if let Some(m) = params.get("fieldManager") {
        return m.to_owned();
    }
    let agent = headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("unknown");
    agent.split('/').next().unwrap_or("unknown").to_owned()
}

/// Decodes a request body (JSON, or YAML for apply).
pub fn decode(body: &[u8]) -> Result<Value> {
    if let Ok(v) = serde_json::from_slice(body) {
        return Ok(v);
    }
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("the request body is not UTF-8"))?;
    serde_yaml_ng::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding the request body: {e}")))
}

fn check_type(object: &Value, target: &Target) -> Result<()> {
    let rt = &target.rt;
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if api_version != rt.api_version() || kind != rt.kind {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            rt.api_version()
        ))
        .with_kind_message(kind, &rt.kind));
    }
    if let (Some(url_ns), Some(body_ns)) =
        (target.namespace.as_deref(), meta_str(object, "namespace"))
        && url_ns != body_ns
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}

impl ApiError {
    fn with_kind_message(self, kind: &str, expected: &str) -> Self {
        if self
            .message
            .contains("does not match the expected API version")
            && kind != expected
            && !kind.is_empty()
        {
            return ApiError::bad_request(format!(
                "the kind in the data ({kind}) does not match the expected kind ({expected})"
            ));
        }
        self
    }
}

/// POST to a collection.
pub fn create(
    shared: &Shared,
    target: &Target,
    params: &Params,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Written> {
    let object = decode(body)?;
    check_type(&object, target)?;
    insert(
        shared,
        target,
        params,
        object,
        Manager::Update(field_manager(params, headers)),
    )
}

/// Stores a new object.
fn insert(
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
    ] {
        meta.remove(volatile);
    }
    meta.insert("uid".into(), json!(new_uid()));
    meta.insert("creationTimestamp".into(), json!(now()));
    meta.insert("generation".into(), json!(1));
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
        return Ok(Written {
            code: 201,
            object: served(&object, rt),
            warnings,
        });
    }
    let stored = state.store.put(key, object)?;
    admission::after_write(&mut state, rt);
    drop(state);
    if lifecycle::concerns(&stored) {
        shared.wake_lifecycle();
    }
    Ok(Written {
        code: 201,
        object: served(&stored, rt),
        warnings,
    })
}

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

/// PUT of an object or its status.
pub fn update(
    shared: &Shared,
    target: &Target,
    name: &str,
    params: &Params,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Written> {
    let incoming = decode(body)?;
    check_type(&incoming, target)?;
    let rt = &target.rt;
    if let Some(body_name) = meta_str(&incoming, "name")
        && body_name != name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let mut state = shared.lock();
    let key = key_for(rt, target.namespace.as_deref(), name);
    let old = state
        .store
        .get(&key)
        .cloned()
        .ok_or_else(|| ApiError::not_found(rt, name))?;
    check_resource_version(rt, name, &incoming, &old)?;
    let manager = field_manager(params, headers);
    let new = merge_write(&old, incoming, target.subresource.as_deref());
    commit(
        &mut state,
        shared,
        target,
        name,
        &old,
        new,
        Manager::Update(manager),
        params,
    )
}

/// 409 when `request` names a resourceVersion other than the stored object's (optimistic
/// concurrency of update and patch).
fn check_resource_version(
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

/// PATCH of an object or its status.
pub fn patch(
    shared: &Shared,
    target: &Target,
    name: &str,
    params: &Params,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Written> {
    let rt = &target.rt;
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let kind = PatchKind::from_content_type(content_type, rt.schema.is_none())?;
    let body = decode(body)?;
    let manager = field_manager(params, headers);
    let mut state = shared.lock();
    let key = key_for(rt, target.namespace.as_deref(), name);
    let old = state.store.get(&key).cloned();
    let sub = target.subresource.as_deref();
    if kind == PatchKind::Apply {
        if params.get("fieldManager").is_none() {
            return Err(ApiError::bad_request(
                "PATCH, application/apply-patch+yaml requires fieldManager to be set",
            ));
        }
        check_type(&body, target)?;
        let force = params.flag("force");
        let Some(old) = old else {
            drop(state);
            return apply_create(shared, target, name, params, body, &manager, force);
        };
        let applied = managed::apply(Some(&old), &body, &manager, force, sub, rt, name)?;
        let new = merge_write(&old, applied, sub);
        return commit(
            &mut state,
            shared,
            target,
            name,
            &old,
            new,
            Manager::Applied,
            params,
        );
    }
    let old = old.ok_or_else(|| ApiError::not_found(rt, name))?;
    let served_old = served(&old, rt);
    let patched = match kind {
        PatchKind::Merge => patch::merge(&served_old, &body),
        PatchKind::Json => patch::json(&served_old, &body)?,
        PatchKind::Strategic => patch::strategic(&served_old, &body),
        PatchKind::Apply => unreachable!("handled above"),
    };
    check_resource_version(rt, name, &patched, &old)?;
    let new = merge_write(&old, patched, sub);
    commit(
        &mut state,
        shared,
        target,
        name,
        &old,
        new,
        Manager::Update(manager),
        params,
    )
}

/// Server-side apply of an object that does not exist yet: a create.
fn apply_create(
    shared: &Shared,
    target: &Target,
    name: &str,
    params: &Params,
    body: Value,
    manager: &str,
    force: bool,
) -> Result<Written> {
    let mut object = managed::apply(
        None,
        &body,
        manager,
        force,
        target.subresource.as_deref(),
        &target.rt,
        name,
    )?;
    metadata_mut(&mut object)?.insert("name".into(), json!(name));
    insert(shared, target, params, object, Manager::Applied)
}

/// `incoming` as a write of the main resource (`sub` = None) or of a subresource sees it:
/// a status write takes only status; a main write keeps the stored status.
fn merge_write(old: &Value, mut incoming: Value, sub: Option<&str>) -> Value {
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

/// Who a write's changed fields belong to.
enum Manager {
    /// A non-apply write by this manager.
    Update(String),
    /// A server-side apply whose managedFields are already computed.
    Applied,
}

/// Stores `new` in place of `old`, with the server's rules for metadata, status,
/// generation, managedFields, immutability and deletion.
#[allow(clippy::too_many_arguments)]
fn commit(
    state: &mut State,
    shared: &Shared,
    target: &Target,
    name: &str,
    old: &Value,
    mut new: Value,
    manager: Manager,
    params: &Params,
) -> Result<Written> {
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
    {
        let meta = metadata_mut(&mut new)?;
        for field in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "namespace",
            "name",
        ] {
            match old.pointer(&format!("/metadata/{field}")) {
                Some(v) => meta.insert(field.into(), v.clone()),
                None => meta.remove(field),
            };
        }
        let generation = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        meta.insert("generation".into(), json!(generation));
    }
    if generation_relevant(&new, rt) != generation_relevant(old, rt) {
        let generation = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        metadata_mut(&mut new)?.insert("generation".into(), json!(generation + 1));
    }
    admission::check_update(rt, name, old, &new)?;
    if let Manager::Update(manager) = manager {
        new = managed::on_update(Some(old), new, &manager, sub, rt)?;
    }
    let key = key_for(rt, target.namespace.as_deref(), name);
    if is_deleting(&new) && !has_finalizers(&new) {
        if params.dry_run() {
            return Ok(Written {
                code: 200,
                object: served(&new, rt),
                warnings,
            });
        }
        let removed = state.store.remove(&key)?;
        admission::after_write(state, rt);
        shared.wake_lifecycle();
        return Ok(Written {
            code: 200,
            object: served(&removed.unwrap_or(new), rt),
            warnings,
        });
    }
    if without_volatile(&new) == without_volatile(old) || params.dry_run() {
        let object = if params.dry_run() { new } else { old.clone() };
        return Ok(Written {
            code: 200,
            object: served(&object, rt),
            warnings,
        });
    }
    let stored = state.store.put(key, new)?;
    admission::after_write(state, rt);
    if lifecycle::concerns(&stored) {
        shared.wake_lifecycle();
    }
    Ok(Written {
        code: 200,
        object: served(&stored, rt),
        warnings,
    })
}

/// The propagation policy of a delete: the body's, else the query's, else Background.
fn propagation(params: &Params, options: &Value) -> &'static str {
    let policy = options
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .or(params.get("propagationPolicy"));
    match policy {
        Some("Foreground") => "Foreground",
        Some("Orphan") => "Orphan",
        _ => "Background",
    }
}

/// DELETE of one object.
pub fn delete(
    shared: &Shared,
    target: &Target,
    name: &str,
    params: &Params,
    body: &[u8],
) -> Result<Written> {
    let options = if body.is_empty() {
        json!({})
    } else {
        decode(body)?
    };
    let rt = &target.rt;
    let mut state = shared.lock();
    let key = key_for(rt, target.namespace.as_deref(), name);
    let old = state
        .store
        .get(&key)
        .cloned()
        .ok_or_else(|| ApiError::not_found(rt, name))?;
    for (field, label) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
        let Some(wanted) = options
            .pointer(&format!("/preconditions/{field}"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let actual = meta_str(&old, field).unwrap_or_default();
        if wanted != actual {
            return Err(ApiError::conflict(
                rt,
                name,
                &format!(
                    "Precondition failed: {label} in precondition: {wanted}, {label} in object meta: {actual}"
                ),
            ));
        }
    }
    let policy = propagation(params, &options);
    let pending_finalizer = match policy {
        "Foreground" => Some("foregroundDeletion"),
        "Orphan" => Some("orphan"),
        _ => None,
    };
    let is_namespace = rt.group.is_empty() && rt.plural == "namespaces";
    if has_finalizers(&old) || pending_finalizer.is_some() || is_namespace {
        let mut marked = old.clone();
        let meta = metadata_mut(&mut marked)?;
        if !is_deleting(&old) {
            meta.insert("deletionTimestamp".into(), json!(now()));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        }
        if let Some(f) = pending_finalizer {
            let finalizers = meta.entry("finalizers").or_insert_with(|| json!([]));
            if let Some(list) = finalizers.as_array_mut()
                && !list.iter().any(|x| x == f)
            {
                list.push(json!(f));
            }
        }
        if is_namespace {
            marked["status"] = json!({"phase": "Terminating"});
        }
        if params.dry_run() {
            return Ok(Written {
                code: 202,
                object: served(&marked, rt),
                warnings: vec![],
            });
        }
        let stored = if marked == old {
            old
        } else {
            state.store.put(key, marked)?
        };
        drop(state);
        shared.wake_lifecycle();
        return Ok(Written {
            code: 202,
            object: served(&stored, rt),
            warnings: vec![],
        });
    }
    if params.dry_run() {
        return Ok(Written {
            code: 200,
            object: served(&old, rt),
            warnings: vec![],
        });
    }
    let removed = state.store.remove(&key)?.unwrap_or(old);
    admission::after_write(&mut state, rt);
    drop(state);
    shared.wake_lifecycle();
    Ok(Written {
        code: 200,
        object: served(&removed, rt),
        warnings: vec![],
    })
}

/// DELETE of a collection: every object the selectors match.
pub fn delete_collection(
    shared: &Shared,
    target: &Target,
    params: &Params,
    body: &[u8],
) -> Result<Value> {
    let list = crate::read::list(shared, target, &Params::parse(None).with_selectors(params))?;
    let names: Vec<(Option<String>, String)> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| {
            Some((
                meta_str(o, "namespace").map(str::to_owned),
                meta_str(o, "name")?.to_owned(),
            ))
        })
        .collect();
    for (namespace, name) in names {
        let one = Target {
            namespace: namespace.or_else(|| target.namespace.clone()),
            ..target.clone()
        };
        match delete(shared, &one, &name, params, body) {
            Ok(_) | Err(ApiError { code: 404, .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}))
}

impl Params {
    /// Only the selectors of `other`.
    fn with_selectors(self, other: &Params) -> Params {
        let mut query = String::new();
        for key in ["labelSelector", "fieldSelector"] {
            if let Some(v) = other.get(key) {
                query.push_str(&format!(
                    "{key}={}&",
                    form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
                ));
            }
        }
        Params::parse(Some(&query))
    }
}
