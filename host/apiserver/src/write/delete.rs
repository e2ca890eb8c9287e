//! Delete: DELETE of one object (preconditions, propagation policy, finalizers) and of a
//! collection.

use serde_json::{Value, json};

use super::Written;
use super::commit;
use super::replace::{ATTEMPTS, unchanged};
use super::request::decode;
use crate::authn::User;
use crate::objects::{
    for_storage, has_finalizers, is_deleting, key_for, meta_str, metadata_mut, now,
};
use crate::registry::ResourceType;
use crate::route::{Params, Target};
use crate::server::{Shared, State};
use crate::status::{ApiError, Result};
use crate::webhooks::{self, Attributes, Operation};

/// DELETE of one object; `body` is optional DeleteOptions (preconditions,
/// propagationPolicy).
///
/// 404 when there is no such object, 409 when a precondition fails. An object with
/// finalizers, a Foreground or Orphan delete (which adds the `foregroundDeletion` or
/// `orphan` finalizer) and a namespace (which turns Terminating) are only marked deleting:
/// 202, and the lifecycle controllers finish them. Anything else is removed at once: 200
/// with the object as it was. A dry run answers the same without storing anything. The
/// mutating and validating webhooks see the stored object as `oldObject`, without the
/// lock; the delete happens only if the object did not change meanwhile (else it is
/// admitted again).
pub(crate) async fn delete(
    shared: &Shared,
    target: &Target,
    name: &str,
    params: &Params,
    body: &[u8],
    user: &User,
) -> Result<Written> {
    let options = if body.is_empty() {
        json!({})
    } else {
        decode(body)?
    };
    let rt = &target.rt;
    let mut review_options = options.clone();
    review_options["kind"] = json!("DeleteOptions");
    review_options["apiVersion"] = json!("meta.k8s.io/v1");
    if params.dry_run() {
        review_options["dryRun"] = json!(["All"]);
    }
    for _ in 0..ATTEMPTS {
        let old = {
            let state = shared.lock();
            let old = commit::existing(&state, target, name)?;
            check_preconditions(rt, name, &options, &old)?;
            old
        };
        let attrs = Attributes {
            target,
            name: name.to_owned(),
            operation: Operation::Delete,
            old: Some(old.clone()),
            dry_run: params.dry_run(),
            options: review_options.clone(),
            user,
        };
        let (_, mut warnings) = webhooks::mutate(shared, &attrs, None).await?;
        warnings.extend(webhooks::validate(shared, &attrs, None).await?);
        let mut state = shared.lock();
        if !unchanged(&state, target, name, &old) {
            continue;
        }
        return remove_or_mark(
            &mut state, shared, target, name, params, &options, old, warnings,
        );
    }
    Err(ApiError::modified(rt, name))
}

/// The delete itself, under the lock, of the stored object `old` the webhooks admitted.
#[allow(clippy::too_many_arguments)]
fn remove_or_mark(
    state: &mut State,
    shared: &Shared,
    target: &Target,
    name: &str,
    params: &Params,
    options: &Value,
    old: Value,
    warnings: Vec<String>,
) -> Result<Written> {
    let rt = &target.rt;
    let key = key_for(rt, target.namespace.as_deref(), name);
    let policy = propagation(params, options);
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
            return Ok(Written::served(202, &marked, rt, warnings));
        }
        let stored = if marked == old {
            old
        } else {
            state.store.put(key, for_storage(marked, rt))?
        };
        shared.wake_lifecycle();
        return Ok(Written::served(202, &stored, rt, warnings));
    }
    if params.dry_run() {
        return Ok(Written::served(200, &old, rt, warnings));
    }
    let removed = commit::remove(state, shared, rt, &key)?.unwrap_or(old);
    Ok(Written::served(200, &removed, rt, warnings))
}

/// 409 unless the stored object `old` has the uid and resourceVersion the delete options'
/// `preconditions` name (each only when named).
fn check_preconditions(rt: &ResourceType, name: &str, options: &Value, old: &Value) -> Result<()> {
    for (field, label) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
        let Some(wanted) = options
            .pointer(&format!("/preconditions/{field}"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let actual = meta_str(old, field).unwrap_or_default();
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
    Ok(())
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

/// DELETE of a collection: [`delete`] (with the same options) of every object the query's
/// label and field selectors match, in the target's namespace or all of them. Objects that
/// are gone by the time they are deleted are skipped; the first other error is returned.
/// Answers a Success `Status`.
pub(crate) async fn delete_collection(
    shared: &Shared,
    target: &Target,
    params: &Params,
    body: &[u8],
    user: &User,
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
        match delete(shared, &one, &name, params, body, user).await {
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
