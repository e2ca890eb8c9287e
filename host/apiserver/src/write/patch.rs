//! Patch: PATCH of an object or its status, dispatched on the Content-Type to a merge,
//! JSON or strategic-merge patch here, or to server-side [`apply`].

use axum::http::HeaderMap;

use super::commit::{self, check_resource_version, merge_write};
use super::replace::{Next, replace};
use super::request::{decode, field_manager, patch_kind};
use super::{Manager, Written, apply};
use crate::authn::User;
use crate::objects::served;
use crate::patch::{self, PatchKind};
use crate::route::{Params, Target};
use crate::server::Shared;
use crate::status::Result;

/// PATCH of an object or its status.
///
/// Merge, JSON and strategic patches apply to the stored object `name` as served (404 when
/// there is none) and are stored through [`replace`]; a resourceVersion in the patched
/// object must be the stored one (409). Apply patches go to [`apply::apply`]. 415 for a
/// Content-Type that names no patch kind the resource accepts.
pub(crate) async fn patch(
    shared: &Shared,
    target: &Target,
    name: &str,
    params: &Params,
    headers: &HeaderMap,
    body: &[u8],
    user: &User,
) -> Result<Written> {
    let rt = &target.rt;
    let kind = patch_kind(headers, rt)?;
    let body = decode(body)?;
    let manager = field_manager(params, headers);
    if kind == PatchKind::Apply {
        return apply::apply(shared, target, name, params, body, &manager, user).await;
    }
    replace(shared, target, name, params, user, |state| {
        let old = commit::existing(state, target, name)?;
        let served_old = served(&old, rt);
        let patched = match kind {
            PatchKind::Merge => patch::merge(&served_old, &body),
            PatchKind::Json => patch::json(&served_old, &body)?,
            PatchKind::Strategic => patch::strategic(&served_old, &body),
            PatchKind::Apply => unreachable!("handled above"),
        };
        check_resource_version(rt, name, &patched, &old)?;
        let new = merge_write(&old, patched, target.subresource.as_deref());
        Ok(Next::Replace {
            old,
            new,
            manager: Manager::Update(manager.clone()),
        })
    })
    .await
}
