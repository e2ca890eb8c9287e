//! Update: PUT of an object or of its status subresource.

use axum::http::HeaderMap;

use super::commit::{self, check_resource_version, merge_write};
use super::replace::{Next, replace};
use super::request::{decode_object, field_manager};
use super::{Manager, Written};
use crate::authn::User;
use crate::objects::meta_str;
use crate::route::{Params, Target};
use crate::server::Shared;
use crate::status::{ApiError, Result};

/// PUT of an object or its status: replaces the stored object `name` with the body (only
/// its status, for a status write) through [`replace`].
///
/// 400 when the body names another object, 404 when there is none, 409 when the body's
/// resourceVersion is not the stored one.
pub(crate) async fn update(
    shared: &Shared,
    target: &Target,
    name: &str,
    params: &Params,
    headers: &HeaderMap,
    body: &[u8],
    user: &User,
) -> Result<Written> {
    let incoming = decode_object(body, target)?;
    let rt = &target.rt;
    if let Some(body_name) = meta_str(&incoming, "name")
        && body_name != name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let manager = field_manager(params, headers);
    replace(shared, target, name, params, user, |state| {
        let old = commit::existing(state, target, name)?;
        check_resource_version(rt, name, &incoming, &old)?;
        let new = merge_write(&old, incoming.clone(), target.subresource.as_deref());
        Ok(Next::Replace {
            old,
            new,
            manager: Manager::Update(manager.clone()),
        })
    })
    .await
}
