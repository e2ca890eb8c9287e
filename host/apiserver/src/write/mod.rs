//! Writes: create, update, patch (merge, JSON, strategic, apply), delete and
//! deletecollection, on the main resource and the status subresource.
//!
//! Every write of an existing object goes through `commit::prepare` and `commit::finish`: the server-owned
//! metadata is kept, status is taken only from status writes (for kinds with a status
//! subresource), `generation` is bumped only when the spec changes, managedFields are
//! updated, and a write that changes nothing is not stored (resourceVersion unchanged, no
//! watch event).
//!
//! - `request`: the body of a write, decoded and checked against the URL; the field manager.
//! - `create`, `update`, `patch`, `apply`, `delete`: one verb each (`apply` is the
//!   server-side-apply kind of PATCH; `delete` includes deletecollection).
//! - `commit`: storing a changed object, shared by update, patch and apply.
//! - `replace`: update, patch and apply around their admission webhooks (no lock held
//!   while webhooks run; the commit re-checks the stored object).

mod apply;
mod commit;
mod create;
mod delete;
mod patch;
mod replace;
pub(crate) mod request;
mod update;

use serde_json::Value;

use crate::objects::served;
use crate::registry::ResourceType;

pub(crate) use create::create;
pub(crate) use delete::{delete, delete_collection};
pub(crate) use patch::patch;
pub(crate) use update::update;

/// A successful write: status code, the object as served, warnings for the Warning header.
pub(crate) struct Written {
    pub(crate) code: u16,
    pub(crate) object: Value,
    pub(crate) warnings: Vec<String>,
}

impl Written {
    /// `object` as clients of `rt` see it, answered with `code`.
    fn served(code: u16, object: &Value, rt: &ResourceType, warnings: Vec<String>) -> Self {
        Self {
            code,
            object: served(object, rt),
            warnings,
        }
    }
}

/// Who a write's changed fields belong to.
#[derive(Clone)]
enum Manager {
    /// A non-apply write by this manager: its managedFields entry is computed on store.
    Update(String),
    /// A server-side apply whose managedFields are already computed.
    Applied,
}
