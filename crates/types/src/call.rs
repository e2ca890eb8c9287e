//! The shapes of the `cluster` interface's calls: where a read comes from, how a list is
//! narrowed, patch bodies, deletion propagation, owner references and events.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{Metadata, Resource};
use serde_json::Value;

use crate::error::MissingField;

/// The largest request body kube-apiserver takes (3 MiB): what the embedded API server
/// serves and the most object or patch text the host accepts from a guest.
pub const MAX_REQUEST_BODY: usize = 3 * 1024 * 1024;

/// Where a read is served from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFrom {
    /// The host's shared watch cache.
    Cache,
    /// The API server, past the cache.
    Server,
}

/// How a list is narrowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// A label selector in the API's text form.
    pub label_selector: Option<String>,
    /// `(index name, key)`: only objects whose value of the index includes the key.
    pub field_index: Option<(String, String)>,
}

/// A patch body.
#[derive(Debug, Clone, PartialEq)]
pub enum Patch {
    /// RFC 7386 JSON merge patch.
    Merge(Value),
    /// RFC 6902 JSON patch (an array of operations).
    Json(Value),
}

/// What happens to an object's dependents when it is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Propagation {
    /// Delete now; dependents are garbage-collected afterwards.
    #[default]
    Background,
    /// Dependents first.
    Foreground,
    /// Keep dependents.
    Orphan,
}

/// Conditions a delete must meet; the server refuses it with 409 otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Preconditions {
    /// The object must still have this uid.
    pub uid: Option<String>,
    /// The object must still be at this resourceVersion.
    pub resource_version: Option<String>,
}

impl Preconditions {
    /// Whether there is no condition at all.
    pub fn is_empty(&self) -> bool {
        self.uid.is_none() && self.resource_version.is_none()
    }
}

/// How an object is deleted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeleteOptions {
    pub propagation: Propagation,
    pub preconditions: Preconditions,
}

impl From<Propagation> for DeleteOptions {
    fn from(propagation: Propagation) -> Self {
        Self {
            propagation,
            preconditions: Preconditions::default(),
        }
    }
}

/// The controller owner of an applied object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
}

impl Owner {
    /// The owner reference for `owner`; an error when it has no name or uid yet.
    pub fn of<K: Resource + Metadata<Ty = ObjectMeta>>(owner: &K) -> Result<Self, MissingField> {
        let meta = owner.metadata();
        let what = || {
            format!(
                "{} {}",
                K::KIND,
                meta.name.as_deref().unwrap_or("<unnamed>")
            )
        };
        Ok(Self {
            api_version: K::API_VERSION.to_owned(),
            kind: K::KIND.to_owned(),
            name: meta.name.clone().ok_or_else(|| MissingField {
                what: what(),
                field: "metadata.name",
            })?,
            uid: meta.uid.clone().ok_or_else(|| MissingField {
                what: what(),
                field: "metadata.uid",
            })?,
        })
    }
}

/// The type of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Normal,
    Warning,
}

/// One occurrence of an event; the host aggregates repeats into a series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub event_type: EventType,
    /// CamelCase reason, e.g. `SecretTypeKept`.
    pub reason: String,
    /// What was done, e.g. `Reconcile`.
    pub action: String,
    /// Human-readable note.
    pub note: String,
}
