//! What a plugin tells the host about itself ([`Description`]), and the request and
//! outcome of a pass.

use crate::object::KindRef;

/// A verb a plugin uses on a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    /// Writes to the status subresource.
    UpdateStatus,
}

impl Verb {
    /// The verb as RBAC and the WIT spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::UpdateStatus => "update-status",
        }
    }
}

/// The verbs a plugin uses on one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permission {
    pub kind: KindRef,
    pub verbs: Vec<Verb>,
}

/// How a change of a watched object maps back to primaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mapping {
    /// Through the object's controller owner reference.
    Owner,
    /// To every primary whose value of this field index includes the object's key.
    FieldIndex(String),
    /// To the primary of the object's namespace named by this label's value.
    Label(String),
}

/// A kind watched besides the primary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    pub kind: KindRef,
    pub mapping: Mapping,
}

/// A filter on changes of the primary; a change passes when any listed predicate holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predicate {
    GenerationChanged,
    LabelsChanged,
}

/// A field index over the primary kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldIndex {
    pub name: String,
    pub description: String,
}

/// What the host needs to run a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    pub name: String,
    pub version: String,
    pub field_manager: String,
    pub primary: KindRef,
    pub primary_predicates: Vec<Predicate>,
    pub watches: Vec<Watch>,
    pub indexes: Vec<FieldIndex>,
    pub permissions: Vec<Permission>,
}

/// The primary object of one pass.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Request {
    pub namespace: Option<String>,
    pub name: String,
}

impl Request {
    /// The primary as an object of `kind`.
    pub fn object(&self, kind: &crate::KindRef) -> crate::ObjectRef {
        crate::ObjectRef {
            api_version: kind.api_version.clone(),
            kind: kind.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }
}

/// How a successful pass ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Run again after this long; `None` waits for the next change.
    pub requeue_after: Option<std::time::Duration>,
}

impl Outcome {
    /// Wait for the next change.
    pub fn done() -> Self {
        Self {
            requeue_after: None,
        }
    }

    /// Run again after `after`.
    pub fn requeue(after: std::time::Duration) -> Self {
        Self {
            requeue_after: Some(after),
        }
    }
}
