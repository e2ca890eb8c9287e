//! Server-side apply: the `application/apply-patch+yaml` (or `+json`) kind of PATCH.

use serde_json::{Value, json};

use super::commit::merge_write;
use super::replace::{Next, replace};
use super::request::check_type;
use super::{Manager, Written};
use crate::authn::User;
use crate::managed;
use crate::objects::{as_written, key_for, metadata_mut};
use crate::route::{Params, Target};
use crate::server::Shared;
use crate::status::{ApiError, Result};

/// Applies the configuration `body` as `manager` (`force` from the query) to the object
/// `name`, or to its status for a status write.
///
/// 400 without a `fieldManager` query parameter or when `body` is not of the target's type;
/// 409 on conflicts with other managers unless forced. An existing object is stored through
/// [`replace`]; a missing one is created (201) from the applied configuration, except
/// through a subresource, which answers 404 as kube-apiserver does.
pub(super) async fn apply(
    shared: &Shared,
    target: &Target,
    name: &str,
    params: &Params,
    body: Value,
    manager: &str,
    user: &User,
) -> Result<Written> {
    if params.get("fieldManager").is_none() {
        return Err(ApiError::bad_request(
            "PATCH, application/apply-patch+yaml requires fieldManager to be set",
        ));
    }
    check_type(&body, target)?;
    let rt = &target.rt;
    let force = params.flag("force");
    let sub = target.subresource.as_deref();
    replace(shared, target, name, params, user, |state| {
        let old = state
            .store
            .get(&key_for(rt, target.namespace.as_deref(), name))
            .map(|o| as_written(o, rt));
        let applied = managed::apply(old.as_ref(), &body, manager, force, sub, rt, name)?;
        let Some(old) = old else {
            // A subresource never creates its object (kube-apiserver's status strategy does
            // not allow create on update): an actor's late status write to an object just
            // deleted must not bring it back.
            if sub.is_some() {
                return Err(ApiError::not_found(rt, name));
            }
            let mut object = applied;
            metadata_mut(&mut object)?.insert("name".into(), json!(name));
            return Ok(Next::Create {
                object,
                manager: Manager::Applied,
            });
        };
        let new = merge_write(&old, applied, sub);
        Ok(Next::Replace {
            old,
            new,
            manager: Manager::Applied,
        })
    })
    .await
}
