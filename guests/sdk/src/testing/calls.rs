//! What the fake records: the verbs failures are injected on and refusals name ([`Op`]),
//! and every call the code under test made ([`Call`]).

use std::fmt;

use serde_json::Value;

use crate::cluster::{DeleteOptions, Event, ListOptions, Owner, Patch, ReadFrom};
use crate::object::ObjectRef;

/// A verb of [`Cluster`](crate::Cluster), as failures are injected
/// ([`FakeCluster::fail`](super::FakeCluster::fail)) and calls refused
/// ([`Refusal::Op`](super::Refusal::Op)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Any [`Cluster::get`](crate::Cluster::get), from the cache or the server.
    Get,
    /// A [`Cluster::get`](crate::Cluster::get) past the cache ([`ReadFrom::Server`]) only.
    GetServer,
    /// [`Cluster::list`](crate::Cluster::list); failures are keyed by the kind (e.g.
    /// `ConfigMap`), not a name.
    List,
    /// [`Cluster::apply`](crate::Cluster::apply).
    Apply,
    /// [`Cluster::create`](crate::Cluster::create).
    Create,
    /// [`Cluster::patch`](crate::Cluster::patch), merge or JSON.
    Patch,
    /// [`Cluster::delete`](crate::Cluster::delete).
    Delete,
    /// [`Cluster::update_status`](crate::Cluster::update_status).
    UpdateStatus,
    /// [`Cluster::record_event`](crate::Cluster::record_event); failures are keyed by the
    /// name of the object regarded.
    RecordEvent,
    /// [`Cluster::served`](crate::Cluster::served); failures are keyed by the kind's plural
    /// (e.g. `certificates`).
    Served,
}

/// One call the code under test made, in the order made, whether it succeeded or not.
///
/// [`Display`](fmt::Display) renders a call as one line, e.g. `create Secret ns/a`, which is
/// what [`FakeCluster::write_log`](super::FakeCluster::write_log) lists.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// A read of one object, and where it was served from.
    Get(ObjectRef, ReadFrom),
    /// A list: the kind's name, the namespace (`None`: all) and the options.
    List(String, Option<String>, ListOptions),
    /// A server-side apply of `body`; `wrote` is false when it changed nothing (or failed).
    Apply {
        object: ObjectRef,
        body: Value,
        owner: Option<Owner>,
        wrote: bool,
    },
    /// A create.
    Create(ObjectRef),
    /// A patch, with the patch sent.
    Patch(ObjectRef, Patch),
    /// A delete, with its propagation and preconditions.
    Delete(ObjectRef, DeleteOptions),
    /// A create on a subresource (e.g. a TokenRequest), with the body sent.
    CreateSubresource(ObjectRef, String, Value),
    /// A status update.
    UpdateStatus(ObjectRef),
    /// An event recorded about the object.
    Event(ObjectRef, Event),
}

impl Call {
    /// The object the call is about (`None` for a list).
    pub fn object(&self) -> Option<&ObjectRef> {
        match self {
            Self::Get(object, _)
            | Self::Apply { object, .. }
            | Self::Create(object)
            | Self::Patch(object, _)
            | Self::Delete(object, _)
            | Self::CreateSubresource(object, ..)
            | Self::UpdateStatus(object)
            | Self::Event(object, _) => Some(object),
            Self::List(..) => None,
        }
    }

    /// Whether the call writes to the cluster: an apply that changed something, a create,
    /// a patch, a delete or a status update (events do not count).
    pub fn is_write(&self) -> bool {
        match self {
            Self::Apply { wrote, .. } => *wrote,
            Self::Create(_)
            | Self::Patch(..)
            | Self::Delete(..)
            | Self::UpdateStatus(_)
            | Self::CreateSubresource(..) => true,
            Self::Get(..) | Self::List(..) | Self::Event(..) => false,
        }
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on = |f: &mut fmt::Formatter<'_>, verb: &str, r: &ObjectRef| {
            write!(f, "{verb} {} {}", r.kind, r.key())
        };
        match self {
            Self::Get(r, ReadFrom::Cache) => on(f, "get", r),
            Self::Get(r, ReadFrom::Server) => on(f, "get-server", r),
            Self::List(kind, Some(namespace), _) => write!(f, "list {kind} {namespace}"),
            Self::List(kind, None, _) => write!(f, "list {kind}"),
            Self::Apply { object, .. } => on(f, "apply", object),
            Self::Create(r) => on(f, "create", r),
            Self::Patch(r, _) => on(f, "patch", r),
            Self::Delete(r, _) => on(f, "delete", r),
            Self::CreateSubresource(r, subresource, _) => {
                write!(f, "create {} {} {subresource}", r.kind, r.key())
            }
            Self::UpdateStatus(r) => on(f, "update-status", r),
            Self::Event(r, event) => write!(f, "event {} {} {}", event.reason, r.kind, r.key()),
        }
    }
}
